package dev.cachelab.middleware.protocol;

/**
 * An incremental decoder of one client protocol (memcached text or redis RESP2). Fed whatever bytes
 * a read returned, it decodes at most one request per call. One instance per client connection; net
 * thread only.
 */
public interface RequestDecoder {
  /**
   * Decodes at most one request from {@code buf[from, to)} into {@code request}.
   *
   * @return the number of bytes consumed; 0 means "need more bytes" (nothing consumed; call again
   *     with the same start and more bytes). When positive, {@code request.status()} is the result,
   *     or null if the bytes were only skipped.
   */
  int decode(byte[] buf, int from, int to, Request request);

  /** Bytes the connection must be able to buffer for the largest request this decoder accepts. */
  int maxRequestBytes();

  /**
   * The length of the request being decoded, from its first byte, once it is known (a storage
   * command whose line has been read); 0 if not known. The connection grows its read buffer to it
   * at once rather than by doubling.
   */
  default int pendingRequestBytes() {
    return 0;
  }

  /**
   * Heap the decoder holds now beyond its small fixed state (the offsets of a large request being
   * decoded), for the connection to reserve from the buffer budget; 0 if none.
   */
  default long scratchBytes() {
    return 0;
  }

  /**
   * The error sent, in this protocol, before a connection is closed because its request does not
   * fit in the buffer budget. A shared constant.
   */
  byte[] outOfMemoryReply();
}
