package dev.cachelab.middleware.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MachineChecksTest {
  private static MiddlewareConfig config(String... more) {
    List<String> args =
        new ArrayList<>(
            List.of("-l", "127.0.0.1", "-p", "0", "-t", "1", "-s", "false", "-m", "127.0.0.1:1"));
    args.addAll(List.of(more));
    return ConfigParser.parse(args.toArray(new String[0]));
  }

  private static MiddlewareConfig listeningOn(String address) {
    return ConfigParser.parse(
        new String[] {"-l", address, "-p", "0", "-t", "1", "-s", "false", "-m", "127.0.0.1:1"});
  }

  @Test
  void acceptsTheWildcardLoopbackAndLocalhost() {
    for (String address : List.of("0.0.0.0", "127.0.0.1", "127.0.0.2", "localhost")) {
      assertThatCode(() -> MachineChecks.check(listeningOn(address))).doesNotThrowAnyException();
    }
  }

  @Test
  void listenAddressThatIsNoAddressFailsNamingTheFlag() {
    assertThatThrownBy(() -> MachineChecks.check(listeningOn("203.0.113.300")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("-l: 203.0.113.300 (expected: an address of this machine; cannot resolve it)");
  }

  @Test
  void listenAddressOfAnotherMachineFailsNamingTheFlag() {
    // TEST-NET-3 (RFC 5737): documentation only, on no interface of this machine.
    assertThatThrownBy(() -> MachineChecks.check(listeningOn("203.0.113.7")))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "-l: 203.0.113.7 (expected: an address of this machine; no interface has"
                + " 203.0.113.7)");
  }

  @Test
  void metricsAddressIsCheckedOnlyWhenMetricsAreOn() {
    assertThatCode(() -> MachineChecks.check(config("--metrics-address", "203.0.113.300")))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () ->
                MachineChecks.check(
                    config("--metrics-port", "9100", "--metrics-address", "203.0.113.300")))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--metrics-address: 203.0.113.300 (expected: an address of this machine; cannot"
                + " resolve it)");
  }

  @Test
  void serverWhoseHostDoesNotResolveFailsNamingTheFlag() {
    // .invalid never resolves (RFC 6761).
    MiddlewareConfig config = config("nohost.invalid:11211"); // a second -m server
    assertThatThrownBy(() -> MachineChecks.check(config))
        .isInstanceOf(ConfigException.class)
        .hasMessage("-m: nohost.invalid:11211 (cannot resolve host nohost.invalid)");
  }

  @Test
  void oneServerUnderTwoSpellingsIsRefused() {
    // config() gives 127.0.0.1:1 first; localhost is 127.0.0.1 in every test machine's hosts file
    assertThatThrownBy(() -> MachineChecks.check(config("localhost:1")))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "-m: localhost:1 is 127.0.0.1:1 again, both 127.0.0.1 port 1"
                + " (expected: each server once)");
    assertThatThrownBy(
            () -> MachineChecks.resolveServers("-m", List.of("127.0.0.1:2", "LOCALHOST:02")))
        .hasMessage(
            "-m: LOCALHOST:02 is 127.0.0.1:2 again, both 127.0.0.1 port 2"
                + " (expected: each server once)");
    MachineChecks.resolveServers("-m", List.of("127.0.0.1:2", "127.0.0.2:2", "localhost:3"));
  }

  @Test
  void statsDirIsCreatedAndLeftWithoutTheWriteCheck(@TempDir Path dir) throws Exception {
    Path stats = dir.resolve("a/b/stats");
    MachineChecks.check(config("--stats-dir", stats.toString()));
    assertThat(stats).isDirectory();
    try (var files = Files.list(stats)) {
      assertThat(files).isEmpty();
    }
  }

  @Test
  void statsDirThatCannotBeMadeFailsNamingTheFlag(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> MachineChecks.check(config("--stats-dir", "/proc/nope")))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "--stats-dir: /proc/nope (expected: a folder this process can write;");
    Path file = Files.writeString(dir.resolve("file"), "x");
    assertThatThrownBy(() -> MachineChecks.check(config("--stats-dir", file.toString())))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--stats-dir: "
                + file
                + " (expected: a folder this process can write; "
                + file
                + " exists and is not a folder)");
  }
}
