package dev.cachelab.middleware.stats;

/** Why a request failed; the {@code kind} label of {@code cachelab_middleware_errors_total}. */
public enum ErrorKind {
  /** The client sent a malformed or unknown command. */
  CLIENT_ERROR("client_error"),
  /** A server answered ERROR, CLIENT_ERROR or SERVER_ERROR. */
  SERVER_ERROR("server_error"),
  /** A server did not answer within {@code --backend-timeout-ms}. */
  TIMEOUT("timeout"),
  /** A server was unreachable or closed the connection. */
  BACKEND_DOWN("backend_down");

  public static final int COUNT = 4;

  private final String label;

  ErrorKind(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
