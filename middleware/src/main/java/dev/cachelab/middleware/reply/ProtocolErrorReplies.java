package dev.cachelab.middleware.reply;

import dev.cachelab.middleware.protocol.RespReplies;
import dev.cachelab.middleware.servers.ErrorReplies;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;

/**
 * {@link ErrorReplies} in one protocol: the same messages ({@code backend <host:port> unavailable},
 * {@code ... timed out}, {@code ... connection broke before its reply; the write may have been
 * applied}, {@code no backend available}, {@code middleware internal error}) as memcached's {@code
 * SERVER_ERROR <message>} or redis' {@code -ERR <message>}. Built once at startup; immutable, any
 * thread.
 */
public final class ProtocolErrorReplies implements ErrorReplies {
  private final byte[] internalError;
  private final byte[] noReplica;
  private final byte[][] down;
  private final byte[][] timedOut;
  private final byte[][] outcomeUnknown;

  private ProtocolErrorReplies(List<String> serverNames, Function<String, byte[]> format) {
    internalError = format.apply("middleware internal error");
    noReplica = format.apply("no backend available");
    int n = serverNames.size();
    down = new byte[n][];
    timedOut = new byte[n][];
    outcomeUnknown = new byte[n][];
    for (int s = 0; s < n; s++) {
      down[s] = format.apply("backend " + serverNames.get(s) + " unavailable");
      timedOut[s] = format.apply("backend " + serverNames.get(s) + " timed out");
      outcomeUnknown[s] =
          format.apply(
              "backend "
                  + serverNames.get(s)
                  + " connection broke before its reply; the write may have been applied");
    }
  }

  /** memcached text protocol: {@code SERVER_ERROR <message>\r\n}. */
  public static ErrorReplies memcached(List<String> serverNames) {
    return new ProtocolErrorReplies(
        serverNames,
        message -> ("SERVER_ERROR " + message + "\r\n").getBytes(StandardCharsets.US_ASCII));
  }

  /** redis RESP2: {@code -ERR <message>\r\n}. */
  public static ErrorReplies redis(List<String> serverNames) {
    return new ProtocolErrorReplies(serverNames, RespReplies::error);
  }

  @Override
  public byte[] backendDown(int server) {
    return down[server];
  }

  @Override
  public byte[] outcomeUnknown(int server) {
    return outcomeUnknown[server];
  }

  @Override
  public byte[] backendTimedOut(int server) {
    return timedOut[server];
  }

  @Override
  public byte[] noReplicaLeft() {
    return noReplica;
  }

  @Override
  public byte[] internalError() {
    return internalError;
  }
}
