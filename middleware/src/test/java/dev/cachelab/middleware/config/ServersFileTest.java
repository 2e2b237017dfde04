package dev.cachelab.middleware.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The servers file: what it accepts, and one message naming the file and line for the rest. */
class ServersFileTest {
  private static final Path FILE = Path.of("/etc/cachelab/servers");

  @Test
  void oneServerALineWithCommentsAndBlankLines() {
    String text = "# the memcached pods\n\n  a:11211  \r\nb:11211\n# c:11211\n";
    assertThat(ServersFile.parse(FILE, text).servers()).containsExactly("a:11211", "b:11211");
  }

  @Test
  void timeoutsAsNameEqualsValueLinesOverrideTheFlagsWhileInTheFile() throws Exception {
    String text = "a:11211\nbackend-timeout-ms = 250\n# eject-retry-ms=1\neject-retry-ms=1500\n";
    ServersFile.Contents contents = ServersFile.parse(FILE, text);
    assertThat(contents.servers()).containsExactly("a:11211");
    MiddlewareConfig config =
        ConfigParser.parse(
            new String[] {"-l", "127.0.0.1", "-p", "1", "-t", "1", "-s", "false", "-m", "a:1"});
    assertThat(contents.timeouts(config)).isEqualTo(new ServerTimeouts(250, 1500));
    ServersFile.Contents none = ServersFile.parse(FILE, "a:11211\n");
    assertThat(none.timeouts(config))
        .isEqualTo(new ServerTimeouts(config.backendTimeoutMs(), config.ejectRetryMs()));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "a:1 b:2|line 1: a:1 b:2 (expected: one host:port a line)",
        "a:1\\nb|line 2: b (expected: host:port with port 1..65535)",
        "a:0|line 1: a:0 (expected: host:port with port 1..65535)",
        "a:1\\na:1|line 2: a:1 given twice (expected: each server once)",
        "a:1\\nA:01|line 2: A:01 is a:1 again, given twice (expected: each server once)",
        "# none\\n|: 0 servers (expected: 1..64, one host:port a line)",
        "a:1\\nbackend-timeout-ms=0|line 2: backend-timeout-ms=0"
            + " (expected: backend-timeout-ms=1..600000)",
        "a:1\\nbackend-timeout-ms=1s|line 2: backend-timeout-ms=1s"
            + " (expected: backend-timeout-ms=1..600000)",
        "a:1\\neject-retry-ms=3600001|line 2: eject-retry-ms=3600001"
            + " (expected: eject-retry-ms=1..3600000)",
        "a:1\\neject-retry-ms=5\\neject-retry-ms=6|line 3: eject-retry-ms given twice"
            + " (expected: each setting once)",
        "a:1\\ntimeout=5|line 2: timeout=5"
            + " (expected: host:port, backend-timeout-ms=<ms> or eject-retry-ms=<ms>)",
      })
  void aBadFileIsNamedWithItsLine(String text, String message) {
    assertThatThrownBy(() -> ServersFile.parse(FILE, text.replace("\\n", "\n")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("--servers-file: " + FILE + (message.startsWith(":") ? "" : " ") + message);
  }

  @Test
  void moreThanSixtyFourServersAreRefused() {
    StringBuilder text = new StringBuilder();
    for (int i = 1; i <= 65; i++) {
      text.append("h:").append(i).append('\n');
    }
    assertThatThrownBy(() -> ServersFile.parse(FILE, text.toString()))
        .hasMessageContaining("65 servers (expected: 1..64");
  }

  @Test
  void theFlagReadsTheFileInsteadOfDashM(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("servers");
    Files.writeString(file, "127.0.0.1:11211\n127.0.0.1:11212\n");
    String[] base = {"-l", "127.0.0.1", "-p", "1", "-t", "1", "-s", "false"};
    MiddlewareConfig config = ConfigParser.parse(with(base, "--servers-file", file.toString()));
    assertThat(config.servers()).containsExactly("127.0.0.1:11211", "127.0.0.1:11212");
    assertThat(config.serversFile()).isEqualTo(file);
    assertThatThrownBy(() -> ConfigParser.parse(base)).hasMessageStartingWith("-m: missing");
    assertThatThrownBy(
            () ->
                ConfigParser.parse(
                    with(base, "--servers-file", file.toString(), "-m", "127.0.0.1:1")))
        .hasMessage("-m, --servers-file: both given (expected: one of them)");
    assertThatThrownBy(
            () -> ConfigParser.parse(with(base, "--servers-file", dir.resolve("no").toString())))
        .hasMessageStartingWith("--servers-file: " + dir.resolve("no") + ": cannot read it");
  }

  private static String[] with(String[] base, String... more) {
    List<String> args = new java.util.ArrayList<>(List.of(base));
    args.addAll(List.of(more));
    return args.toArray(new String[0]);
  }
}
