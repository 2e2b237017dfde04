package dev.cachelab.middleware.loop;

import dev.cachelab.middleware.backend.ReplyLimit;
import dev.cachelab.middleware.backend.ReplyTooLargeException;
import dev.cachelab.middleware.fanout.PipelinedBatch;
import dev.cachelab.middleware.net.RequestDispatch;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.reply.ReplyBuilder;
import dev.cachelab.middleware.reply.RequestFinisher;
import dev.cachelab.middleware.servers.ServerGeneration;
import dev.cachelab.middleware.stats.ThreadRecorder;
import dev.cachelab.middleware.worker.RequestQueue;
import java.io.IOException;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;

/**
 * An event loop ({@code --event-loops}): its net thread serves the single-server requests of its
 * clients itself, on non-blocking connections of its own to the servers ({@link LoopBackend}), with
 * no queue, no worker and no wake-up between a request's arrival and its reply. A chain (one
 * connection's requests) is sent on at the end of the selector round in which it was decoded, every
 * server's share in one write; each reply is completed as it arrives. A chain holding a request
 * that needs several servers (a replicated write, a split multi-get, a broadcast) goes whole to the
 * worker pool's queue, so a connection's requests are never reordered.
 *
 * <p>Failures: a server whose connection fails, or whose oldest unanswered request passes the
 * backend timeout, has its connection closed and the failure counted towards its ejection; its
 * unanswered reads with a fallback replica in rotation are sent there, the others get the server's
 * error reply. A server out of rotation is not sent to (its reads go to their fallback). Reads are
 * not hedged. One per net thread; that thread calls every method but {@link #enqueue}.
 */
public final class EventLoopDispatch implements RequestDispatch {
  private static final int MAX_CONNECT_TIMEOUT_MS = 1000;

  private final RequestQueue workers;
  private final Supplier<ServerGeneration> generations;
  private final ReplyBuilder reply;
  private final RequestFinisher finisher;
  private final ArrayDeque<Request> staged = new ArrayDeque<>();
  private final ConcurrentLinkedQueue<Request> handedOver = new ConcurrentLinkedQueue<>();
  private final ArrayList<LoopBackend> dirty = new ArrayList<>();
  private final ArrayList<LoopBackend> retired = new ArrayList<>();
  private Selector selector;
  private volatile Thread loopThread;
  private ServerGeneration generation;
  private LoopBackend[] backends = new LoopBackend[0];
  private int unanswered;
  private final ReplyLimit replyLimit;

  /**
   * @param workers the worker pool's queue, for chains this loop does not serve itself
   * @param recorder the net thread's recorder (this loop records on that thread)
   * @param replyLimit how much heap one server reply may take (see {@link ReplyLimit})
   */
  public EventLoopDispatch(
      RequestQueue workers,
      Supplier<ServerGeneration> generations,
      ThreadRecorder recorder,
      ReplyLimit replyLimit) {
    this.replyLimit = replyLimit;
    this.workers = workers;
    this.generations = generations;
    this.reply = new ReplyBuilder(recorder, generations.get().errors());
    this.finisher = new RequestFinisher(recorder, reply);
  }

  /** A chain served here is forwarded in this round's {@link #publish}. */
  @Override
  public boolean forwardsInRound() {
    return true;
  }

  @Override
  public void attach(Selector netSelector) {
    this.selector = netSelector;
  }

  @Override
  public boolean hasRoom() {
    return workers.hasRoom();
  }

  @Override
  public void onRoom(Runnable listener) {
    workers.onRoom(listener);
  }

  @Override
  public int stage(Request head) {
    head.enqueuedNanos = System.nanoTime();
    staged.addLast(head);
    return staged.size() - 1;
  }

  @Override
  public int stageJoined(Request request) {
    request.enqueuedNanos = System.nanoTime();
    return staged.size() - 1;
  }

  /** Unanswered requests on this loop's connections, or requests left to running workers. */
  @Override
  public boolean awaitsWorkers() {
    return unanswered > 0 || workers.awaitsWorkers();
  }

  @Override
  public int enqueue(Request head) {
    long now = System.nanoTime();
    for (Request r = head; r != null; r = r.chainNext) {
      r.enqueuedNanos = now;
    }
    if (Thread.currentThread() == loopThread) {
      staged.addLast(head); // completed here: sent at the end of this round
    } else {
      handedOver.add(head); // a worker completed the connection's previous chain
      selector.wakeup();
    }
    return 0;
  }

  @Override
  public void publish() {
    if (loopThread == null) {
      loopThread = Thread.currentThread();
    }
    Request head;
    while ((head = handedOver.poll()) != null) {
      staged.addLast(head);
    }
    do {
      long now = System.nanoTime();
      if (!staged.isEmpty() && generations.get() != generation) {
        use(generations.get());
      }
      while ((head = staged.pollFirst()) != null) {
        dispatch(head, now);
      }
      flushDirty();
      if (unanswered > 0) {
        expire(now);
      }
    } while (!staged.isEmpty()); // completions above may have released a connection's next chain
    if (!retired.isEmpty()) {
      retired.removeIf(
          b -> {
            boolean done = !b.hasPending();
            if (done) {
              b.close();
            }
            return done;
          });
    }
  }

  private void dispatch(Request head, long now) {
    for (Request r = head; r != null; r = r.chainNext) {
      r.publishedNanos = now;
    }
    if (!servesHere(head)) {
      for (Request r = head; r != null; r = r.chainNext) {
        r.ownData(); // the client's read buffer is the net thread's
      }
      workers.enqueue(head);
      return;
    }
    Request r = head;
    while (r != null) {
      Request next = r.chainNext; // a request failed at once is recycled by its completion
      r.dequeuedNanos = now;
      r.sentNanos = 0;
      send(r, now);
      r = next;
    }
  }

  /** Whether every request of the chain goes to one server, with the loop's server list. */
  private boolean servesHere(Request head) {
    for (Request r = head; r != null; r = r.chainNext) {
      if (!PipelinedBatch.accepts(r) || r.generation != generation) {
        return false;
      }
    }
    return true;
  }

  private void send(Request request, long now) {
    int server = request.server(0);
    LoopBackend backend = usable(server, now);
    if (backend == null && isRead(request, server)) {
      backend = fallback(request, server, now);
      if (backend != null) {
        reply.countCutShort(server); // the server that failed is counted, as a worker counts it
      }
    }
    if (backend == null) {
      answerFailure(request, server, false, false, now);
      return;
    }
    request.sentNanos = now;
    backend.send(request);
    unanswered++;
    markDirty(backend);
  }

  private static boolean isRead(Request request, int server) {
    int fallback = request.fallbackServer();
    return fallback >= 0 && fallback != server && request.family() == Command.Family.RETRIEVAL;
  }

  /**
   * Where a read whose server {@code failed} failed is sent: its fallback replica; with round-robin
   * routing (every server holds every key) the first usable server from the fallback on, so that
   * two servers down of three still leave the third to read from. Null if none is usable.
   */
  private LoopBackend fallback(Request request, int failed, long now) {
    int first = request.fallbackServer();
    if (!request.fallbackToAny()) {
      return usable(first, now);
    }
    for (int i = 0; i < backends.length; i++) {
      int server = (first + i) % backends.length;
      LoopBackend backend = server == failed ? null : usable(server, now);
      if (backend != null) {
        return backend;
      }
    }
    return null;
  }

  /** The server's connection if it is in rotation and connected (or connects now), else null. */
  private LoopBackend usable(int server, long now) {
    LoopBackend backend = backends[server];
    if (backend == null) {
      backend =
          new LoopBackend(
              this,
              server,
              generation.addresses().get(server),
              generation.health().get(server),
              selector,
              replyLimit);
      backends[server] = backend;
    }
    if (!backend.health().inRotation()) {
      return null;
    }
    int connectTimeoutMs =
        Math.min(MAX_CONNECT_TIMEOUT_MS, generation.timeouts().backendTimeoutMs());
    return backend.connected(now, connectTimeoutMs) ? backend : null;
  }

  /** Serves from now on with a new server list; the old connections finish what they were sent. */
  private void use(ServerGeneration next) {
    for (LoopBackend backend : backends) {
      if (backend != null) {
        if (backend.hasPending()) {
          retired.add(backend);
        } else {
          backend.close();
        }
      }
    }
    generation = next;
    backends = new LoopBackend[next.size()];
  }

  private void markDirty(LoopBackend backend) {
    if (!backend.dirty) {
      backend.dirty = true;
      dirty.add(backend);
    }
  }

  private void flushDirty() {
    while (!dirty.isEmpty()) {
      LoopBackend backend = dirty.remove(dirty.size() - 1);
      backend.dirty = false;
      if (!backend.flush()) {
        failed(backend, false);
      }
    }
  }

  /** Fails the connections whose oldest unanswered request has waited past the timeout. */
  private void expire(long now) {
    long timeoutNanos = generation.timeouts().backendTimeoutNanos();
    for (LoopBackend backend : backends) {
      if (backend != null) {
        expireIfOverdue(backend, now, timeoutNanos);
      }
    }
    for (int i = 0; i < retired.size(); i++) {
      LoopBackend backend = retired.get(i);
      if (backend.hasPending()) { // served with its own list's timeout
        expireIfOverdue(backend, now, backend.head().generation.timeouts().backendTimeoutNanos());
      }
    }
  }

  private void expireIfOverdue(LoopBackend backend, long now, long timeoutNanos) {
    if (backend.hasPending() && now - backend.head().sentNanos > timeoutNanos) {
      failed(backend, true);
    }
  }

  /**
   * The selector found the server's socket readable: reads what it has and completes every request
   * whose reply is whole, in order.
   */
  void readReplies(LoopBackend backend) {
    long now = 0;
    while (true) {
      int read;
      try {
        read = backend.readSome();
        while (backend.hasPending() && backend.headReplyComplete()) {
          Request request = backend.poll();
          unanswered--;
          if (now == 0) {
            now = System.nanoTime();
            backend.health().succeeded(now);
          }
          answer(request, backend, now);
          backend.consumeReply();
        }
      } catch (ReplyTooLargeException e) {
        replyTooLarge(backend);
        return;
      } catch (IOException e) {
        failed(backend, false); // a broken connection or a malformed reply
        return;
      }
      if (read < 0 && !backend.hasPending()) {
        backend.close(); // closed after its last reply: the next request connects afresh
        return;
      }
      if (read < 0 || backend.outOfStep()) {
        failed(backend, false); // closed with requests unanswered, or bytes nobody asked for
        return;
      }
      if (!backend.mayHaveMore() || !backend.hasPending()) {
        return;
      }
    }
  }

  private void answer(Request request, LoopBackend backend, long now) {
    reply.use(request.generation.errors());
    reply.reset();
    if (request.family() == Command.Family.RETRIEVAL) {
      reply.setHits(backend.hits());
    }
    reply.countReply(backend.server(), backend.replyIsError());
    request.repliedNanos = now;
    if (request.metaQuiet() || request.resp3Shape() != null) {
      reply.append(backend.replyView()); // shown or converted from a copy
      if (request.metaQuiet()) {
        reply.discardIfQuiet(request.command());
      }
      finisher.finish(request);
    } else if (request.noreply()) {
      finisher.finish(request); // nothing to write
    } else {
      finisher.finish(request, backend.replyView()); // the server's bytes as they are
    }
  }

  /**
   * The head request's reply did not fit the {@link ReplyLimit}: that request gets the error, and
   * the connection, in the middle of the reply, is closed as after a failure, without counting one
   * against the server (its other requests go to their fallbacks or get the error reply).
   */
  private void replyTooLarge(LoopBackend backend) {
    Request request = backend.poll();
    unanswered--;
    reply.use(request.generation.errors());
    reply.reset();
    reply.append(ReplyTooLargeException.reply(request.respCommand() != null));
    reply.countReply(backend.server(), true);
    request.repliedNanos = System.nanoTime();
    finisher.finish(request);
    closeAndReroute(backend, false, System.nanoTime());
  }

  /**
   * The server's connection failed or timed out: closes it, counts the failure, and sends its
   * unanswered reads to their fallback replicas (the other requests get the error reply).
   */
  void failed(LoopBackend backend, boolean timedOut) {
    long now = System.nanoTime();
    Request head = backend.head();
    if (timedOut && head != null) {
      backend.health().timedOut(now, System.identityHashCode(head.connection));
    } else {
      backend.health().failed(now);
    }
    closeAndReroute(backend, timedOut, now);
  }

  private void closeAndReroute(LoopBackend backend, boolean timedOut, long now) {
    backend.close();
    int server = backend.server();
    boolean current = server < backends.length && backends[server] == backend;
    Request request;
    while ((request = backend.poll()) != null) {
      unanswered--;
      boolean retry = current && isRead(request, server) && !(timedOut && request.slow());
      LoopBackend fallback = retry ? fallback(request, server, now) : null;
      if (fallback != null) {
        reply.countCutShort(server);
        request.sentNanos = now;
        fallback.send(request);
        unanswered++;
        markDirty(fallback);
      } else {
        answerFailure(request, server, timedOut, true, now);
      }
    }
  }

  /**
   * Answers a request its server failed. {@code handedOver}: it was given to the server's
   * connection, which then broke (not by a timeout): a write may have been applied, and says so.
   */
  private void answerFailure(
      Request request, int server, boolean timedOut, boolean handedOver, long now) {
    reply.use(request.generation.errors());
    reply.reset();
    if (handedOver && !timedOut) {
      reply.append(reply.reportBroken(server, request));
    } else {
      reply.replyFailure(server, timedOut);
    }
    if (request.noreply()) {
      reply.discard();
    }
    request.repliedNanos = now;
    if (request.sentNanos == 0) {
      request.sentNanos = now;
    }
    finisher.finish(request);
  }

  @Override
  public void close() {
    for (LoopBackend backend : backends) {
      if (backend != null) {
        backend.close();
      }
    }
    retired.forEach(LoopBackend::close);
  }
}
