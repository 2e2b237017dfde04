package dev.cachelab.middleware.it.isolation;

import dev.cachelab.middleware.it.isolation.ClientPrograms.Program;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Client isolation as a property, in each mode a client can meet: four clients pipeline generated
 * rounds of requests on keys of their own (ClientPrograms) at once through a middleware in front of
 * two real memcached servers, and each client's replies must be what a memcached of its own (the
 * model) answers to the same requests, but for the differences ModelDifferences names, and must
 * never carry another client's key or value. A reply out of step on a shared server connection
 * shows as a frame the model does not have.
 *
 * <p>The seed is fixed; the number of tries of each property is {@code -Dcachelab.property.tries}
 * (a few by default, more with {@code make soak}). On a failure jqwik shrinks the programs and
 * prints the smallest that still fails, request by request. Run by jqwik on the test's thread; the
 * clients run on a pool of their own.
 */
class ClientIsolationPropertyIT {
  private static final int CLIENTS = 4;
  private static final int SERVERS = 2;
  private static final String SEED = "20261128";

  private static final List<MemcachedProcess> servers = new ArrayList<>();
  private static final List<MemcachedProcess> models = new ArrayList<>();
  private static final Map<String, Tally> tallies = new ConcurrentHashMap<>();
  private static final Object RUNNING = new Object();

  /** What one mode's property checked (tries and shrinking steps), printed at the end. */
  private record Tally(long startNanos, AtomicLong endNanos, AtomicLong runs, AtomicLong requests) {
    static Tally starting() {
      return new Tally(System.nanoTime(), new AtomicLong(), new AtomicLong(), new AtomicLong());
    }

    void add(long requestsChecked) {
      runs.incrementAndGet();
      requests.addAndGet(requestsChecked);
      endNanos.set(System.nanoTime());
    }
  }

  @BeforeContainer
  static void startServers() throws IOException {
    servers.addAll(MemcachedProcess.startMany(SERVERS));
    models.addAll(MemcachedProcess.startMany(CLIENTS));
  }

  @AfterContainer
  static void stopServers() {
    servers.forEach(MemcachedProcess::close);
    models.forEach(MemcachedProcess::close);
    tallies.forEach(
        (mode, tally) ->
            System.out.printf(
                "ClientIsolationPropertyIT [%s]: %d runs (tries and shrinking steps), %d requests"
                    + " checked against memcached in %.1f s%n",
                mode,
                tally.runs().get(),
                tally.requests().get(),
                (tally.endNanos().get() - tally.startNanos()) / 1e9));
  }

  /** The ASL design: one net thread, the request queue, four workers. */
  @Property(seed = SEED)
  void netThreadQueueAndWorkers(@ForAll("clients") List<Program> clients) throws Exception {
    check("-t 4", clients);
  }

  @Property(seed = SEED)
  void eventLoops(@ForAll("clients") List<Program> clients) throws Exception {
    check("-t 4 --event-loops 2", clients);
  }

  @Property(seed = SEED)
  void eventLoopsWithABatchingWorker(@ForAll("clients") List<Program> clients) throws Exception {
    check("-t 1 --worker-batch 16 --event-loops 2", clients);
  }

  @Provide
  Arbitrary<List<Program>> clients() {
    return Combinators.combine(
            ClientPrograms.program(0),
            ClientPrograms.program(1),
            ClientPrograms.program(2),
            ClientPrograms.program(3))
        .as(List::of);
  }

  /**
   * Runs every client's program on its model, then all of them at once through a middleware started
   * in {@code mode} (with sharded multi-gets) in front of the emptied servers.
   */
  private static void check(String mode, List<Program> programs) throws Exception {
    // jqwik gives up waiting for a shrinking step at its time bound and goes on while the step
    // still runs: the next run waits for it, so that runs never share the servers.
    synchronized (RUNNING) {
      checkAlone(mode, programs);
    }
  }

  private static void checkAlone(String mode, List<Program> programs) throws Exception {
    Tally tally = tallies.computeIfAbsent(mode, m -> Tally.starting());
    flushAll(servers);
    flushAll(models);
    List<ClientRun> runs = new ArrayList<>();
    for (Program program : programs) {
      runs.add(new ClientRun(program, CLIENTS));
    }
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try {
      runModels(pool, runs);
      runThroughMiddleware(pool, runs, mode);
    } finally {
      pool.shutdownNow();
    }
    tally.add(programs.stream().mapToInt(Program::requests).sum());
    List<String> problems = new ArrayList<>();
    runs.forEach(run -> problems.addAll(run.problems()));
    if (!problems.isEmpty()) {
      throw new AssertionError(mode + ":\n" + String.join("\n", problems));
    }
  }

  /** Each client's program on its own model memcached (client i on model i). */
  private static void runModels(ExecutorService pool, List<ClientRun> runs)
      throws InterruptedException {
    List<Future<?>> modelled = new ArrayList<>();
    for (int c = 0; c < runs.size(); c++) {
      ClientRun run = runs.get(c);
      int port = models.get(c).port();
      modelled.add(
          pool.submit(
              () -> {
                run.runModel(port);
                return null;
              }));
    }
    awaitAll(modelled);
  }

  /** Every client's program at once through a middleware started in {@code mode}. */
  private static void runThroughMiddleware(ExecutorService pool, List<ClientRun> runs, String mode)
      throws IOException, InterruptedException {
    List<String> flags = new ArrayList<>(List.of(mode.split(" ")));
    flags.addAll(List.of("-s", "true"));
    try (RunningMiddleware mw = RunningMiddleware.start(servers, flags.toArray(new String[0]))) {
      int port = mw.port();
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> ran = new ArrayList<>();
      for (ClientRun run : runs) {
        ran.add(
            pool.submit(
                () -> {
                  start.await();
                  run.runMiddleware(port);
                  return null;
                }));
      }
      start.countDown();
      awaitAll(ran);
    }
  }

  /** Waits for every client, then throws the first one's failure if any failed. */
  private static void awaitAll(List<Future<?>> clients) throws InterruptedException {
    ExecutionException first = null;
    for (Future<?> client : clients) {
      try {
        client.get();
      } catch (ExecutionException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw new AssertionError("a client failed", first.getCause());
    }
  }

  private static void flushAll(List<MemcachedProcess> memcacheds) throws IOException {
    for (MemcachedProcess memcached : memcacheds) {
      try (TextClient client = new TextClient(memcached.port())) {
        if (!client.call("flush_all\r\n").equals("OK\r\n")) {
          throw new IOException("flush_all refused by " + memcached.address());
        }
      }
    }
  }
}
