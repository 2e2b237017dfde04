package dev.cachelab.middleware.net;

/**
 * The connections holding a grown read buffer, oldest first: an intrusive doubly linked list
 * through {@link ClientConnection#holderPrev} and {@link ClientConnection#holderNext}, so that
 * adding and removing (once per large request) cost no hashing and no allocation. Net thread only.
 */
final class HolderList {
  private ClientConnection head;
  private ClientConnection tail;

  boolean isEmpty() {
    return head == null;
  }

  /** The connection holding a grown buffer longest, or null. */
  ClientConnection oldest() {
    return head;
  }

  /** The next younger holder after {@code c}, or null. */
  static ClientConnection next(ClientConnection c) {
    return c.holderNext;
  }

  /** Appends {@code c} (not in the list) as the youngest. */
  void add(ClientConnection c) {
    c.holderPrev = tail;
    c.holderNext = null;
    if (tail == null) {
      head = c;
    } else {
      tail.holderNext = c;
    }
    tail = c;
  }

  /** Removes {@code c} (in the list). */
  void remove(ClientConnection c) {
    if (c.holderPrev == null) {
      head = c.holderNext;
    } else {
      c.holderPrev.holderNext = c.holderNext;
    }
    if (c.holderNext == null) {
      tail = c.holderPrev;
    } else {
      c.holderNext.holderPrev = c.holderPrev;
    }
    c.holderPrev = null;
    c.holderNext = null;
  }
}
