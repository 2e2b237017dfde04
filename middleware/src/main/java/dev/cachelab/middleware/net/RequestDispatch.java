package dev.cachelab.middleware.net;

import dev.cachelab.middleware.protocol.Request;
import java.nio.channels.Selector;

/**
 * Where a net thread sends the forwarded requests it decodes: the shared request queue of the
 * worker pool, or an event loop that serves them on the net thread itself. The net thread calls
 * every method but {@link #enqueue} and {@link #onRoom}.
 */
public interface RequestDispatch {
  /** Whether one more request fits (if not, the room listener is armed). */
  boolean hasRoom();

  /** Stamps the first request of a chain and holds it until {@link #publish}; the length found. */
  int stage(Request head);

  /** Stamps a request that joined the chain staged in this round; the length found. */
  int stageJoined(Request request);

  /** End of a selector round: sends the staged requests on. */
  void publish();

  /** Whether the net thread should look again within a millisecond even without an event. */
  boolean awaitsWorkers();

  /** Any thread: a connection's next chain, sent on now (or at the end of the round). */
  int enqueue(Request head);

  /** Called when room appears after {@link #hasRoom} found none. */
  void onRoom(Runnable listener);

  /**
   * Whether the staged requests are forwarded by the net thread itself in {@link #publish}, so that
   * a data block may stay in its client's read buffer until then (see {@link
   * ClientConnection#lendData}).
   */
  default boolean forwardsInRound() {
    return false;
  }

  /** The net thread's selector, once, before its loop starts (an event loop registers in it). */
  default void attach(Selector selector) {}

  /** The net thread is ending: close what the dispatch opened. */
  default void close() {}
}
