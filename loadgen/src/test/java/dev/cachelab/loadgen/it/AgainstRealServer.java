package dev.cachelab.loadgen.it;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of the tests that run the load generator against one real server process: starts it on a
 * free loopback port before each test (JUnit's thread), stops it after, and builds the loadgen's
 * arguments that point at it.
 */
abstract class AgainstRealServer {
  @TempDir Path dir;
  ServerProcess server;

  /** Starts the server under test. */
  abstract ServerProcess startServer() throws Exception;

  /** The protocol and output flags every loadgen run of the test class shares. */
  abstract String[] protocolArgs();

  @BeforeEach
  void start() throws Exception {
    server = startServer();
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
  }

  /** The loadgen's arguments for the running server, then {@code extra}. */
  String[] args(String... extra) {
    String[] target = {"-s", "127.0.0.1", "-p", "" + server.port};
    return LoadgenRunner.concat(LoadgenRunner.concat(target, protocolArgs()), extra);
  }
}
