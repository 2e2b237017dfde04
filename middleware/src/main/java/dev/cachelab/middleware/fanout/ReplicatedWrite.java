package dev.cachelab.middleware.fanout;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.reply.ReplyBuilder;
import java.io.IOException;

/**
 * A request with a one-line reply sent to every target (a replicated write, {@code flush_all},
 * {@code verbosity}, or a one-server command): all sent before any reply is read; the client gets
 * the first failure in target order, else the primary's reply. A write applied on some targets and
 * failed on others is counted (and repaired if asked) by {@link DivergenceRepair}. One per worker;
 * its thread only.
 */
public final class ReplicatedWrite {
  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final TargetReplies targets;
  private final DivergenceRepair repair;

  public ReplicatedWrite(
      WorkerBackends backends,
      ReplyBuilder reply,
      TargetReplies targets,
      ReplicaDivergence divergence) {
    this.backends = backends;
    this.reply = reply;
    this.targets = targets;
    this.repair = new DivergenceRepair(backends, targets, divergence);
  }

  public void run(Request request, long deadline) {
    int count = request.serverCount();
    for (int i = 0; i < count; i++) {
      int server = request.server(i);
      BackendConnection backend = backends.get(server);
      if (!targets.open(i, server, backend, deadline, reply, request)) {
        continue;
      }
      try {
        WorkerBackends.sendRetryingStale(backend, request);
        targets.succeeded(i);
        if (count > 1) {
          backend.setAside(); // until its reply is read, after the sends to the other targets
        }
      } catch (IOException e) {
        targets.failed(i, reply.reportFailure(server, WorkerBackends.fail(backend)));
      }
    }
    for (int i = 0; i < count; i++) {
      if (targets.ok(i)) {
        int server = request.server(i);
        BackendConnection backend = backends.get(server);
        backends.resume(backend);
        try {
          WorkerBackends.readReplyRetryingStale(backend, request);
          backend.disarm();
          reply.countReply(server, backend);
        } catch (IOException e) {
          boolean timedOut = WorkerBackends.fail(backend);
          targets.failed(i, reply.reportSentFailure(server, timedOut, request));
        }
      }
    }
    targets.appendCombined(request.command(), count, request, backends, reply);
    repair.afterWrite(request, count);
  }
}
