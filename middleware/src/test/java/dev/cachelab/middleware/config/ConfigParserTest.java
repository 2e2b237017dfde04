package dev.cachelab.middleware.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConfigParserTest {
  private static final String[] BASE = {
    "-l", "127.0.0.1", "-p", "11212", "-t", "8", "-s", "false", "-m", "127.0.0.1:11211"
  };

  @Test
  void parsesAslFlagsWithDefaults() {
    MiddlewareConfig config = ConfigParser.parse(BASE);
    assertThat(config.listenAddress()).isEqualTo("127.0.0.1");
    assertThat(config.port()).isEqualTo(11212);
    assertThat(config.workers()).isEqualTo(8);
    assertThat(config.sharded()).isFalse();
    assertThat(config.servers()).containsExactly("127.0.0.1:11211");
    assertThat(config.routing()).isEqualTo(Routing.ROUND_ROBIN);
    assertThat(config.replication()).isEqualTo(1);
    assertThat(config.queueCapacity()).isZero();
    assertThat(config.workerBatch()).isEqualTo(1);
    assertThat(config.backendTimeoutMs()).isEqualTo(1000);
    assertThat(config.maxValueBytes()).isEqualTo(1 << 20);
    assertThat(config.windowMs()).isEqualTo(1000);
    assertThat(config.statsDir()).isNull();
    assertThat(config.warmupSeconds()).isZero();
    assertThat(config.cooldownSeconds()).isZero();
    assertThat(config.metricsPort()).isZero();
    assertThat(config.metricsAddress()).as("-l's address").isEqualTo(config.listenAddress());
    assertThat(config.serversFileCheckMs()).isEqualTo(1000);
  }

  @Test
  void theServersFileCheckPeriodIsAFlag() {
    String[] args = new String[BASE.length + 2];
    System.arraycopy(BASE, 0, args, 0, BASE.length);
    args[BASE.length] = "--servers-file-check-ms";
    args[BASE.length + 1] = "50";
    assertThat(ConfigParser.parse(args).serversFileCheckMs()).isEqualTo(50);
  }

  @Test
  void parsesEveryLongOption() {
    MiddlewareConfig config =
        ConfigParser.parse(
            new String[] {
              "-l",
              "0.0.0.0",
              "-p",
              "0",
              "-t",
              "64",
              "-s",
              "true",
              "-m",
              "a:1",
              "b:2",
              "c:3",
              "--routing",
              "hash",
              "--replication",
              "3",
              "--queue-capacity",
              "100",
              "--worker-batch",
              "16",
              "--backend-timeout-ms",
              "250",
              "--max-value-bytes",
              "4096",
              "--window-ms",
              "500",
              "--stats-dir",
              "/tmp/x",
              "--warmup-s",
              "2",
              "--cooldown-s",
              "3",
              "--metrics-port",
              "9100",
              "--metrics-address",
              "127.0.0.1"
            });
    assertThat(config.sharded()).isTrue();
    assertThat(config.servers()).containsExactly("a:1", "b:2", "c:3");
    assertThat(config.routing()).isEqualTo(Routing.HASH);
    assertThat(config.replication()).isEqualTo(3);
    assertThat(config.queueCapacity()).isEqualTo(100);
    assertThat(config.workerBatch()).isEqualTo(16);
    assertThat(config.backendTimeoutMs()).isEqualTo(250);
    assertThat(config.maxValueBytes()).isEqualTo(4096);
    assertThat(config.windowMs()).isEqualTo(500);
    assertThat(config.statsDir()).isEqualTo(Path.of("/tmp/x"));
    assertThat(config.warmupSeconds()).isEqualTo(2);
    assertThat(config.cooldownSeconds()).isEqualTo(3);
    assertThat(config.metricsPort()).isEqualTo(9100);
    assertThat(config.metricsAddress()).isEqualTo("127.0.0.1");
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "-t|0|-t: 0 (expected: 1..1024)",
        "-t|1025|-t: 1025 (expected: 1..1024)",
        "-p|70000|-p: 70000 (expected: 0..65535)",
        "-s|yes|-s: yes (expected: true or false)",
        "--routing|random|--routing: random (expected: round-robin or hash)",
        "--replication|2|--replication: 2 (expected: 1..1)",
        "--queue-capacity|-1|--queue-capacity: -1 (expected: 0..16777216)",
        "--worker-batch|0|--worker-batch: 0 (expected: 1..1024)",
        "--worker-batch|1025|--worker-batch: 1025 (expected: 1..1024)",
        "--backend-timeout-ms|0|--backend-timeout-ms: 0 (expected: 1..600000)",
        "--max-value-bytes|0|--max-value-bytes: 0 (expected: 1..134217728)",
        "--window-ms|5|--window-ms: 5 (expected: 10..3600000)",
        "--warmup-s|-1|--warmup-s: -1 (expected: 0..86400)",
        "--cooldown-s|100000|--cooldown-s: 100000 (expected: 0..86400)",
        "--metrics-port|65536|--metrics-port: 65536 (expected: 0..65535)",
      })
  void rejectsOutOfRangeValuesNamingTheFlagAndRange(String flag, String value, String message) {
    List<String> args = new ArrayList<>(List.of(BASE));
    int existing = args.indexOf(flag);
    if (existing >= 0) {
      args.set(existing + 1, value);
    } else {
      args.add(flag);
      args.add(value);
    }
    assertThatThrownBy(() -> ConfigParser.parse(args.toArray(new String[0])))
        .isInstanceOf(ConfigException.class)
        .hasMessage(message);
  }

  @Test
  void rejectsBadServerAddresses() {
    for (String server : List.of("nohost", "host:", ":11211", "host:0", "host:99999", "h:x")) {
      assertThatThrownBy(
              () ->
                  ConfigParser.parse(
                      new String[] {"-l", "::", "-p", "1", "-t", "1", "-s", "true", "-m", server}))
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("-m: " + server + " (expected: host:port");
    }
  }

  @Test
  void rejectsAServerGivenTwice() {
    assertThatThrownBy(
            () ->
                ConfigParser.parse(
                    new String[] {
                      "-l", "::", "-p", "1", "-t", "1", "-s", "true", "-m", "a:1", "b:2", "a:1"
                    }))
        .isInstanceOf(ConfigException.class)
        .hasMessage("-m: a:1 given twice (expected: each server once)");
    assertThatThrownBy(
            () ->
                ConfigParser.parse(
                    new String[] {
                      "-l",
                      "::",
                      "-p",
                      "1",
                      "-t",
                      "1",
                      "-s",
                      "true",
                      "-m",
                      "Host:21211",
                      "b:2",
                      "host:021211"
                    }))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "-m: host:021211 is Host:21211 again, given twice (expected: each server once)");
  }

  @Test
  void replicationIsCheckedAgainstTheServerCountInBothModes() {
    List<String> args =
        new ArrayList<>(
            List.of("-l", "::", "-p", "1", "-t", "1", "-s", "true", "-m", "a:1", "b:2"));
    args.addAll(List.of("--replication", "2"));
    assertThat(ConfigParser.parse(args.toArray(new String[0])).replication()).isEqualTo(2);
    args.addAll(List.of("--routing", "hash"));
    assertThat(ConfigParser.parse(args.toArray(new String[0])).routing()).isEqualTo(Routing.HASH);
    args.set(args.indexOf("--replication") + 1, "3");
    assertThatThrownBy(() -> ConfigParser.parse(args.toArray(new String[0])))
        .hasMessage("--replication: 3 (expected: 1..2)");
  }

  @Test
  void rejectsMissingAndUnknownFlags() {
    assertThatThrownBy(() -> ConfigParser.parse(new String[] {"-p", "1"}))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("Missing required options")
        .hasMessageContaining("-l");
    List<String> args = new ArrayList<>(List.of(BASE));
    args.add("--frobnicate");
    assertThatThrownBy(() -> ConfigParser.parse(args.toArray(new String[0])))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--frobnicate");
    assertThatThrownBy(
            () ->
                ConfigParser.parse(
                    new String[] {"-l", "x", "-p", "abc", "-t", "1", "-s", "true", "-m", "a:1"}))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("-p")
        .hasMessageContaining("abc");
  }

  @Test
  void anOptionAfterTheServerListIsReportedAsUnknownNotTakenForAServer() {
    String[] base = {"-l", "127.0.0.1", "-p", "0", "-t", "1", "-s", "false", "-m", "a:1", "b:2"};
    assertThatThrownBy(() -> ConfigParser.parse(with(base, "--bogus")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("unknown option --bogus");
    assertThatThrownBy(() -> ConfigParser.parse(with(base, "-x", "--routing", "hash")))
        .hasMessage("unknown option -x");
    assertThatThrownBy(() -> ConfigParser.parse(with(base, "--routng", "hash")))
        .hasMessage("unknown option --routng (did you mean --routing?)");
    assertThatThrownBy(() -> ConfigParser.parse(with(base, "--metrics-prot=9100")))
        .hasMessage("unknown option --metrics-prot (did you mean --metrics-port?)");
    assertThatThrownBy(
            () ->
                ConfigParser.parse(
                    new String[] {
                      "-l", "--bogus", "-p", "0", "-t", "1", "-s", "false", "-m", "a:1"
                    }))
        .hasMessage("unknown option --bogus");
    // The servers still end at the next known flag, and a negative number stays a value.
    assertThat(ConfigParser.parse(with(base, "--routing", "hash")).servers())
        .containsExactly("a:1", "b:2");
    assertThatThrownBy(() -> ConfigParser.parse(with(base, "--queue-capacity", "-5")))
        .hasMessage("--queue-capacity: -5 (expected: 0..16777216)");
  }

  @Test
  void metricsPortMustDifferFromTheListenPort() {
    assertThatThrownBy(() -> ConfigParser.parse(with(BASE, "--metrics-port", "11212")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("--metrics-port: 11212 (expected: 0 = off, or a port other than -p's)");
    assertThat(ConfigParser.parse(with(BASE, "--metrics-port", "11213")).metricsPort())
        .isEqualTo(11213);
    assertThatThrownBy(() -> ConfigParser.parse(with(BASE, "--metrics-address", " ")))
        .hasMessage("--metrics-address: missing (expected: an IP address or host name)");
  }

  @Test
  void editDistanceCountsSingleCharacterEdits() {
    assertThat(ConfigParser.editDistance("--routng", "--routing")).isEqualTo(1);
    assertThat(ConfigParser.editDistance("--rotuing", "--routing")).isEqualTo(2);
    assertThat(ConfigParser.editDistance("", "-t")).isEqualTo(2);
    assertThat(ConfigParser.editDistance("--bogus", "--routing")).isGreaterThan(2);
  }

  private static String[] with(String[] base, String... more) {
    List<String> args = new ArrayList<>(List.of(base));
    args.addAll(List.of(more));
    return args.toArray(new String[0]);
  }
}
