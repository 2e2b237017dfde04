package dev.cachelab.middleware.routing;

import dev.cachelab.middleware.protocol.KeyPlacement;
import dev.cachelab.middleware.protocol.Request;

/**
 * Chooses the server(s) of a parsed request and writes them into it ({@link Request#addServer},
 * {@link Request#setKeyServer}). Net thread only: implementations keep unsynchronised state.
 *
 * <p>Rules common to both modes: {@code flush_all} and {@code verbosity} go to every server; {@code
 * version} goes to server 0; the first target of a write is its primary, which alone checks a
 * {@code cas} (see {@code middleware/README.md}). As a {@link KeyPlacement} it tells the redis
 * front end whether several keys can go whole to the same servers.
 */
public interface Router extends KeyPlacement {
  void route(Request request);
}
