package dev.cachelab.middleware.testing;

import dev.cachelab.middleware.protocol.RespReplies;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal blocking RESP2 client for tests: sends commands as multibulk arrays (or raw bytes) and
 * reads one reply, returned as its raw wire text ({@code "$5\r\nhello\r\n"}). ISO-8859-1, so any
 * byte round-trips.
 */
public final class RespClient implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  public RespClient(int port) throws IOException {
    socket = new Socket();
    socket.setTcpNoDelay(true);
    socket.setSoTimeout(10_000);
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /** Sends {@code parts} as one command and reads its reply. */
  public String call(String... parts) throws IOException {
    out.write(RespReplies.command(parts));
    out.flush();
    return readReply();
  }

  public void send(byte[] raw) throws IOException {
    out.write(raw);
    out.flush();
  }

  public void send(String raw) throws IOException {
    send(raw.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** Reads one whole reply (arrays with their elements). */
  public String readReply() throws IOException {
    StringBuilder reply = new StringBuilder();
    readValue(reply);
    return reply.toString();
  }

  private void readValue(StringBuilder reply) throws IOException {
    String line = readLine();
    reply.append(line);
    char type = line.charAt(0);
    if (type == '$' || type == '*') {
      int n = Integer.parseInt(line.substring(1, line.length() - 2));
      if (type == '$' && n >= 0) {
        reply.append(new String(in.readNBytes(n + 2), StandardCharsets.ISO_8859_1));
      }
      for (int i = 0; type == '*' && i < n; i++) {
        readValue(reply);
      }
    }
  }

  private String readLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int previous = -1;
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("connection closed after " + line);
      }
      line.write(b);
      if (previous == '\r' && b == '\n') {
        return line.toString(StandardCharsets.ISO_8859_1);
      }
      previous = b;
    }
  }

  /** Whether the server closed the connection (reads EOF within the socket timeout). */
  public boolean closedByPeer() throws IOException {
    try {
      return in.read() < 0;
    } catch (java.net.SocketException e) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
