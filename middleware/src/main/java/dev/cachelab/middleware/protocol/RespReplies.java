package dev.cachelab.middleware.protocol;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Encodes the RESP2 replies the middleware writes itself (redis {@code RESP protocol spec}): simple
 * strings, errors, integers, bulk strings, and the {@code INFO} reply built from the middleware's
 * statistics. Stateless; any thread. Constants are shared and must not be modified.
 */
public final class RespReplies {
  private RespReplies() {}

  public static final byte[] OK = simple("OK");
  public static final byte[] PONG = simple("PONG");
  public static final byte[] NIL = ascii("$-1\r\n");

  /** RESP3's null. */
  public static final byte[] NULL = ascii("_\r\n");

  /** {@code +text\r\n}. */
  public static byte[] simple(String text) {
    return ascii("+" + text + "\r\n");
  }

  /** {@code -ERR text\r\n}; CR and LF in {@code text} become spaces, so framing holds. */
  public static byte[] error(String text) {
    return ascii("-ERR " + text.replace('\r', ' ').replace('\n', ' ') + "\r\n");
  }

  /** {@code -CODE text\r\n} ({@code NOPROTO}, ...); CR and LF in {@code text} become spaces. */
  public static byte[] error(String code, String text) {
    return ascii("-" + code + " " + text.replace('\r', ' ').replace('\n', ' ') + "\r\n");
  }

  /** The redis version {@code HELLO} reports: the commands the middleware forwards are 7.0's. */
  public static final String HELLO_VERSION = "7.0.0";

  /**
   * redis 7's {@code HELLO} reply: server, version, proto, id, mode, role and modules, as a flat
   * array of pairs under RESP2 and as a map under RESP3.
   */
  public static byte[] hello(int protocolVersion, long clientId) {
    StringBuilder reply = new StringBuilder(protocolVersion == 3 ? "%7\r\n" : "*14\r\n");
    bulkText(reply, "server");
    bulkText(reply, "redis");
    bulkText(reply, "version");
    bulkText(reply, HELLO_VERSION);
    bulkText(reply, "proto").append(':').append(protocolVersion).append("\r\n");
    bulkText(reply, "id").append(':').append(clientId).append("\r\n");
    bulkText(reply, "mode");
    bulkText(reply, "standalone");
    bulkText(reply, "role");
    bulkText(reply, "master");
    bulkText(reply, "modules").append("*0\r\n");
    return ascii(reply.toString());
  }

  private static StringBuilder bulkText(StringBuilder out, String text) {
    return out.append('$').append(text.length()).append("\r\n").append(text).append("\r\n");
  }

  /** {@code :value\r\n}. */
  public static byte[] integer(long value) {
    return ascii(":" + value + "\r\n");
  }

  /** {@code $length\r\n<bytes>\r\n}. */
  public static byte[] bulk(byte[] bytes, int from, int length) {
    byte[] header = ascii("$" + length + "\r\n");
    byte[] reply = new byte[header.length + length + 2];
    System.arraycopy(header, 0, reply, 0, header.length);
    System.arraycopy(bytes, from, reply, header.length, length);
    reply[reply.length - 2] = '\r';
    reply[reply.length - 1] = '\n';
    return reply;
  }

  /**
   * The {@code INFO} reply: a bulk string of {@code # Section} headers and {@code field:value}
   * lines, built from the memcached-style {@code STAT name value} lines of the middleware's
   * statistics (what {@code stats} answers in memcached mode).
   */
  public static byte[] info(byte[] statsLines) {
    String text = new String(statsLines, StandardCharsets.ISO_8859_1);
    StringBuilder info = new StringBuilder("# Server\r\nredis_mode:proxy\r\n");
    info.append("proxy:cachelab-middleware\r\n\r\n# Middleware\r\n");
    for (String line : text.split("\r\n")) {
      if (line.startsWith("STAT ")) {
        int space = line.indexOf(' ', 5);
        if (space > 5) {
          info.append(line, 5, space).append(':').append(line.substring(space + 1)).append("\r\n");
        }
      }
    }
    byte[] body = info.toString().getBytes(StandardCharsets.ISO_8859_1);
    return bulk(body, 0, body.length);
  }

  /** {@code *n\r\n} followed by each part as a bulk string (tests and diagnostics). Allocates. */
  public static byte[] command(String... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(ascii("*" + parts.length + "\r\n"));
    for (String part : parts) {
      byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
      out.writeBytes(bulk(bytes, 0, bytes.length));
    }
    return out.toByteArray();
  }

  /** Writes {@code value} (>= 0) in decimal at {@code out[at]}; returns the end offset. */
  public static int writeDecimal(long value, byte[] out, int at) {
    int digits = 1;
    for (long v = value; v >= 10; v /= 10) {
      digits++;
    }
    long v = value;
    for (int i = at + digits - 1; i >= at; i--) {
      out[i] = (byte) ('0' + v % 10);
      v /= 10;
    }
    return at + digits;
  }

  private static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }
}
