package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Workers that take several queued requests at once and pipeline them (--worker-batch): many
 * clients on one worker, so that its batches mix clients, commands and servers; every client must
 * get exactly its own replies, also while a server dies.
 */
class WorkerBatchIT {
  private static final int CLIENTS = 12;
  private static final int ROUNDS = 60;

  @Test
  void manyClientsOnOneBatchingWorkerGetTheirOwnReplies() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    try {
      try (RunningMiddleware mw =
          RunningMiddleware.start(servers, "-t", "1", "--routing", "hash", "--worker-batch", "8")) {
        List<String> problems = runClients(mw, null);
        assertThat(problems).isEmpty();
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  @Test
  void aServerDyingMidBatchFailsOnlyItsRequests() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    try {
      String deadError = "SERVER_ERROR backend " + servers.get(1).address() + " ";
      try (RunningMiddleware mw =
          RunningMiddleware.start(servers, "-t", "1", "--routing", "hash", "--worker-batch", "8")) {
        Thread killer =
            new Thread(
                () -> {
                  try {
                    Thread.sleep(50);
                  } catch (InterruptedException e) {
                    return;
                  }
                  servers.get(1).kill();
                },
                "killer");
        killer.start();
        List<String> problems = runClients(mw, deadError);
        killer.join(10_000);
        assertThat(problems).isEmpty();
        try (TextClient client = mw.client()) {
          assertThat(client.call("version\r\n")).startsWith("VERSION ");
        }
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /** Runs the clients; {@code allowedError} (a reply prefix) may replace any reply, or null. */
  private static List<String> runClients(RunningMiddleware mw, String allowedError)
      throws InterruptedException {
    List<String> problems = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int id = c;
      Thread t = new Thread(() -> client(mw, id, allowedError, problems), "client-" + c);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join(60_000);
    }
    return problems;
  }

  private static void client(
      RunningMiddleware mw, int id, String allowedError, List<String> problems) {
    try (TextClient client = mw.client()) {
      for (int i = 0; i < ROUNDS; i++) {
        String key = "b" + id + "_" + i;
        String value = "v".repeat(1 + (id * 37 + i * 11) % 900) + id;
        String set = "set " + key + " " + id + " 0 " + value.length() + "\r\n" + value + "\r\n";
        String quiet = "set q" + key + " 0 0 1 noreply\r\nx\r\n";
        String get = "get " + key + "\r\n";
        String miss = "get none" + key + "\r\n";
        // Pipelined: set, a noreply set, get, a miss, in one write.
        client.send(set + quiet + get + miss);
        check(problems, allowedError, key, client.readReply(set), "STORED\r\n");
        check(
            problems,
            allowedError,
            key,
            client.readReply(get),
            "VALUE " + key + " " + id + " " + value.length() + "\r\n" + value + "\r\nEND\r\n");
        check(problems, allowedError, key, client.readReply(miss), "END\r\n");
        check(problems, allowedError, key, client.call("incr n" + key + " 1\r\n"), "NOT_FOUND\r\n");
        if (!problems.isEmpty()) {
          return;
        }
      }
    } catch (IOException e) {
      problems.add("client " + id + ": " + e);
    }
  }

  private static void check(
      List<String> problems, String allowedError, String key, String reply, String expected) {
    if (reply.equals(expected)) {
      return;
    }
    if (allowedError != null && reply.startsWith(allowedError)) {
      return;
    }
    problems.add(key + ": expected " + expected.length() + " bytes, got " + abbreviate(reply));
  }

  private static String abbreviate(String reply) {
    return reply.length() > 80 ? reply.substring(0, 80) + "..." : reply;
  }
}
