package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.RedisProcess;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * redis' own tools through the RESP front end: {@code redis-cli} and {@code redis-benchmark}
 * (Debian package redis-tools) against the middleware in front of two real redis-servers, on
 * loopback.
 */
class RedisToolsIT {
  private static final Pattern RATE =
      Pattern.compile("^\"?([A-Z]+)[^,\"]*\"?,\"([0-9.]+)\"", Pattern.MULTILINE);

  private static String run(String... command) throws IOException, InterruptedException {
    return run(null, 0, command);
  }

  /**
   * Runs {@code command} with {@code input} on its stdin (none if null); returns its output (stdout
   * and stderr) after checking its exit status.
   */
  private static String run(byte[] input, int expectedExit, String... command)
      throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (input != null) {
      process.getOutputStream().write(input);
    }
    process.getOutputStream().close();
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " did not finish in 120 s");
    }
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.exitValue())
        .as(String.join(" ", command) + ":\n" + out)
        .isEqualTo(expectedExit);
    return out;
  }

  /** The middleware in redis mode in front of {@code a} and {@code b}, with {@code flags}. */
  private static RunningMiddleware middleware(RedisProcess a, RedisProcess b, String... flags)
      throws IOException {
    List<String> args = new ArrayList<>(List.of("--protocol", "redis", "-s", "true"));
    args.addAll(List.of(flags));
    return RunningMiddleware.startWithAddresses(
        List.of(a.address(), b.address()), args.toArray(new String[0]));
  }

  @Test
  void redisCliWorksThroughTheMiddleware() throws Exception {
    try (RedisProcess a = RedisProcess.start();
        RedisProcess b = RedisProcess.start();
        RunningMiddleware mw = middleware(a, b, "-t", "2")) {
      String port = "" + mw.port();
      String cli = "redis-cli";
      assertThat(run(cli, "-p", port, "PING")).isEqualTo("PONG\n");
      assertThat(run(cli, "-p", port, "SET", "greeting", "hello world", "EX", "60"))
          .isEqualTo("OK\n");
      assertThat(run(cli, "-p", port, "GET", "greeting")).isEqualTo("hello world\n");
      assertThat(run(cli, "-p", port, "MSET", "x", "1", "y", "2")).isEqualTo("OK\n");
      assertThat(run(cli, "-p", port, "MGET", "x", "nope", "y")).isEqualTo("1\n\n2\n");
      assertThat(run(cli, "-p", port, "INCR", "x")).isEqualTo("2\n");
      assertThat(run(cli, "-p", port, "TTL", "greeting")).isIn("60\n", "59\n");
      assertThat(run(cli, "-p", port, "NOPE")).startsWith("ERR unknown command 'NOPE'");
      assertThat(run(cli, "-p", port, "INFO")).contains("redis_mode:proxy");
      // Commands piped on stdin, answered in order.
      Process piped = new ProcessBuilder(cli, "-p", port).redirectErrorStream(true).start();
      piped.getOutputStream().write("SET p 1\nGET p\nDEL p\nGET p\n".getBytes());
      piped.getOutputStream().close();
      assertThat(piped.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(new String(piped.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
          .isEqualTo("OK\n1\n1\n\n");
      try (RespClient direct = new RespClient(b.port())) {
        assertThat(direct.call("GET", "greeting")).isEqualTo("$11\r\nhello world\r\n");
      }
    }
  }

  /**
   * {@code redis-cli --pipe} mass insertion (20,000 SETs as one RESP stream), {@code --latency}
   * (PING) for 2 s, and {@code -n 0} (no SELECT sent) work; {@code SELECT 0} is answered.
   */
  @Test
  void redisCliPipeLatencyAndDatabaseZeroWork() throws Exception {
    try (RedisProcess a = RedisProcess.start();
        RedisProcess b = RedisProcess.start();
        RunningMiddleware mw = middleware(a, b, "-t", "2", "--worker-batch", "16")) {
      String port = "" + mw.port();
      StringBuilder mass = new StringBuilder();
      for (int i = 0; i < 20_000; i++) {
        String key = "mass:" + i;
        mass.append("*3\r\n$3\r\nSET\r\n$").append(key.length()).append("\r\n").append(key);
        mass.append("\r\n$1\r\nv\r\n");
      }
      byte[] input = mass.toString().getBytes(StandardCharsets.US_ASCII);
      assertThat(run(input, 0, "redis-cli", "-p", port, "--pipe"))
          .contains("errors: 0, replies: 20000");
      try (RespClient direct = new RespClient(a.port())) {
        assertThat(direct.call("DBSIZE")).isEqualTo(":20000\r\n");
      }
      // Non-interactive --latency prints "min max avg samples" when interrupted.
      String latency =
          run(
              null,
              0,
              "timeout",
              "--preserve-status",
              "-s",
              "INT",
              "2",
              "redis-cli",
              "-p",
              port,
              "--latency");
      assertThat(latency).matches("(?s)\\d+ \\d+ [0-9.]+ [1-9]\\d*\\s*");
      assertThat(run("redis-cli", "-p", port, "-n", "0", "GET", "mass:7")).isEqualTo("v\n");
      assertThat(run("redis-cli", "-p", port, "SELECT", "0")).isEqualTo("OK\n");
    }
  }

  /**
   * redis-benchmark's tests of every data type run through the middleware; its {@code spop} test, a
   * write that picks at random and so cannot be replicated, stops it with the middleware's error
   * after the tests before it ran; nothing else breaks.
   */
  @Test
  void redisBenchmarkRunsEveryDataTypeTestAndStopsAtSpopWithItsError() throws Exception {
    try (RedisProcess a = RedisProcess.start();
        RedisProcess b = RedisProcess.start();
        RunningMiddleware mw = middleware(a, b, "-t", "2", "--worker-batch", "16")) {
      String port = "" + mw.port();
      List<String> common =
          List.of("redis-benchmark", "-p", port, "-n", "1000", "-c", "4", "--csv");
      List<String> types = new ArrayList<>(common);
      types.addAll(List.of("-t", "lpush,rpush,lpop,rpop,sadd,hset,zadd,zpopmin,lrange_100"));
      List<String> tests = testsIn(run(types.toArray(new String[0])));
      assertThat(tests)
          .containsExactly(
              "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD", "HSET", "ZADD", "ZPOPMIN", "LPUSH",
              "LRANGE");
      List<String> withSpop = new ArrayList<>(common);
      withSpop.addAll(List.of("-t", "get,set,sadd,spop,zadd"));
      String out = run(null, 1, withSpop.toArray(new String[0]));
      assertThat(testsIn(out)).as(out).containsExactly("SET", "GET", "SADD");
      assertThat(out).contains("ERR 'spop' picks at random");
      try (RespClient client = new RespClient(mw.port())) {
        assertThat(client.call("PING")).isEqualTo("+PONG\r\n");
      }
    }
  }

  private static List<String> testsIn(String out) {
    List<String> tests = new ArrayList<>();
    Matcher m = RATE.matcher(out);
    while (m.find()) {
      tests.add(m.group(1));
    }
    return tests;
  }

  @Test
  void redisBenchmarkGetSetAndMgetRunWithoutErrors() throws Exception {
    try (RedisProcess a = RedisProcess.start();
        RedisProcess b = RedisProcess.start();
        RunningMiddleware mw = middleware(a, b, "-t", "4", "--worker-batch", "16")) {
      String port = "" + mw.port();
      // redis-benchmark 7 has no "mget" test name (-t ignores it), so MGET runs as a command.
      List<String> common =
          List.of("redis-benchmark", "-p", port, "-n", "4000", "-c", "8", "--csv");
      List<String> getSet = new ArrayList<>(common);
      getSet.addAll(List.of("-t", "get,set,mget,mset", "-r", "1000"));
      String out = run(getSet.toArray(new String[0]));
      List<String> mget = new ArrayList<>(common);
      mget.addAll(List.of("-r", "1000", "MGET", "key:__rand_int__", "key:__rand_int__", "k:x"));
      out += run(mget.toArray(new String[0]));
      List<String> tests = new ArrayList<>();
      Matcher m = RATE.matcher(out);
      while (m.find()) {
        tests.add(m.group(1));
        assertThat(Double.parseDouble(m.group(2))).as(out).isPositive();
      }
      assertThat(tests).as(out).containsExactly("SET", "GET", "MSET", "MGET");
      assertThat(out).doesNotContainIgnoringCase("error");
    }
  }
}
