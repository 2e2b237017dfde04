package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A bounded fuzz test with checking clients: each client keeps a model of its own keys and checks
 * every reply (classic and meta commands, multi-gets over sharded servers, noreply, pipelined
 * bursts), while another client sends random bytes. Bounded in operations and time; the seed of
 * each client is in its failure message.
 */
class FuzzIT {
  private static final int CLIENTS = 4;
  private static final int MAX_OPS = 1_500;
  private static final long MAX_NANOS = 15_000_000_000L;

  @Test
  void checkingClientsSeeTheirModelWhileGarbageFlies() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw =
        RunningMiddleware.start(servers, "-t", "4", "-s", "true", "--worker-batch", "4")) {
      List<String> problems = new CopyOnWriteArrayList<>();
      List<Thread> threads = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        long seed = 1_000 + c;
        int id = c;
        Thread t = new Thread(() -> checkingClient(mw, id, seed, problems), "fuzz-" + c);
        threads.add(t);
        t.start();
      }
      Thread garbage = new Thread(() -> garbageClient(mw), "fuzz-garbage");
      garbage.setDaemon(true);
      garbage.start();
      for (Thread t : threads) {
        t.join(120_000);
      }
      garbage.interrupt();
      garbage.join(10_000);
      assertThat(problems).isEmpty();
      try (TextClient client = mw.client()) {
        assertThat(client.call("version\r\n")).startsWith("VERSION ");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  private static void checkingClient(
      RunningMiddleware mw, int id, long seed, List<String> problems) {
    Random random = new Random(seed);
    Map<String, String> model = new HashMap<>();
    long deadline = System.nanoTime() + MAX_NANOS;
    try (TextClient client = mw.client()) {
      for (int op = 0; op < MAX_OPS && System.nanoTime() < deadline; op++) {
        String key = "c" + id + "_" + random.nextInt(40);
        String value = randomValue(random);
        String problem =
            switch (random.nextInt(9)) {
              case 0, 1 -> {
                model.put(key, value);
                yield expect(client, set(key, value), "STORED\r\n");
              }
              case 2 -> expect(client, "get " + key + "\r\n", valueReply(key, model.get(key)));
              case 3 -> {
                StringBuilder line = new StringBuilder("get");
                StringBuilder reply = new StringBuilder();
                for (int k = 0; k < 1 + random.nextInt(12); k++) {
                  String other = "c" + id + "_" + random.nextInt(40);
                  line.append(' ').append(other);
                  String v = model.get(other);
                  if (v != null) {
                    reply.append("VALUE ").append(other).append(" 0 ").append(v.length());
                    reply.append("\r\n").append(v).append("\r\n");
                  }
                }
                yield expect(client, line + "\r\n", reply + "END\r\n");
              }
              case 4 -> {
                String expected = model.remove(key) != null ? "DELETED\r\n" : "NOT_FOUND\r\n";
                yield expect(client, "delete " + key + "\r\n", expected);
              }
              case 5 -> {
                // noreply write, then a read that must see it
                model.put(key, value);
                client.send(
                    "set " + key + " 0 0 " + value.length() + " noreply\r\n" + value + "\r\n");
                yield expect(client, "get " + key + "\r\n", valueReply(key, value));
              }
              case 6 -> {
                // meta set and get
                model.put(key, value);
                String ms = "ms " + key + " " + value.length() + "\r\n" + value + "\r\n";
                String mg = "mg " + key + " v\r\n";
                client.send(ms + mg);
                String hd = client.readLine();
                String va = client.readLine();
                String data = client.readLine();
                String got = hd + va + data;
                String want = "HD\r\nVA " + value.length() + "\r\n" + value + "\r\n";
                yield got.equals(want) ? null : ms + mg + " -> " + got;
              }
              case 7 -> {
                // a pipelined burst, sent split at a random place
                StringBuilder burst = new StringBuilder();
                List<String> expected = new ArrayList<>();
                for (int i = 0; i < 2 + random.nextInt(6); i++) {
                  String k = "c" + id + "_" + random.nextInt(40);
                  if (random.nextBoolean()) {
                    String v = randomValue(random);
                    model.put(k, v);
                    burst.append(set(k, v));
                    expected.add("STORED\r\n");
                  } else {
                    burst.append("get ").append(k).append("\r\n");
                    expected.add(valueReply(k, model.get(k)));
                  }
                }
                int cut = random.nextInt(burst.length());
                client.send(burst.substring(0, cut));
                client.send(burst.substring(cut));
                String problemInBurst = null;
                for (String want : expected) {
                  String got =
                      want.startsWith("STORED") ? client.readLine() : client.readUntilEnd();
                  if (!got.equals(want) && problemInBurst == null) {
                    problemInBurst = burst + " -> " + got + " (expected " + want + ")";
                  }
                }
                yield problemInBurst;
              }
              default -> expect(client, "version\r\n", null);
            };
        if (problem != null) {
          problems.add("client " + id + " (seed " + seed + ", op " + op + "): " + problem);
          return;
        }
      }
    } catch (IOException e) {
      problems.add("client " + id + " (seed " + seed + "): " + e);
    }
  }

  private static String expect(TextClient client, String command, String expected)
      throws IOException {
    String got = client.call(command);
    if (expected == null) {
      return got.startsWith("VERSION ") ? null : command + " -> " + got;
    }
    return got.equals(expected) ? null : command + " -> " + got + " (expected " + expected + ")";
  }

  private static String set(String key, String value) {
    return "set " + key + " 0 0 " + value.length() + "\r\n" + value + "\r\n";
  }

  private static String valueReply(String key, String value) {
    return value == null
        ? "END\r\n"
        : "VALUE " + key + " 0 " + value.length() + "\r\n" + value + "\r\n" + "END\r\n";
  }

  private static String randomValue(Random random) {
    int length = random.nextInt(4) == 0 ? 1 + random.nextInt(20_000) : random.nextInt(64);
    StringBuilder s = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      s.append((char) ('a' + random.nextInt(26)));
    }
    return s.toString();
  }

  private static void garbageClient(RunningMiddleware mw) {
    Random random = new Random(7);
    for (int round = 0; round < 400 && !Thread.currentThread().isInterrupted(); round++) {
      try (TextClient client = mw.client()) {
        for (int i = 0; i < 10; i++) {
          byte[] noise = new byte[1 + random.nextInt(300)];
          random.nextBytes(noise);
          client.send(new String(noise, java.nio.charset.StandardCharsets.ISO_8859_1));
        }
      } catch (IOException e) {
        // closed by the middleware after lost framing: expected
      }
    }
  }
}
