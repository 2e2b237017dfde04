package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.protocol.RespReplies;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RedisServers;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Pipelined requests on one client connection: with the batched worker a connection's pipelined
 * requests go to the servers together (a window of {@code --worker-batch} requests), and every
 * reply still comes back in request order, for mixed gets, sets, misses, quiet writes and
 * multi-gets over two servers, also while one server answers late (stopped for a moment), in the
 * memcached text protocol and in RESP. The same pipelines at the default flags give the same
 * replies.
 */
class ClientPipelineIT {
  private static final int ROUNDS = 40;

  @Test
  void memcachedPipelinesGetTheirRepliesInOrderWithTheBatchedWorker() throws Exception {
    runMemcached("-t", "2", "-s", "true", "--routing", "hash", "--worker-batch", "16");
  }

  @Test
  void memcachedPipelinesGetTheirRepliesInOrderInRoundRobinMode() throws Exception {
    runMemcached("-t", "2", "-s", "true", "--worker-batch", "16");
  }

  @Test
  void memcachedPipelinesGetTheirRepliesInOrderAtTheDefaults() throws Exception {
    runMemcached("-t", "8", "-s", "false");
  }

  @Test
  void respPipelinesGetTheirRepliesInOrderWithTheBatchedWorker() throws Exception {
    runRedis("-t", "2", "-s", "true", "--routing", "hash", "--worker-batch", "16");
  }

  @Test
  void respPipelinesGetTheirRepliesInOrderAtTheDefaults() throws Exception {
    runRedis("-t", "8", "-s", "false");
  }

  /**
   * The window itself: 16 pipelined gets reach a server that has not answered yet (a fake one that
   * answers only once it has read 16 requests, or after 3 s). With one request per connection at a
   * time it would see one.
   */
  @Test
  void aPipelineReachesTheServerWholeWithTheBatchedWorker() throws Exception {
    try (HoldingServer server = new HoldingServer(16);
        RunningMiddleware mw =
            RunningMiddleware.startWithAddresses(
                List.of("127.0.0.1:" + server.port()), "-t", "1", "--worker-batch", "16");
        TextClient client = mw.client()) {
      StringBuilder pipeline = new StringBuilder();
      for (int i = 0; i < 16; i++) {
        pipeline.append("get w").append(i).append("\r\n");
      }
      client.send(pipeline.toString());
      for (int i = 0; i < 16; i++) {
        assertThat(client.readLine()).isEqualTo("END\r\n");
      }
      assertThat(server.largestHeld()).as("requests held by the server at once").isEqualTo(16);
    }
  }

  private static void runMemcached(String... flags) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    try {
      try (RunningMiddleware mw = RunningMiddleware.start(servers, flags);
          TextClient client = mw.client()) {
        client.setTimeoutMillis(10_000);
        List<String> problems = new CopyOnWriteArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
          boolean pause = round % 10 == 5; // server 1 answers late: stopped for a moment
          if (pause) {
            servers.get(1).signal("STOP");
          }
          MemcachedPipeline pipeline = new MemcachedPipeline(round);
          client.send(pipeline.requests.toString());
          if (pause) {
            Thread.sleep(100);
            servers.get(1).signal("CONT");
          }
          for (int i = 0; i < pipeline.replies.size(); i++) {
            String expected = pipeline.replies.get(i);
            String reply = readText(client, expected);
            if (!reply.equals(expected)) {
              problems.add("round " + round + " reply " + i + ": " + reply + " != " + expected);
            }
          }
        }
        assertThat(problems).isEmpty();
        assertThat(client.call("version\r\n")).startsWith("VERSION ");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /** Reads as many bytes as the expected reply has (a wrong reply shows as a mismatch). */
  private static String readText(TextClient client, String expected) throws IOException {
    return new String(
        client.readBytes(expected.getBytes(StandardCharsets.ISO_8859_1).length),
        StandardCharsets.ISO_8859_1);
  }

  /** One round's pipeline of mixed requests and the replies they must get, in order. */
  private static final class MemcachedPipeline {
    final StringBuilder requests = new StringBuilder();
    final List<String> replies = new ArrayList<>();

    MemcachedPipeline(int round) {
      for (int i = 0; i < 6; i++) {
        String key = "p" + round + "_" + i;
        String value = "v".repeat(1 + (round * 31 + i * 17) % 300) + i;
        add(
            "set " + key + " " + i + " 0 " + value.length() + "\r\n" + value + "\r\n",
            "STORED\r\n");
        add("get " + key + "\r\n", item(key, i, value) + "END\r\n");
        add("get miss" + key + "\r\n", "END\r\n");
        requests.append("set q").append(key).append(" 0 0 1 noreply\r\nq\r\n");
        add(
            "get q" + key + " " + key + " nope\r\n",
            item("q" + key, 0, "q") + item(key, i, value) + "END\r\n");
        add("incr n" + key + " 1\r\n", "NOT_FOUND\r\n");
        add("delete " + key + "\r\n", "DELETED\r\n");
        add("get " + key + "\r\n", "END\r\n");
      }
    }

    private static String item(String key, int flags, String value) {
      return "VALUE " + key + " " + flags + " " + value.length() + "\r\n" + value + "\r\n";
    }

    private void add(String request, String reply) {
      requests.append(request);
      replies.add(reply);
    }
  }

  private static void runRedis(String... flags) throws Exception {
    try (RedisServers servers = RedisServers.start(2);
        RunningMiddleware mw = servers.middleware(flags);
        RespClient client = new RespClient(mw.port())) {
      client.setTimeoutMillis(10_000);
      List<String> problems = new ArrayList<>();
      for (int round = 0; round < ROUNDS; round++) {
        boolean pause = round % 10 == 5;
        if (pause) {
          servers.behind().get(1).signal("STOP");
        }
        List<String> expected = new ArrayList<>();
        StringBuilder pipeline = new StringBuilder();
        for (int i = 0; i < 6; i++) {
          String key = "r" + round + "_" + i;
          String value = "x".repeat(1 + (round * 13 + i * 29) % 200);
          add(pipeline, expected, "+OK\r\n", "SET", key, value);
          add(pipeline, expected, bulk(value), "GET", key);
          add(pipeline, expected, "$-1\r\n", "GET", "miss" + key);
          add(pipeline, expected, ":1\r\n", "INCR", "n" + key);
          add(pipeline, expected, "*2\r\n" + bulk(value) + "$-1\r\n", "MGET", key, "miss" + key);
          add(pipeline, expected, ":1\r\n", "DEL", key);
          add(pipeline, expected, "$-1\r\n", "GET", key);
        }
        client.send(pipeline.toString());
        if (pause) {
          Thread.sleep(100);
          servers.behind().get(1).signal("CONT");
        }
        for (int i = 0; i < expected.size(); i++) {
          String reply = client.readReply();
          if (!reply.equals(expected.get(i))) {
            problems.add(
                "round " + round + " reply " + i + ": " + reply + " != " + expected.get(i));
          }
        }
      }
      assertThat(problems).isEmpty();
    }
  }

  private static void add(
      StringBuilder pipeline, List<String> expected, String reply, String... command) {
    pipeline.append(new String(RespReplies.command(command), StandardCharsets.ISO_8859_1));
    expected.add(reply);
  }

  private static String bulk(String value) {
    return "$" + value.length() + "\r\n" + value + "\r\n";
  }

  /**
   * A fake memcached that holds the {@code get}s it reads until it has {@code batch} of them (or 3
   * s pass), then answers each with {@code END}; answers {@code version} at once. Records the most
   * requests it held at once.
   */
  private static final class HoldingServer implements AutoCloseable {
    private final ServerSocket listener;
    private final int batch;
    private final AtomicInteger largestHeld = new AtomicInteger();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    HoldingServer(int batch) throws IOException {
      this.batch = batch;
      this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread acceptor = new Thread(this::acceptLoop, "holding-server");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    int largestHeld() {
      return largestHeld.get();
    }

    private void acceptLoop() {
      while (!listener.isClosed()) {
        try {
          Socket socket = listener.accept();
          sockets.add(socket);
          Thread t = new Thread(() -> serve(socket), "holding-connection");
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    private void serve(Socket socket) {
      try (socket) {
        BufferedReader in =
            new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
        OutputStream out = socket.getOutputStream();
        int held = 0;
        long heldSinceMillis = 0;
        while (true) {
          String line;
          try {
            socket.setSoTimeout(held == 0 ? 0 : 50);
            line = in.readLine();
          } catch (SocketTimeoutException e) {
            line = "";
          }
          if (line == null) {
            return;
          }
          if (line.startsWith("version")) {
            out.write("VERSION 1.6.0\r\n".getBytes(StandardCharsets.ISO_8859_1));
          } else if (line.startsWith("get")) {
            if (held == 0) {
              heldSinceMillis = System.currentTimeMillis();
            }
            held++;
            largestHeld.accumulateAndGet(held, Math::max);
          }
          if (held > 0 && (held >= batch || System.currentTimeMillis() - heldSinceMillis > 3_000)) {
            out.write("END\r\n".repeat(held).getBytes(StandardCharsets.ISO_8859_1));
            held = 0;
          }
        }
      } catch (IOException e) {
        // the middleware went away
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
