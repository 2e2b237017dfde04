package dev.cachelab.loadgen.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

class LoadgenCommandTest {

  static LoadgenConfig parse(String... args) {
    LoadgenCommand.rejectUnsupported(args);
    LoadgenCommand command = new LoadgenCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  @Test
  void defaultsAreMemtiers() {
    LoadgenConfig c = parse();
    assertThat(c.server()).isEqualTo("localhost");
    assertThat(c.port()).isEqualTo(6379);
    assertThat(c.protocol()).isEqualTo(Protocol.REDIS);
    assertThat(c.threads()).isEqualTo(4);
    assertThat(c.clientsPerThread()).isEqualTo(50);
    assertThat(c.ratio()).isEqualTo(new Ratio(1, 10));
    assertThat(c.keyPatterns()).isEqualTo(new KeyPatterns(KeyPattern.RANDOM, KeyPattern.RANDOM));
    assertThat(c.keyPrefix()).isEqualTo("memtier-");
    assertThat(c.keyMinimum()).isZero();
    assertThat(c.keyMaximum()).isEqualTo(10_000_000);
    assertThat(c.dataSize()).isEqualTo(new IntRange(32, 32));
    assertThat(c.randomData()).isFalse();
    assertThat(c.expiryRange()).isEqualTo(new IntRange(0, 0));
    assertThat(c.requestsPerClient()).isEqualTo(10_000);
    assertThat(c.timed()).isFalse();
    assertThat(c.allKeys()).isFalse();
    assertThat(c.multiKeyGet()).isZero();
    assertThat(c.pipeline()).isEqualTo(1);
    assertThat(c.rateLimitPerConnection()).isZero();
    assertThat(c.distinctClientSeed()).isFalse();
    assertThat(c.randomize()).isFalse();
    assertThat(c.seed()).isEqualTo(LoadgenCommand.DEFAULT_SEED);
    assertThat(c.runCount()).isEqualTo(1);
    assertThat(c.jsonOutFile()).isNull();
    assertThat(c.hdrFilePrefix()).isNull();
    assertThat(c.percentiles()).containsExactly(50.0, 99.0, 99.9);
    assertThat(c.hideHistogram()).isFalse();
    assertThat(c.thinkTime().enabled()).isFalse();
    assertThat(c.openLoop()).isFalse();
    assertThat(c.metricsPort()).isZero();
    assertThat(c.quiet()).isFalse();
    assertThat(c.pinThreads()).isFalse();
    assertThat(c.connectTimeoutMillis()).isEqualTo(5000);
    assertThat(c.keyZipfExponent()).isEqualTo(1.0);
  }

  @Test
  void zipfPatternTakesMemtiersExponent() {
    LoadgenConfig c = parse("--key-pattern=Z:Z", "--key-zipf-exp=0.99");
    assertThat(c.keyPatterns()).isEqualTo(new KeyPatterns(KeyPattern.ZIPF, KeyPattern.ZIPF));
    assertThat(c.keyZipfExponent()).isEqualTo(0.99);
    // memtier: Z on one side only, and the exponent's default of 1
    LoadgenConfig oneSide = parse("--key-pattern=R:Z");
    assertThat(oneSide.keyPatterns().get()).isEqualTo(KeyPattern.ZIPF);
    assertThat(oneSide.keyZipfExponent()).isEqualTo(1.0);
    assertThat(parse("--key-pattern=Z:R", "--key-zipf-exp=4.99").keyZipfExponent()).isEqualTo(4.99);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--key-zipf-exp=0|--key-zipf-exp: must be in (0, 5) as in memtier, got 0.0",
        "--key-zipf-exp=-1|--key-zipf-exp: must be in (0, 5) as in memtier, got -1.0",
        "--key-zipf-exp=5|--key-zipf-exp: must be in (0, 5) as in memtier, got 5.0",
        "--key-zipf-exp=7.5|--key-zipf-exp: must be in (0, 5) as in memtier, got 7.5",
        "--key-zipf-exp=NaN|--key-zipf-exp: must be in (0, 5) as in memtier, got NaN",
        "--key-zipf-exp=Infinity|--key-zipf-exp: must be in (0, 5) as in memtier, got Infinity",
      })
  void rejectsZipfExponentsOutsideMemtiersRange(String arg, String message) {
    assertThatThrownBy(() -> parse("--key-pattern=Z:Z", arg))
        .isInstanceOf(ConfigException.class)
        .hasMessage(message);
  }

  @Test
  void rejectsZipfMisuse() {
    assertThatThrownBy(() -> parse("--key-zipf-exp=1.2"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--key-zipf-exp: only the Z key pattern uses it, but --key-pattern is R:R (e.g."
                + " --key-pattern=Z:Z)");
    assertThatThrownBy(() -> parse("--key-pattern=Z:Z", "--key-minimum=0", "--key-maximum=0"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--key-pattern: Z draws keys from 1 up (as memtier does), so --key-maximum must be"
                + " >= 1, got 0");
    assertThatThrownBy(() -> parse("--key-pattern=Z:Z", "--key-zipf-exp=two"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("--key-zipf-exp");
    assertThatThrownBy(() -> parse("--key-pattern=Z:Z", "--key-zipf-exp"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("--key-zipf-exp");
  }

  @Test
  void everyOptionInLongForm() {
    LoadgenConfig c =
        parse(
            "--server=10.0.0.7",
            "--port=11211",
            "--protocol=memcache_text",
            "--threads=2",
            "--clients=16",
            "--ratio=1:3",
            "--key-pattern=S:G",
            "--key-prefix=k-",
            "--key-minimum=5",
            "--key-maximum=905",
            "--key-median=400",
            "--key-stddev=50",
            "--data-size-range=100-200",
            "--random-data",
            "--expiry-range=10-20",
            "--test-time=30",
            "--multi-key-get=3",
            "--pipeline=4",
            "--rate-limiting=500",
            "--distinct-client-seed",
            "--randomize",
            "--run-count=3",
            "--json-out-file=out/x.json",
            "--hdr-file-prefix=out/hdr",
            "--print-percentiles=50,90,99.99",
            "--hide-histogram",
            "--connection-timeout=2",
            "--metrics-port=9100",
            "--pin-threads",
            "--quiet");
    assertThat(c.server()).isEqualTo("10.0.0.7");
    assertThat(c.port()).isEqualTo(11211);
    assertThat(c.protocol()).isEqualTo(Protocol.MEMCACHE_TEXT);
    assertThat(c.threads()).isEqualTo(2);
    assertThat(c.clientsPerThread()).isEqualTo(16);
    assertThat(c.totalClients()).isEqualTo(32);
    assertThat(c.ratio()).isEqualTo(new Ratio(1, 3));
    assertThat(c.keyPatterns())
        .isEqualTo(new KeyPatterns(KeyPattern.SEQUENTIAL, KeyPattern.GAUSSIAN));
    assertThat(c.keyPrefix()).isEqualTo("k-");
    assertThat(c.keyMinimum()).isEqualTo(5);
    assertThat(c.keyMaximum()).isEqualTo(905);
    assertThat(c.keyCount()).isEqualTo(901);
    assertThat(c.keyMedian()).isEqualTo(400.0);
    assertThat(c.keyStddev()).isEqualTo(50.0);
    assertThat(c.dataSize()).isEqualTo(new IntRange(100, 200));
    assertThat(c.randomData()).isTrue();
    assertThat(c.expiryRange()).isEqualTo(new IntRange(10, 20));
    assertThat(c.testTimeSeconds()).isEqualTo(30);
    assertThat(c.timed()).isTrue();
    assertThat(c.multiKeyGet()).isEqualTo(3);
    assertThat(c.pipeline()).isEqualTo(4);
    assertThat(c.rateLimitPerConnection()).isEqualTo(500);
    assertThat(c.distinctClientSeed()).isTrue();
    assertThat(c.randomize()).isTrue();
    assertThat(c.runCount()).isEqualTo(3);
    assertThat(c.jsonOutFile()).isEqualTo(Path.of("out/x.json"));
    assertThat(c.hdrFilePrefix()).isEqualTo("out/hdr");
    assertThat(c.percentiles()).containsExactly(50.0, 90.0, 99.99);
    assertThat(c.hideHistogram()).isTrue();
    assertThat(c.connectTimeoutMillis()).isEqualTo(2000);
    assertThat(c.metricsPort()).isEqualTo(9100);
    assertThat(c.quiet()).isTrue();
    assertThat(c.pinThreads()).isTrue();
  }

  @Test
  void shortFormsAndSeparateValues() {
    LoadgenConfig c =
        parse(
            "-s",
            "127.0.0.1",
            "-p",
            "7000",
            "-P",
            "resp2",
            "-t",
            "1",
            "-c",
            "2",
            "-d",
            "4096",
            "-n",
            "77",
            "-R",
            "-x",
            "2");
    assertThat(c.server()).isEqualTo("127.0.0.1");
    assertThat(c.port()).isEqualTo(7000);
    assertThat(c.protocol()).isEqualTo(Protocol.REDIS);
    assertThat(c.threads()).isEqualTo(1);
    assertThat(c.clientsPerThread()).isEqualTo(2);
    assertThat(c.dataSize()).isEqualTo(new IntRange(4096, 4096));
    assertThat(c.requestsPerClient()).isEqualTo(77);
    assertThat(c.randomData()).isTrue();
    assertThat(c.runCount()).isEqualTo(2);
  }

  @Test
  void allKeysUnderParallelPatternsCoversEachClientsOwnRange() {
    LoadgenConfig c =
        parse("-n", "allkeys", "--key-pattern=P:P", "--key-maximum=99", "-t", "2", "-c", "3");
    assertThat(c.allKeys()).isTrue();
    assertThat(c.requestsFor(17)).isEqualTo(17);
    LoadgenConfig r = parse("-n", "allkeys", "--key-maximum=99", "-t", "1", "-c", "1");
    assertThat(r.requestsFor(5)).isEqualTo(100);
  }

  @Test
  void extensions() {
    LoadgenConfig think = parse("--think-time=2.5:exp");
    assertThat(think.thinkTime()).isEqualTo(new ThinkTime(2_500_000, true));
    assertThat(parse("--think-time=3").thinkTime()).isEqualTo(new ThinkTime(3_000_000, false));
    LoadgenConfig open = parse("--open-loop-rate=2000");
    assertThat(open.openLoop()).isTrue();
    assertThat(open.openLoopRate()).isEqualTo(2000.0);
    assertThat(open.openLoopRampSeconds()).isZero();
    LoadgenConfig ramped = parse("--open-loop-rate=2000", "--open-loop-ramp-s=2", "--test-time=10");
    assertThat(ramped.openLoopRampSeconds()).isEqualTo(2.0);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--threads=0|--threads: must be in 1..1024, got 0",
        "--clients=0|--clients: must be in 1..100000, got 0",
        "--port=70000|--port: must be in 1..65535, got 70000",
        "--pipeline=0|--pipeline: must be in 1..100000, got 0",
        "--ratio=0:0|--ratio: at least one of SET and GET must be > 0, got 0:0",
        "--ratio=1-10|--ratio: expected SET:GET such as 1:10, got '1-10'",
        "--ratio=a:1|--ratio: expected two integers SET:GET, got 'a:1'",
        "--key-pattern=X:R|--key-pattern: unknown pattern 'X' (expected: S, R, G, P or Z)",
        "--key-pattern=RR|--key-pattern: expected SET:GET such as R:R, got 'RR'",
        "--protocol=memcache_binary|--protocol: 'memcache_binary' is a memtier protocol that loadgen"
            + " does not support",
        "--protocol=http|--protocol: unknown protocol 'http'",
        "--key-minimum=-1|--key-minimum: must be >= 0, got -1",
        "--data-size=0|--data-size: must be in 1..67108864, got 0",
        "--data-size-range=10|--data-size-range: expected MIN-MAX such as 32-1024, got '10'",
        "--data-size-range=20-10|--data-size-range: expected 0 <= MIN <= MAX, got '20-10'",
        "--expiry-range=x-1|--expiry-range: expected two integers MIN-MAX, got 'x-1'",
        "--requests=lots|--requests: expected a number or 'allkeys', got 'lots'",
        "--requests=0|--requests: must be >= 1, got 0",
        "--test-time=0|--test-time: must be in 1..31536000, got 0",
        "--rate-limiting=0|--rate-limiting: must be in 1..10000000, got 0",
        "--run-count=0|--run-count: must be in 1..1000, got 0",
        "--multi-key-get=-1|--multi-key-get: must be in 0..100000, got -1",
        "--print-percentiles=50,101|--print-percentiles: each percentile must be in (0, 100], got"
            + " '101'",
        "--print-percentiles=fifty|--print-percentiles: expected numbers",
        "--think-time=-1|--think-time: must be >= 0 ms, got '-1'",
        "--think-time=1:pareto|--think-time: distribution must be 'exp' or 'fixed'",
        "--open-loop-rate=0|--open-loop-rate: must be > 0 requests/s, got 0.0",
        "--open-loop-ramp-s=-1|--open-loop-ramp-s: must be >= 0 s, got -1.0",
        "--open-loop-ramp-s=2|--open-loop-ramp-s: needs --open-loop-rate",
        "--metrics-port=-2|--metrics-port: must be in 0..65535, got -2",
        "--key-prefix=a b|--key-prefix: only printable ASCII without spaces, got 'a b'",
        "--hdr-file-prefix= |--hdr-file-prefix: must not be empty",
        "--server= |--server: must not be empty",
      })
  void rejectsBadValuesNamingTheOption(String arg, String message) {
    assertThatThrownBy(() -> parse(arg))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message);
  }

  @Test
  void rejectsBadCombinations() {
    assertThatThrownBy(() -> parse("--test-time=5", "-n", "10"))
        .hasMessage("--test-time and --requests are mutually exclusive");
    assertThatThrownBy(() -> parse("-d", "10", "--data-size-range=1-5"))
        .hasMessage("--data-size and --data-size-range are mutually exclusive");
    assertThatThrownBy(() -> parse("--open-loop-rate=100", "--think-time=1"))
        .hasMessageContaining("--open-loop-rate: cannot be combined");
    assertThatThrownBy(() -> parse("--open-loop-rate=100", "--rate-limiting=10"))
        .hasMessageContaining("--open-loop-rate: cannot be combined");
    assertThatThrownBy(
            () -> parse("--open-loop-rate=100", "--open-loop-ramp-s=20", "--test-time=10"))
        .hasMessage("--open-loop-ramp-s: 20.0 s is longer than the run (--test-time 10 s)");
    assertThatThrownBy(() -> parse("--key-maximum=3", "--key-minimum=4"))
        .hasMessage("--key-maximum: must be >= --key-minimum (4), got 3");
    assertThatThrownBy(() -> parse("--key-pattern=P:P", "--key-maximum=9", "-t", "2", "-c", "8"))
        .hasMessage(
            "--key-pattern: P gives every client its own keys, but the range has 10 keys for 16"
                + " clients");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "--cluster-mode",
        "--command=GET __key__",
        "--data-size-list=32:1",
        "--tls",
        "-o",
        "--out-file=x",
        "--print-all-runs",
        "--reconnect-interval=5",
        "--authenticate=pw",
        "--unix-socket=/tmp/s",
        "--show-config",
        "--data-verify"
      })
  void rejectsUnsupportedMemtierOptionsByName(String arg) {
    String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
    assertThatThrownBy(() -> parse(arg))
        .isInstanceOf(ConfigException.class)
        .hasMessage("memtier option '" + name + "' is not supported by loadgen (see --help)");
  }

  @Test
  void rejectsUnknownOptions() {
    assertThatThrownBy(() -> parse("--no-such-flag"))
        .isInstanceOf(CommandLine.UnmatchedArgumentException.class)
        .hasMessageContaining("Unknown option: '--no-such-flag'");
    assertThatThrownBy(() -> parse("--threads=two"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("--threads");
  }

  @Test
  void anOptionTakenForAHostOrFileNameIsReportedAsAnOption() {
    assertThatThrownBy(() -> parse("-s", "--bogus", "-p", "11211"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--server: expected a value, got the option '--bogus' (misspelled or unknown?)");
    assertThatThrownBy(() -> parse("--json-out-file", "--hide-histogrm"))
        .hasMessage(
            "--json-out-file: expected a value, got the option '--hide-histogrm' (misspelled or"
                + " unknown?)");
    assertThatThrownBy(() -> parse("--json-out-file", "--hide-histogram"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessage("Expected parameter for option '--json-out-file' but found '--hide-histogram'");
    assertThatThrownBy(() -> parse("--hdr-file-prefix", "-z"))
        .hasMessage(
            "--hdr-file-prefix: expected a value, got the option '-z' (misspelled or unknown?)");
    // A key prefix may start with a dash, as in memtier.
    assertThat(parse("--key-prefix", "-k").keyPrefix()).isEqualTo("-k");
  }

  @Test
  void percentileListParsing() {
    assertThat(LoadgenCommand.parsePercentiles("50, 99.9,100"))
        .isEqualTo(List.of(50.0, 99.9, 100.0));
  }
}
