package dev.cachelab.loadgen.it;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real memcached or redis-server on a free loopback port, for integration tests. Always {@link
 * #close()} it (try-with-resources or an after-each hook).
 */
final class ServerProcess implements AutoCloseable {
  private final Process process;
  final int port;

  private ServerProcess(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    }
  }

  static ServerProcess memcached() throws IOException, InterruptedException {
    return start(
        port -> {
          List<String> cmd =
              new java.util.ArrayList<>(
                  List.of(
                      "memcached",
                      "-l",
                      "127.0.0.1",
                      "-p",
                      "" + port,
                      "-U",
                      "0",
                      "-t",
                      "2",
                      "-m",
                      "64"));
          if ("root".equals(System.getProperty("user.name"))) {
            cmd.addAll(List.of("-u", "root"));
          }
          return cmd;
        });
  }

  static ServerProcess redis() throws IOException, InterruptedException {
    return start(
        port ->
            List.of(
                "redis-server",
                "--port",
                "" + port,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                "--daemonize",
                "no"));
  }

  private static ServerProcess start(java.util.function.IntFunction<List<String>> command)
      throws IOException, InterruptedException {
    IOException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int port = freePort();
      Process p =
          new ProcessBuilder(command.apply(port))
              .redirectErrorStream(true)
              .redirectOutput(new File("/dev/null"))
              .start();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (System.nanoTime() < deadline && p.isAlive()) {
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress("127.0.0.1", port), 200);
          return new ServerProcess(p, port);
        } catch (IOException e) {
          last = e;
          Thread.sleep(50);
        }
      }
      p.destroyForcibly().waitFor();
    }
    throw new IOException("server did not start: " + command.apply(0), last);
  }

  /** memcached {@code stats}: name to value. */
  Map<String, Long> memcachedStats() throws IOException {
    Map<String, Long> out = new HashMap<>();
    for (String line : request("stats\r\n", "END")) {
      String[] parts = line.split(" ");
      if (parts.length == 3 && parts[0].equals("STAT") && parts[2].matches("\\d+")) {
        out.put(parts[1], Long.parseLong(parts[2]));
      }
    }
    return out;
  }

  /**
   * redis {@code INFO}: plain fields ({@code keyspace_hits}) and command calls ({@code
   * cmdstat_get.calls}).
   */
  Map<String, Long> redisInfo() throws IOException {
    Map<String, Long> out = new HashMap<>();
    for (String line : request("INFO all\r\n", null)) {
      int colon = line.indexOf(':');
      if (colon < 0) {
        continue;
      }
      String name = line.substring(0, colon);
      String value = line.substring(colon + 1);
      if (name.startsWith("cmdstat_")) {
        for (String kv : value.split(",")) {
          String[] p = kv.split("=");
          if (p[0].equals("calls")) {
            out.put(name + ".calls", Long.parseLong(p[1]));
          }
        }
      } else if (value.matches("\\d+")) {
        out.put(name, Long.parseLong(value));
      }
    }
    return out;
  }

  private List<String> request(String command, String endLine) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      OutputStream out = s.getOutputStream();
      out.write(command.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      List<String> lines = new java.util.ArrayList<>();
      if (endLine == null) {
        String header = in.readLine(); // $<length>
        int length = Integer.parseInt(header.substring(1));
        char[] body = new char[length];
        int read = 0;
        while (read < length) {
          int n = in.read(body, read, length - read);
          if (n < 0) {
            break;
          }
          read += n;
        }
        for (String line : new String(body, 0, read).split("\r\n")) {
          lines.add(line);
        }
        return lines;
      }
      for (String line = in.readLine();
          line != null && !line.equals(endLine);
          line = in.readLine()) {
        lines.add(line);
      }
      return lines;
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
