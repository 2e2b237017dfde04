package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.protocol.RespReplies;
import java.util.List;

/**
 * {@link ErrorReplies} of redis' RESP2: {@code -ERR backend <host:port> unavailable|timed out}.
 * Built once at startup; immutable, any thread.
 */
public final class RespErrorReplies implements ErrorReplies {
  private static final byte[] INTERNAL_ERROR = RespReplies.error("middleware internal error");
  private static final byte[] NO_REPLICA = RespReplies.error("no backend available");
  private final byte[][] down;
  private final byte[][] timedOut;

  public RespErrorReplies(List<String> serverNames) {
    int n = serverNames.size();
    down = new byte[n][];
    timedOut = new byte[n][];
    for (int s = 0; s < n; s++) {
      down[s] = RespReplies.error("backend " + serverNames.get(s) + " unavailable");
      timedOut[s] = RespReplies.error("backend " + serverNames.get(s) + " timed out");
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
}
