package dev.cachelab.middleware.servers;

/**
 * The replies a worker sends when it cannot get one from a server, in the client's protocol. The
 * fan-out strategies are protocol-neutral and ask this for their error bytes. Implementations are
 * immutable and shared by the workers (any thread).
 */
public interface ErrorReplies {
  /** The server could not be reached (connection refused, reset, ejected). */
  byte[] backendDown(int server);

  /**
   * The connection to the server broke after a request that changes data was sent and before its
   * reply: the server may have applied it, so it is not sent again.
   */
  byte[] outcomeUnknown(int server);

  /** The server did not answer within the backend timeout. */
  byte[] backendTimedOut(int server);

  /** No server of the request's replicas is left to ask. */
  byte[] noReplicaLeft();

  /** A bug in the middleware ended the request (the worker carries on). */
  byte[] internalError();
}
