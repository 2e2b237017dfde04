package dev.cachelab.middleware.net;

import java.nio.channels.SelectionKey;

/**
 * A channel other than a client's registered in a net thread's selector (an event loop's server
 * connection). Net thread only.
 */
public interface SelectorTask {
  /** The selector reported the key ready. */
  void onSelected(SelectionKey key);
}
