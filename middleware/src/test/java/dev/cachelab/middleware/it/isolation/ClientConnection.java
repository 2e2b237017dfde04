package dev.cachelab.middleware.it.isolation;

import dev.cachelab.middleware.it.isolation.ClientPrograms.Round;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One client's connection to the middleware or to its model memcached: sends a round of requests in
 * one write followed by {@code mn}, and reads the reply frames up to that {@code MN} (or to the
 * close). Remembers the cas unique last read for each key, which a {@code cas} request of a later
 * round quotes. Used by one thread.
 */
final class ClientConnection implements AutoCloseable {
  /** A hang guard only: a round's replies normally take milliseconds. */
  private static final int READ_TIMEOUT_MILLIS = 30_000;

  private static final String NO_OP = "mn\r\n";
  private static final String NO_OP_REPLY = "MN\r\n";

  private final int port;
  private final boolean model;
  private final Map<String, String> casByKey = new HashMap<>();
  private Socket socket;
  private OutputStream out;
  private ReplyFrames frames;

  /**
   * @param model whether this is the model memcached (it gets each request's {@link Request#model}
   *     bytes)
   */
  ClientConnection(int port, boolean model) throws IOException {
    this.port = port;
    this.model = model;
    connect();
  }

  /**
   * Sends the round and returns its reply frames, as read. A round whose last request closes the
   * connection is read to the close, and the next round goes on a new connection; the model, which
   * is not sent that request, gets {@link ModelDifferences#CLOSING_REPLY} for it.
   *
   * @param soFar filled with the frames as they are read, for a report when this throws
   */
  List<String> exchange(Round round, List<String> soFar) throws IOException {
    List<Request> requests = round.requests();
    boolean closes = requests.get(requests.size() - 1).closes();
    boolean readToClose = closes && !model;
    StringBuilder pipeline = new StringBuilder();
    int noOps = 0;
    for (Request request : requests) {
      String text = model ? request.model() : request.wire();
      pipeline.append(text.replace(Request.LATEST_CAS, latestCas(request.key())));
      noOps += text.equals(NO_OP) ? 1 : 0;
    }
    if (!closes || model) {
      pipeline.append(NO_OP);
      noOps++;
    }
    write(pipeline.toString().getBytes(StandardCharsets.ISO_8859_1), round.cutsPerMille());
    for (int seen = 0; readToClose || seen < noOps; ) {
      String frame = frames.next();
      soFar.add(frame);
      remember(frame);
      seen += frame.equals(NO_OP_REPLY) ? 1 : 0;
      if (frame.equals(ReplyFrames.CLOSED)) {
        break;
      }
    }
    List<String> replies = new ArrayList<>(soFar);
    if (closes) {
      if (model) {
        replies.remove(replies.size() - 1); // the MN sent in place of the closing request
        replies.addAll(ModelDifferences.CLOSING_REPLY);
      }
      socket.close();
      connect();
    }
    return replies;
  }

  /**
   * Writes the bytes to the middleware in pieces cut at the thousandths given, to a model whole.
   */
  private void write(byte[] bytes, List<Integer> cutsPerMille) throws IOException {
    int from = 0;
    if (!model) {
      for (int cut : cutsPerMille) {
        int to = (int) ((long) bytes.length * cut / 1000);
        out.write(bytes, from, to - from);
        out.flush();
        from = to;
      }
    }
    out.write(bytes, from, bytes.length - from);
    out.flush();
  }

  /** Sends {@code mn} and reads one frame: {@code MN} unless a reply was left unread. */
  String noOp() throws IOException {
    out.write(NO_OP.getBytes(StandardCharsets.US_ASCII));
    out.flush();
    return frames.next();
  }

  private String latestCas(String key) {
    return casByKey.getOrDefault(key, Request.STALE_CAS);
  }

  /** Records the cas unique of a {@code VALUE <key> <flags> <bytes> <cas>} frame. */
  private void remember(String frame) {
    if (!frame.startsWith("VALUE ")) {
      return;
    }
    String[] tokens = frame.substring(0, frame.indexOf("\r\n")).split(" ");
    if (tokens.length == 5) {
      casByKey.put(tokens[1], tokens[4]);
    }
  }

  private void connect() throws IOException {
    socket = new Socket();
    socket.setTcpNoDelay(true);
    socket.setSoTimeout(READ_TIMEOUT_MILLIS);
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    out = socket.getOutputStream();
    frames = new ReplyFrames(socket.getInputStream());
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
