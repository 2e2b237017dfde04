package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * libmemcached's conformance tester, {@code memccapable -a} (Debian package libmemcached-tools,
 * installed by {@code make deps}), against the middleware with one and with three servers, and with
 * three servers served by two event loops: all 27 ascii tests pass, as against memcached itself.
 */
class MemccapableIT {
  private static final Path MEMCCAPABLE = Path.of("/usr/bin/memccapable");

  @ParameterizedTest(name = "{0} servers, --event-loops {1}")
  @CsvSource({"1, 0", "3, 0", "3, 2"})
  void allAsciiTestsPass(int serverCount, int eventLoops) throws Exception {
    assertThat(Files.isExecutable(MEMCCAPABLE)).as(MEMCCAPABLE + " (run `make deps`)").isTrue();
    List<MemcachedProcess> servers = MemcachedProcess.startMany(serverCount);
    try (RunningMiddleware mw =
        RunningMiddleware.start(
            servers,
            "-t",
            "4",
            "--event-loops",
            "" + eventLoops,
            "--admin-commands", // memccapable tests flush_all
            "true")) {
      Process memccapable =
          new ProcessBuilder(
                  MEMCCAPABLE.toString(), "-a", "-t", "5", "-h", "127.0.0.1", "-p", "" + mw.port())
              .redirectErrorStream(true)
              .start();
      boolean exited = memccapable.waitFor(120, TimeUnit.SECONDS);
      if (!exited) {
        memccapable.destroyForcibly();
      }
      String output =
          new String(memccapable.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(exited).as(output).isTrue();
      assertThat(output).contains("All tests passed").doesNotContain("[FAIL]");
      assertThat(memccapable.exitValue()).as(output).isZero();
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }
}
