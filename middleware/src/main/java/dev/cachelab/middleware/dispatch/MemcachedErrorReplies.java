package dev.cachelab.middleware.dispatch;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@link ErrorReplies} of the memcached text protocol: {@code SERVER_ERROR backend <host:port>
 * unavailable|timed out}. Built once at startup; immutable, any thread.
 */
public final class MemcachedErrorReplies implements ErrorReplies {
  private static final byte[] INTERNAL_ERROR = ascii("SERVER_ERROR middleware internal error\r\n");
  private static final byte[] NO_REPLICA = ascii("SERVER_ERROR no backend available\r\n");
  private final byte[][] down;
  private final byte[][] timedOut;

  public MemcachedErrorReplies(List<String> serverNames) {
    int n = serverNames.size();
    down = new byte[n][];
    timedOut = new byte[n][];
    for (int s = 0; s < n; s++) {
      down[s] = ascii("SERVER_ERROR backend " + serverNames.get(s) + " unavailable\r\n");
      timedOut[s] = ascii("SERVER_ERROR backend " + serverNames.get(s) + " timed out\r\n");
    }
  }

  @Override
  public byte[] backendDown(int server) {
    return down[server];
  }

  @Override
  public byte[] backendTimedOut(int server) {
    return timedOut[server];
  }

  @Override
  public byte[] noReplicaLeft() {
    return NO_REPLICA;
  }

  @Override
  public byte[] internalError() {
    return INTERNAL_ERROR;
  }

  private static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }
}
