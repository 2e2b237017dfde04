package dev.cachelab.middleware.worker;

import dev.cachelab.middleware.backend.ReplyLimit;
import dev.cachelab.middleware.backend.Watchdog;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.fanout.CasPropagation;
import dev.cachelab.middleware.fanout.PipelinedBatch;
import dev.cachelab.middleware.fanout.ReplicaDivergence;
import dev.cachelab.middleware.fanout.ReplicatedWrite;
import dev.cachelab.middleware.fanout.SingleRead;
import dev.cachelab.middleware.fanout.SplitRead;
import dev.cachelab.middleware.fanout.TargetReplies;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.reply.ReplyBuilder;
import dev.cachelab.middleware.reply.RequestFinisher;
import dev.cachelab.middleware.servers.ServerGeneration;
import dev.cachelab.middleware.stats.ThreadRecorder;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * A worker thread: takes requests from the queue, has each served by its fan-out strategy over this
 * worker's own blocking connections ({@link SingleRead}, {@link SplitRead}, {@link
 * ReplicatedWrite}, {@link CasPropagation}, or several at once by {@link PipelinedBatch}), hands
 * the reply built by its {@link ReplyBuilder} to the client connection and records the request's
 * times. One instance per thread; everything here is that thread's.
 *
 * <p>Reply rules (see {@code middleware/README.md}): a request sent to several servers (a
 * replicated write, {@code flush_all}, {@code verbosity}) succeeds only if every server succeeds;
 * otherwise the client gets the first failing server's reply, in target order. A split multi-get is
 * merged in the client's key order; if any of its servers fails, the client gets that server's
 * error. {@code cas} is checked on the primary alone and, if stored, propagated to the other
 * replicas with {@code set}.
 */
public final class Worker implements Runnable {
  /** Put on the queue once per worker to stop it. */
  public static final Request POISON = new Request();

  private final RequestQueue queue;
  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final RequestFinisher finisher;
  private final SingleRead singleRead;
  private final SplitRead splitRead;
  private final ReplicatedWrite replicatedWrite;
  private final CasPropagation casPropagation;
  private final PipelinedBatch pipelinedBatch;
  private final Request[] batch;
  private final Request[] pipelined;
  private boolean reported;

  /**
   * @param armAheadNanos how much earlier than the timeout the deadline is armed (the watchdog
   *     period), so that the client hears within the timeout; the timeout is the one of the server
   *     list a request was routed with
   * @param replyLimit how much heap one server reply may take (see {@link ReplyLimit})
   */
  public Worker(
      RequestQueue queue,
      Supplier<ServerGeneration> generations,
      Watchdog watchdog,
      ReplicaDivergence divergence,
      ThreadRecorder recorder,
      long armAheadNanos,
      int maxBatch,
      ReplyLimit replyLimit) {
    this.queue = queue;
    this.backends =
        new WorkerBackends(generations, watchdog, armAheadNanos, 2 * armAheadNanos, replyLimit);
    this.reply = new ReplyBuilder(recorder, generations.get().errors());
    this.finisher = new RequestFinisher(recorder, reply);
    TargetReplies targets = new TargetReplies(MiddlewareConfig.MAX_SERVERS);
    this.singleRead = new SingleRead(this.backends, reply);
    this.splitRead = new SplitRead(this.backends, reply, targets, singleRead);
    this.replicatedWrite = new ReplicatedWrite(this.backends, reply, targets, divergence);
    this.casPropagation = new CasPropagation(this.backends, reply, targets);
    this.batch = new Request[Math.max(1, maxBatch)];
    this.pipelined = new Request[batch.length];
    this.pipelinedBatch =
        new PipelinedBatch(this.backends, reply, singleRead, batch.length, this::finish);
  }

  @Override
  public void run() {
    backends.connectAll();
    try {
      while (true) {
        int taken = queue.take(batch);
        if (batch[0] == POISON) {
          batch[0] = null;
          break;
        }
        processTaken(taken);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      backends.closeAll();
    }
  }

  /**
   * Processes {@code batch[0, taken)}: the single-server requests among them are pipelined, the
   * others processed one by one (after them; in request order when the batch holds a chain).
   */
  private void processTaken(int taken) {
    for (int i = 0; i < taken; i++) {
      if (batch[i].chained) {
        processInOrder(taken);
        return;
      }
    }
    int pipelinedCount = 0;
    ServerGeneration first = batch[0].generation; // pipelined: those routed with the first's list
    for (int i = 0; i < taken; i++) {
      if (taken > 1 && PipelinedBatch.accepts(batch[i]) && batch[i].generation == first) {
        pipelined[pipelinedCount++] = batch[i];
        batch[i] = null;
      }
    }
    runPipelined(pipelinedCount);
    for (int i = 0; i < taken; i++) {
      Request request = batch[i];
      if (request != null) {
        batch[i] = null;
        processSafely(request);
      }
    }
  }

  /**
   * Processes {@code batch[0, taken)} holding a chain (several requests of one connection) in
   * request order: runs of requests that can be pipelined together are pipelined, each other
   * request is processed alone between them, so none overtakes a request of its connection before
   * it (a {@code get} after a replicated {@code set}).
   */
  private void processInOrder(int taken) {
    int count = 0;
    for (int i = 0; i < taken; i++) {
      Request request = batch[i];
      batch[i] = null;
      boolean joins =
          PipelinedBatch.accepts(request)
              && (count == 0 || request.generation == pipelined[0].generation);
      if (!joins) {
        runPipelined(count);
        count = 0;
      }
      if (PipelinedBatch.accepts(request)) {
        pipelined[count++] = request;
      } else {
        processSafely(request);
      }
    }
    runPipelined(count);
  }

  /** Pipelines {@code pipelined[0, count)} (one alone is processed as such). */
  private void runPipelined(int count) {
    if (count == 1) {
      processSafely(pipelined[0]);
    } else if (count > 1) {
      use(pipelined[0].generation);
      try {
        pipelinedBatch.run(pipelined, count);
      } catch (RuntimeException e) {
        reportOnce(e);
      }
    }
    Arrays.fill(pipelined, 0, count, null);
  }

  private void processSafely(Request request) {
    try {
      process(request);
    } catch (RuntimeException e) {
      // Never let one request kill the worker (the request is dropped).
      reportOnce(e);
    }
  }

  private void reportOnce(RuntimeException e) {
    if (!reported) {
      reported = true;
      System.err.println("cachelab middleware: worker survived an unexpected error: " + e);
    }
  }

  /** Serves the next requests with the server list they were routed with. */
  private void use(ServerGeneration generation) {
    backends.use(generation);
    reply.use(generation.errors());
  }

  private void process(Request request) {
    use(request.generation);
    reply.reset();
    request.sentNanos = 0;
    try {
      serve(request);
    } catch (RuntimeException e) {
      // Never let one request kill the worker.
      reply.internalError();
    }
    request.repliedNanos = System.nanoTime();
    if (request.sentNanos == 0) {
      request.sentNanos = request.repliedNanos;
    }
    finish(request);
  }

  private void serve(Request request) {
    long deadline = backends.deadline(request.dequeuedNanos);
    Command command = request.command();
    switch (request.family()) {
      case RETRIEVAL -> {
        if (request.isSplit()) {
          splitRead.run(request, deadline);
        } else {
          singleRead.run(request, request.server(0), deadline);
        }
      }
      case STORAGE, KEYED, BROADCAST, FIRST_SERVER -> {
        if (command == Command.CAS && request.serverCount() > 1) {
          casPropagation.run(request, deadline);
        } else {
          replicatedWrite.run(request, deadline);
        }
      }
      case LOCAL -> throw new IllegalStateException("local command queued: " + request);
    }
    if (request.noreply()) {
      reply.discard();
    } else if (request.metaQuiet()) {
      reply.discardIfQuiet(request.command());
    }
  }

  /** Hands the built reply to the client connection and records the request. */
  private void finish(Request request) {
    finisher.finish(request);
  }
}
