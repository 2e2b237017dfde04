package dev.cachelab.loadgen.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.loadgen.Main;
import dev.cachelab.loadgen.it.LoadgenRunner.Outcome;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Unreachable servers, servers that hang up, servers that answer nonsense: clear failures. */
class FailureIT {
  @TempDir Path dir;

  /**
   * A fake memcached on a free port: answers {@code goodReplies} requests properly (each read is
   * treated as one get), then sends {@code badReply} (or closes the connection if null).
   */
  static final class FakeServer implements AutoCloseable {
    final ServerSocket socket;
    final Thread thread;

    FakeServer(int goodReplies, String badReply) throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      thread =
          new Thread(
              () -> {
                try (Socket s = socket.accept()) {
                  InputStream in = s.getInputStream();
                  OutputStream out = s.getOutputStream();
                  byte[] buffer = new byte[4096];
                  for (int i = 0; i < goodReplies; i++) {
                    if (in.read(buffer) < 0) {
                      return;
                    }
                    out.write("END\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                  }
                  if (in.read(buffer) < 0) {
                    return;
                  }
                  if (badReply != null) {
                    out.write(badReply.getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    in.read(buffer);
                  }
                } catch (IOException ignored) {
                  // the client went away
                }
              },
              "fake-server");
      thread.setDaemon(true);
      thread.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    @Override
    public void close() throws Exception {
      socket.close();
      thread.join(5000);
    }
  }

  private static String[] args(int port, String... extra) {
    String[] base = {
      "-s",
      "127.0.0.1",
      "-p",
      "" + port,
      "-P",
      "memcache_text",
      "-t",
      "1",
      "-c",
      "1",
      "--quiet",
      "--ratio=0:1",
      "--key-maximum=9"
    };
    return LoadgenRunner.concat(base, extra);
  }

  @Test
  void unreachableServerFailsClearlyAndStillWritesTheJson() throws Exception {
    int port = ServerProcess.freePort();
    Outcome run = LoadgenRunner.run(dir, args(port, "-n", "10"));
    assertThat(run.exitCode()).isEqualTo(Main.EXIT_FAILED);
    assertThat(run.err())
        .contains("error: cannot connect to 127.0.0.1:" + port + " (client 0): Connection refused");
    assertThat(run.all().at("/Runtime/Interrupted").asText()).isEqualTo("true");
    assertThat(run.count("Totals")).isZero();
  }

  @Test
  void serverClosingTheConnectionIsReportedWithWhatWasMeasured() throws Exception {
    try (FakeServer server = new FakeServer(5, null)) {
      Outcome run = LoadgenRunner.run(dir, args(server.port(), "-n", "100"));
      assertThat(run.exitCode()).isEqualTo(Main.EXIT_FAILED);
      assertThat(run.err())
          .contains(
              "error: 127.0.0.1:"
                  + server.port()
                  + " (client 0): server closed the connection with 1 requests outstanding");
      assertThat(run.count("Gets")).isEqualTo(5);
      assertThat(run.all().at("/Runtime/Interrupted").asText()).isEqualTo("true");
    }
  }

  @Test
  void malformedReplyIsQuoted() throws Exception {
    try (FakeServer server = new FakeServer(3, "HIPPO\r\n")) {
      Outcome run = LoadgenRunner.run(dir, args(server.port(), "-n", "100"));
      assertThat(run.exitCode()).isEqualTo(Main.EXIT_FAILED);
      assertThat(run.err())
          .contains(
              "error: malformed reply from 127.0.0.1:"
                  + server.port()
                  + " (client 0): unexpected reply to a get: 'HIPPO\\r\\n'");
      assertThat(run.count("Gets")).isEqualTo(3);
    }
  }

  @Test
  void invalidOptionsExitWithUsageStatus() throws Exception {
    Outcome run = LoadgenRunner.run(dir, "--ratio=0:0");
    assertThat(run.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(run.err()).contains("error: --ratio: at least one of SET and GET must be > 0");
    assertThat(run.json()).isNull();
    Outcome unknown = LoadgenRunner.run(dir, "--cluster-mode");
    assertThat(unknown.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(unknown.err()).contains("memtier option '--cluster-mode' is not supported");
  }

  @Test
  void unwritableJsonFileFailsBeforeTheRun() throws Exception {
    try (FakeServer server = new FakeServer(1_000, null)) {
      // A server that answers: had the run started, it would have printed its summary.
      String[] all = args(server.port(), "-n", "10", "--json-out-file=/proc/nope/run.json");
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int code =
          Main.run(
              all,
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(err, true, StandardCharsets.UTF_8));
      assertThat(code).isEqualTo(Main.EXIT_USAGE);
      assertThat(err.toString(StandardCharsets.UTF_8))
          .startsWith(
              "error: --json-out-file: /proc/nope/run.json (cannot write in /proc/nope: cannot"
                  + " create /proc/nope)\n");
      assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }
  }
}
