package dev.cachelab.middleware.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal blocking memcached text client for tests: sends raw commands and reads one reply,
 * knowing from the command where the reply ends. Text is ISO-8859-1, so any byte round-trips.
 */
public final class TextClient implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  public TextClient(int port) throws IOException {
    socket = new Socket();
    socket.setTcpNoDelay(true);
    socket.setSoTimeout(10_000);
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /** How long a read may block before it fails (SocketTimeoutException). */
  public void setTimeoutMillis(int millis) throws IOException {
    socket.setSoTimeout(millis);
  }

  public static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }

  public void send(String raw) throws IOException {
    out.write(bytes(raw));
    out.flush();
  }

  /** Sends {@code command} and reads its reply (none for noreply commands). */
  public String call(String command) throws IOException {
    send(command);
    return readReply(command);
  }

  /** Reads the reply to {@code command}. */
  public String readReply(String command) throws IOException {
    String line = command.split("\r?\n", 2)[0];
    String verb = line.split(" ", 2)[0];
    if (line.endsWith(" noreply")) {
      return "";
    }
    boolean multiLine =
        switch (verb) {
          case "get", "gets", "gat", "gats", "stats" -> true;
          default -> false;
        };
    return multiLine ? readUntilEnd() : readLine();
  }

  /** Reads one {@code \r\n}-terminated line, terminator included. */
  public String readLine() throws IOException {
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

  /** Reads VALUE blocks (or STAT lines) up to END, or a single error line. */
  public String readUntilEnd() throws IOException {
    StringBuilder reply = new StringBuilder();
    while (true) {
      String line = readLine();
      reply.append(line);
      if (line.equals("END\r\n") || line.contains("ERROR")) {
        return reply.toString();
      }
      if (line.startsWith("VALUE ")) {
        String[] parts = line.trim().split(" ");
        int length = Integer.parseInt(parts[3]);
        byte[] data = in.readNBytes(length + 2);
        reply.append(new String(data, StandardCharsets.ISO_8859_1));
      }
    }
  }

  /** Reads exactly {@code count} bytes. */
  public byte[] readBytes(int count) throws IOException {
    byte[] data = in.readNBytes(count);
    if (data.length < count) {
      throw new IOException("connection closed after " + data.length + " of " + count + " bytes");
    }
    return data;
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
