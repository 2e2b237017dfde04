package dev.cachelab.middleware;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * A listening socket the machine would not give (port in use, no permission): the message names the
 * address, the flags that chose it and the system's reason, in one line. Thrown by {@link
 * Middleware} on the main thread; {@link Main} prints it and exits with status 1.
 */
public final class ListenFailure extends IOException {
  public ListenFailure(String what, InetSocketAddress address, String flags, IOException cause) {
    super(
        "cannot "
            + what
            + " on "
            + address.getHostString()
            + ":"
            + address.getPort()
            + " ("
            + flags
            + "): "
            + cause.getMessage(),
        cause);
  }
}
