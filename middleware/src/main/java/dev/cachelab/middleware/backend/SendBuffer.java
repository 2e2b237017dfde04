package dev.cachelab.middleware.backend;

/** A server connection's buffer of requests to send; the owning thread only. */
public interface SendBuffer {
  /** Appends {@code bytes[from, from + length)}. */
  void append(byte[] bytes, int from, int length);
}
