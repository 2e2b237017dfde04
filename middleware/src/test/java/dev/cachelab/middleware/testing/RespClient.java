package dev.cachelab.middleware.testing;

import dev.cachelab.middleware.protocol.RespReplies;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A minimal blocking RESP2 client for tests: sends commands as multibulk arrays (or raw bytes) and
 * reads one reply, returned as its raw wire text ({@code "$5\r\nhello\r\n"}). ISO-8859-1, so any
 * byte round-trips. The socket and line reading are {@link TextClient}'s.
 */
public final class RespClient implements AutoCloseable {
  private final TextClient connection;

  public RespClient(int port) throws IOException {
    connection = new TextClient(port);
  }

  /** How long a read may block before it fails (SocketTimeoutException). */
  public void setTimeoutMillis(int millis) throws IOException {
    connection.setTimeoutMillis(millis);
  }

  /** Sends {@code parts} as one command and reads its reply. */
  public String call(String... parts) throws IOException {
    send(RespReplies.command(parts));
    return readReply();
  }

  public void send(byte[] raw) throws IOException {
    send(new String(raw, StandardCharsets.ISO_8859_1));
  }

  public void send(String raw) throws IOException {
    connection.send(raw);
  }

  /** Reads one whole reply (arrays, and RESP3 sets and maps, with their elements). */
  public String readReply() throws IOException {
    StringBuilder reply = new StringBuilder();
    readValue(reply);
    return reply.toString();
  }

  private void readValue(StringBuilder reply) throws IOException {
    String line = connection.readLine();
    reply.append(line);
    char type = line.charAt(0);
    if (type == '$' || type == '*' || type == '~' || type == '%') {
      int n = Integer.parseInt(line.substring(1, line.length() - 2));
      if (type == '$' && n >= 0) {
        reply.append(new String(connection.readBytes(n + 2), StandardCharsets.ISO_8859_1));
      }
      int elements = type == '%' ? 2 * n : type == '$' ? 0 : n; // a RESP3 map: keys and values
      for (int i = 0; i < elements; i++) {
        readValue(reply);
      }
    }
  }

  /** Whether the server closed the connection (reads EOF within the socket timeout). */
  public boolean closedByPeer() throws IOException {
    return connection.closedByPeer();
  }

  @Override
  public void close() throws IOException {
    connection.close();
  }
}
