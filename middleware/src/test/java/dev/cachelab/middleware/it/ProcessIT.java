package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.MiddlewareCommand;
import dev.cachelab.middleware.testing.TextClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The middleware as a separate process, as the runners start it. */
class ProcessIT {
  private static final Pattern LISTENING =
      Pattern.compile("cachelab middleware listening on 127\\.0\\.0\\.1:(\\d+)");

  private static ProcessBuilder java(List<String> flags) {
    return new ProcessBuilder(MiddlewareCommand.inOwnJvm(List.of(), flags));
  }

  @Test
  void printsListeningLineServesAndWritesStatisticsOnSigterm(@TempDir Path dir) throws Exception {
    Path stats = dir.resolve("stats");
    try (MemcachedProcess server = MemcachedProcess.start()) {
      Process mw =
          java(MiddlewareCommand.flagsOnLoopback(
                  2, "-m", server.address(), "--stats-dir", stats.toString(), "--window-ms", "200"))
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      try {
        BufferedReader out =
            new BufferedReader(new InputStreamReader(mw.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertThat(line).isNotNull();
        Matcher m = LISTENING.matcher(line);
        assertThat(m.matches()).as(line).isTrue();
        int port = Integer.parseInt(m.group(1));
        try (TextClient client = new TextClient(port)) {
          for (int i = 0; i < 20; i++) {
            assertThat(client.call("set k" + i + " 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
            client.call("get k" + i + " nope\r\n");
            client.call("get k" + i + "\r\n");
          }
        }
        Thread.sleep(300);
        mw.destroy(); // SIGTERM
        assertThat(mw.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(mw.exitValue()).isZero();
      } finally {
        mw.destroyForcibly();
      }
    }
    String json = Files.readString(stats.resolve("summary.json"));
    assertThat(json).contains("\"get\": {\"count\": 20,", "\"multiget\": {\"count\": 20,");
    assertThat(json).contains("\"set\": {\"count\": 20,", "\"keys_requested\": 40, \"hits\": 20");
    assertValidJson(stats.resolve("summary.json"));
    List<String> windows = Files.readAllLines(stats.resolve("windows.csv"));
    assertThat(windows.get(0))
        .isEqualTo(
            "window,start_epoch_ms,duration_ms,op,count,throughput_ops_per_s,"
                + "response_time_mean_us,queue_time_mean_us,service_time_mean_us,"
                + "response_time_p50_us,response_time_p99_us,queue_length_mean,queue_length_max,"
                + "keys_requested,hits,errors,staging_time_mean_us");
    long setCount =
        windows.stream()
            .skip(1)
            .map(l -> l.split(","))
            .filter(f -> f[3].equals("set"))
            .mapToLong(f -> Long.parseLong(f[4]))
            .sum();
    assertThat(setCount).isEqualTo(20);
    assertThat(Files.readAllLines(stats.resolve("servers.csv")).get(0))
        .isEqualTo("window,server,requests,errors");
    long logged = 0;
    HistogramLogReader reader =
        new HistogramLogReader(stats.resolve("histograms/response_time_set.hlog").toFile());
    Histogram interval;
    while ((interval = (Histogram) reader.nextIntervalHistogram()) != null) {
      logged += interval.getTotalCount();
    }
    assertThat(logged).isEqualTo(20);
    for (String metric : List.of("response_time", "queue_time", "service_time", "staging_time")) {
      for (String op : List.of("get", "multiget", "set", "other", "all")) {
        assertThat(stats.resolve("histograms/" + metric + "_" + op + ".hlog")).exists();
      }
    }
  }

  private static void assertValidJson(Path file) throws Exception {
    Process python =
        new ProcessBuilder(
                "python3", "-c", "import json,sys; json.load(open(sys.argv[1]))", file.toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(python.waitFor()).as(output).isZero();
  }

  @Test
  void badFlagExitsNonZeroNamingTheFlagAndRange() throws IOException, InterruptedException {
    Process mw =
        java(MiddlewareCommand.flagsOnLoopback(0, "-m", "127.0.0.1:1"))
            .redirectErrorStream(true)
            .start();
    String output = new String(mw.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(mw.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(mw.exitValue()).isEqualTo(2);
    assertThat(output).contains("-t: 0 (expected: 1..1024)");
  }

  /** Exit status and output of a middleware process that is expected to stop by itself. */
  private record Exit(int status, String stdout, String stderr) {}

  private static Exit runToExit(List<String> args) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("process-it");
    Path out = dir.resolve("stdout");
    Path err = dir.resolve("stderr");
    Process mw = java(args).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    try {
      assertThat(mw.waitFor(20, TimeUnit.SECONDS)).as("exits by itself").isTrue();
      return new Exit(mw.exitValue(), Files.readString(out), Files.readString(err));
    } finally {
      mw.destroyForcibly();
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
      Files.deleteIfExists(dir);
    }
  }

  private static List<String> flags(String... more) {
    List<String> args =
        new ArrayList<>(List.of("-l", "127.0.0.1", "-t", "1", "-s", "false", "-m", "127.0.0.1:1"));
    args.addAll(List.of(more));
    return args;
  }

  @Test
  void badFlagValuesExitTwoWithOneLineNamingTheFlag() throws Exception {
    Map<List<String>, String> cases = new LinkedHashMap<>();
    cases.put(flags("-p", "0", "--bogus"), "unknown option --bogus");
    cases.put(flags("-p", "0", "--event-loops", "-1"), "--event-loops: -1 (expected: 0..64)");
    cases.put(flags("-p", "0", "--event-loops", "65"), "--event-loops: 65 (expected: 0..64)");
    cases.put(
        flags("-p", "0", "--stats-dir", "/proc/nope"),
        "--stats-dir: /proc/nope (expected: a folder this process can write;");
    cases.put(
        flags("-p", "0", "--metrics-port", "9100", "--metrics-address", "203.0.113.300"),
        "--metrics-address: 203.0.113.300 (expected: an address of this machine; cannot resolve");
    cases.put(
        flags("-p", "9100", "--metrics-port", "9100"),
        "--metrics-port: 9100 (expected: 0 = off, or a port other than -p's)");
    for (String again : List.of("localhost:1", "127.0.0.1:01")) {
      List<String> args = new ArrayList<>(flags("-p", "0"));
      args.add(args.indexOf("127.0.0.1:1") + 1, again);
      cases.put(args, "-m: " + again + " is 127.0.0.1:1 again");
    }
    for (String listen : List.of("203.0.113.300", "203.0.113.7")) {
      List<String> args = new ArrayList<>(flags("-p", "0"));
      args.set(args.indexOf("-l") + 1, listen);
      cases.put(args, "-l: " + listen + " (expected: an address of this machine;");
    }
    for (Map.Entry<List<String>, String> badCase : cases.entrySet()) {
      Exit exit = runToExit(badCase.getKey());
      assertThat(exit.status()).as(exit.stderr()).isEqualTo(2);
      assertThat(exit.stdout()).isEmpty();
      List<String> lines = exit.stderr().lines().toList();
      assertThat(lines).as(exit.stderr()).hasSize(2);
      assertThat(lines.get(0)).startsWith("cachelab middleware: " + badCase.getValue());
      assertThat(lines.get(1)).isEqualTo("Run with --help for the flags.");
    }
  }

  @Test
  void anUnreadableOrMalformedServersFileExitsTwoWithOneLineNamingIt(@TempDir Path dir)
      throws Exception {
    Path malformed = dir.resolve("servers-bad");
    Files.writeString(malformed, "127.0.0.1:11211\nnot a server\n");
    Path missing = dir.resolve("servers-missing");
    Map<Path, String> cases = new LinkedHashMap<>();
    cases.put(malformed, "--servers-file: " + malformed + " line 2: not a server (expected:");
    cases.put(missing, "--servers-file: " + missing + ": cannot read it (NoSuchFileException");
    for (Map.Entry<Path, String> badCase : cases.entrySet()) {
      List<String> args =
          MiddlewareCommand.flagsOnLoopback(1, "--servers-file", badCase.getKey().toString());
      Exit exit = runToExit(args);
      assertThat(exit.status()).as(exit.stderr()).isEqualTo(2);
      List<String> lines = exit.stderr().lines().toList();
      assertThat(lines).as(exit.stderr()).hasSize(2);
      assertThat(lines.get(0)).startsWith("cachelab middleware: " + badCase.getValue());
    }
  }

  @Test
  void portInUseExitsOneWithOneLineNamingTheAddressAndFlags() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Exit listen = runToExit(flags("-p", String.valueOf(port)));
      assertThat(listen.status()).as(listen.stderr()).isEqualTo(1);
      assertThat(listen.stdout()).isEmpty();
      assertThat(listen.stderr())
          .isEqualTo(
              "cachelab middleware: cannot listen on 127.0.0.1:"
                  + port
                  + " (-l, -p): Address already in use\n");
      Exit metrics =
          runToExit(
              flags("-p", "0", "--metrics-address", "127.0.0.1", "--metrics-port", "" + port));
      assertThat(metrics.status()).as(metrics.stderr()).isEqualTo(1);
      assertThat(metrics.stderr())
          .isEqualTo(
              "cachelab middleware: cannot serve /metrics on 127.0.0.1:"
                  + port
                  + " (--metrics-address, --metrics-port): Address already in use\n");
    }
  }
}
