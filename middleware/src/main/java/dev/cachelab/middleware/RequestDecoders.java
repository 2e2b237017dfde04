package dev.cachelab.middleware;

import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.config.Protocol;
import dev.cachelab.middleware.protocol.KeyPlacement;
import dev.cachelab.middleware.protocol.RequestDecoder;
import dev.cachelab.middleware.protocol.RequestParser;
import dev.cachelab.middleware.protocol.RespParser;
import java.util.function.Supplier;

/**
 * Makes the request decoder of each client connection for the configured protocol. Built by the
 * main thread; the supplier is called by the net threads, one decoder per accepted connection.
 */
final class RequestDecoders {
  private RequestDecoders() {}

  /**
   * @param placement where keys live now (the redis decoder keeps several keys of one command
   *     together)
   */
  static Supplier<RequestDecoder> of(MiddlewareConfig config, KeyPlacement placement) {
    int maxValueBytes = config.maxValueBytes();
    if (config.protocol() == Protocol.REDIS) {
      return () -> new RespParser(maxValueBytes, placement, config.adminCommands());
    }
    return () -> new RequestParser(maxValueBytes, config.adminCommands());
  }
}
