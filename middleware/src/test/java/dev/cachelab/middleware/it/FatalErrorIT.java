package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.FatalErrors;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.MiddlewareCommand;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fatal error ends the process with a non-zero status and one clear line: here a real {@link
 * OutOfMemoryError} in the net thread, provoked by a buffer budget set larger than a small heap and
 * clients holding partial 1 MB requests.
 */
class FatalErrorIT {
  private static final Pattern LISTENING =
      Pattern.compile("cachelab middleware listening on 127\\.0\\.0\\.1:(\\d+)");

  @Test
  void outOfMemoryInTheNetThreadExitsWithStatus70(@TempDir Path dir) throws Exception {
    Path stderr = dir.resolve("stderr.txt");
    try (MemcachedProcess server = MemcachedProcess.start()) {
      List<String> command =
          MiddlewareCommand.inOwnJvm(
              List.of("-Xmx48m", "-XX:+UseSerialGC"),
              MiddlewareCommand.flagsOnLoopback(
                  1, "--buffer-budget-bytes", "" + (1L << 30), "-m", server.address()));
      Process mw = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
      List<Socket> clients = new ArrayList<>();
      try {
        BufferedReader out =
            new BufferedReader(new InputStreamReader(mw.getInputStream(), StandardCharsets.UTF_8));
        Matcher m = LISTENING.matcher(String.valueOf(out.readLine()));
        assertThat(m.matches()).isTrue();
        int port = Integer.parseInt(m.group(1));
        byte[] partial = new byte[700_000];
        Arrays.fill(partial, (byte) 'x');
        for (int i = 0; i < 200 && mw.isAlive(); i++) {
          clients.add(hold(port, "set k" + i + " 0 0 1000000\r\n", partial));
        }
        assertThat(mw.waitFor(60, TimeUnit.SECONDS)).as("process exits").isTrue();
        assertThat(mw.exitValue()).isEqualTo(FatalErrors.EXIT_STATUS);
      } finally {
        mw.destroyForcibly();
        for (Socket s : clients) {
          s.close();
        }
      }
    }
    String log = Files.readString(stderr);
    assertThat(log).contains("cachelab middleware: fatal error in thread ");
    assertThat(log).contains("OutOfMemoryError");
  }

  private static Socket hold(int port, String head, byte[] body) throws IOException {
    Socket s = new Socket();
    try {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      OutputStream out = s.getOutputStream();
      out.write(head.getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
    } catch (IOException e) {
      // the process may be gone already
    }
    return s;
  }
}
