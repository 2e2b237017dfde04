package dev.cachelab.middleware.net;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RequestParser;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ClientConnection} without sockets: a recording {@link ClientChannel} that takes as many
 * bytes as a test allows, and recorded {@link ConnectionEvents}. Requests are decoded by the real
 * memcached parser and admitted as the net thread admits them; the test plays the workers,
 * finishing requests in the order it chooses.
 */
class ClientConnectionTest {
  private final FakeChannel channel = new FakeChannel();
  private final RecordedEvents events = new RecordedEvents();
  private final BufferBudget budget = new BufferBudget(64L << 20);
  private final ClientConnection connection =
      new ClientConnection(channel, events, budget, new RequestParser(1 << 20), 1);
  private long round;

  @Test
  void repliesLeaveInRequestOrderWhenLaterRequestsCompleteFirst() {
    Request getA = forward("get a\r\n");
    Request bad = local("bogus\r\n"); // answered by the net thread at once: ERROR
    Request stats = local("stats\r\n");

    finishHere(bad, bad.immediateReply());
    finish(stats, "STAT pid 1\r\nEND\r\n");
    assertEquals("", channel.output(), "nothing may overtake the get before it");

    finish(getA, "VALUE a 0 1\r\nx\r\nEND\r\n");
    assertEquals(
        "VALUE a 0 1\r\nx\r\nEND\r\n" + "ERROR\r\n" + "STAT pid 1\r\nEND\r\n", channel.output());
    assertTrue(connection.isIdle());
  }

  @Test
  void pipelinedRequestsReachTheWorkersOneAtATimeAndAreAnsweredInOrder() {
    int n = 100;
    List<Request> requests = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      requests.add(connection.acquire());
      decodeInto(requests.get(i), "get k" + i + "\r\n");
    }
    assertEquals(
        ClientConnection.Admission.HEAD,
        connection.admitForwarded(requests.get(0), round),
        "the first is queued at once");
    for (int i = 1; i < n; i++) {
      assertEquals(
          ClientConnection.Admission.WAITING,
          connection.admitForwarded(requests.get(i), round),
          "later ones wait with a window of one: request " + i);
    }
    StringBuilder expected = new StringBuilder();
    for (int i = 0; i < n; i++) {
      // The worker finishing request i queues request i + 1, and nothing else.
      assertEquals(i, events.enqueued.size());
      String reply = "VALUE k" + i + " 0 1\r\n" + (i % 10) + "\r\nEND\r\n";
      finish(requests.get(i), reply);
      expected.append(reply);
      assertEquals(expected.toString(), channel.output());
      if (i + 1 < n) {
        assertSame(requests.get(i + 1), events.enqueued.get(i));
      }
    }
    assertEquals(n - 1, events.enqueued.size());
    assertTrue(connection.isIdle());
  }

  @Test
  void aMultiGetReplyStaysInPlaceAndAPartialWriteKeepsTheOrder() {
    Request multi = forward("get a b c\r\n");
    assertEquals(3, multi.keyCount());
    Request bad = local("bogus\r\n");
    Request single = forward("get d\r\n");
    finishHere(bad, bad.immediateReply());

    // The fan-out's merged reply (three servers' values in key order) is larger than the socket
    // takes: the rest waits for writability, and later replies queue behind it.
    String merged =
        "VALUE a 0 4000\r\n"
            + "a".repeat(4000)
            + "\r\nVALUE b 0 4000\r\n"
            + "b".repeat(4000)
            + "\r\nVALUE c 0 4000\r\n"
            + "c".repeat(4000)
            + "\r\nEND\r\n";
    channel.acceptBytes = 5000;
    finish(multi, merged);
    assertTrue(channel.writeInterest, "asks for writability with bytes left");
    assertSame(single, events.enqueued.get(1), "queued by the worker that finished the multi-get");
    finish(single, "VALUE d 0 1\r\nd\r\nEND\r\n");
    assertEquals(merged.substring(0, 5000), channel.output());

    channel.acceptBytes = Integer.MAX_VALUE;
    connection.onWritable();
    assertEquals(merged + "ERROR\r\n" + "VALUE d 0 1\r\nd\r\nEND\r\n", channel.output());
    assertFalse(channel.writeInterest, "writability no longer needed");
    assertTrue(connection.isIdle());
  }

  @Test
  void errorsInTheMiddleKeepTheirPlaceAndALostFrameClosesAfterTheRepliesBeforeIt() {
    Request first = forward("get a\r\n");
    Request failing = forward("get b\r\n");
    Request bad = local("bogus\r\n");
    Request third = forward("get c\r\n");
    Request lostFrame = local("set k 0 0 3\r\nabcd\r\n"); // bad data chunk: reply, then close
    assertEquals(Request.Status.REJECT_AND_CLOSE, lostFrame.status());
    finishHere(bad, bad.immediateReply());
    finishHere(lostFrame, lostFrame.immediateReply());
    connection.closeAfterReplies();
    assertFalse(channel.readInterest, "no more input is read");
    assertFalse(channel.closed, "replies before the error are still owed");

    finish(first, "VALUE a 0 1\r\n1\r\nEND\r\n");
    finish(failing, "SERVER_ERROR backend 127.0.0.1:1 unavailable\r\n");
    assertFalse(channel.closed);
    finish(third, "VALUE c 0 1\r\n3\r\nEND\r\n");
    assertEquals(
        "VALUE a 0 1\r\n1\r\nEND\r\n"
            + "SERVER_ERROR backend 127.0.0.1:1 unavailable\r\n"
            + "ERROR\r\n"
            + "VALUE c 0 1\r\n3\r\nEND\r\n"
            + "CLIENT_ERROR bad data chunk\r\n",
        channel.output());
    assertTrue(channel.closed, "closed once every reply before the error is written");
    assertEquals(1, events.closed);
  }

  @Test
  void backpressureStopsReadingAtTheHighMarkAndResumesBelowTheLowMark() {
    channel.acceptBytes = 0; // a client that does not read
    int valueBytes = 600 * 1024;
    String reply = "VALUE v 0 " + valueBytes + "\r\n" + "v".repeat(valueBytes) + "\r\nEND\r\n";
    List<Request> requests = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      requests.add(forward("get v\r\n"));
    }
    // Four replies pass the high-water mark (2 MiB) unsent.
    for (int i = 0; i < 4; i++) {
      finish(requests.get(i), reply);
    }
    assertTrue(
        connection.backlogged(), "backlog above " + ClientConnection.HIGH_WATER_BYTES + " bytes");
    assertTrue(connection.pauseForBacklog(), "the net thread stops reading");
    assertFalse(channel.readInterest);
    assertEquals(4, events.enqueued.size(), "the next request waits while the replies are unsent");
    assertTrue(budget.usedBytes() >= 4L * valueBytes, "unsent bytes are reserved from the budget");

    // The client drains part: still above the low mark, nothing resumes.
    channel.acceptBytes = 4 * reply.length() - (int) ClientConnection.LOW_WATER_BYTES - 1024;
    connection.onWritable();
    assertEquals(0, events.resumed);
    assertEquals(4, events.enqueued.size());

    // Below the low mark: reading resumes and the stalled request is queued.
    channel.acceptBytes = Integer.MAX_VALUE;
    connection.onWritable();
    assertEquals(1, events.resumed);
    assertEquals(5, events.enqueued.size());
    assertSame(requests.get(4), events.enqueued.get(4));
    assertFalse(connection.backlogged());
    assertEquals(4 * reply.length(), channel.output().length());
    assertEquals(0, budget.usedBytes(), "the drained reply buffer is given back");
  }

  @Test
  void repliesFinishedAfterCloseAreDroppedAndTheBudgetIsReleased() {
    channel.acceptBytes = 0;
    Request a = forward("get a\r\n");
    Request b = forward("get b\r\n");
    finish(a, "VALUE a 0 3\r\nabc\r\nEND\r\n");
    assertTrue(budget.usedBytes() > 0);
    connection.close();
    assertTrue(channel.closed);
    assertEquals(0, budget.usedBytes());
    assertEquals(1, events.closed);
    finish(b, "VALUE b 0 3\r\nabc\r\nEND\r\n"); // a worker finishing after the close
    assertEquals("", channel.output());
    assertTrue(connection.isClosed());
  }

  @Test
  void anIdleConnectionHoldsNoReadBufferUntilItsFirstRead() throws Exception {
    assertEquals(
        0, connection.readBuf.length, "nothing allocated for a connection that never sent");
    channel.input = ByteBuffer.wrap("get a\r\n".getBytes(US_ASCII));
    assertEquals(7, connection.read());
    assertEquals(ClientConnection.BASE_READ_BYTES, connection.readBuf.length);
    assertEquals(0, budget.usedBytes(), "the base buffer is not charged to the budget");
  }

  @Test
  void aWindowChainsTheRequestsOfOneRoundAndQueuesTheNextChainWhenTheLastCompletes() {
    FakeChannel out = new FakeChannel();
    RecordedEvents queued = new RecordedEvents();
    ClientConnection windowed =
        new ClientConnection(out, queued, budget, new RequestParser(1 << 20), 4);
    List<Request> requests = new ArrayList<>();
    List<ClientConnection.Admission> admissions = new ArrayList<>();
    String[] lines = {
      "get a\r\n",
      "set b 0 0 1\r\nx\r\n",
      "get c d\r\n",
      "get e\r\n", // round 1: a chain of 4
      "get f\r\n",
      "delete g\r\n",
      "get h\r\n", // round 1: past the window, they wait
    };
    for (String line : lines) {
      Request request = windowed.acquire();
      byte[] bytes = line.getBytes(US_ASCII);
      assertEquals(bytes.length, windowed.parser.decode(bytes, 0, bytes.length, request), line);
      requests.add(request);
      admissions.add(windowed.admitForwarded(request, 1));
    }
    assertEquals(ClientConnection.Admission.HEAD, admissions.get(0));
    for (int i = 1; i < 4; i++) {
      assertEquals(ClientConnection.Admission.JOINED, admissions.get(i), lines[i]);
    }
    for (int i = 4; i < lines.length; i++) {
      assertEquals(ClientConnection.Admission.WAITING, admissions.get(i), lines[i]);
    }
    Request head = requests.get(0);
    assertEquals(4, head.chainLength);
    Request member = head;
    for (int i = 0; i < 4; i++) {
      assertSame(requests.get(i), member, "the chain keeps request order");
      assertTrue(member.chained);
      member = member.chainNext;
    }
    assertEquals(null, member, "the chain ends at the window");

    // Completed out of order (two servers answering at different times): replies in order, and
    // the next chain only once the whole first one is done.
    String[] replies = {"END\r\n", "STORED\r\n", "VALUE c 0 1\r\nc\r\nEND\r\n", "END\r\n"};
    for (int i : new int[] {3, 1, 2}) {
      windowed.complete(requests.get(i), ByteBuffer.wrap(replies[i].getBytes(US_ASCII)));
    }
    assertEquals("", out.output(), "nothing before the first reply");
    assertTrue(queued.enqueued.isEmpty(), "the next chain waits for the whole first one");
    windowed.complete(requests.get(0), ByteBuffer.wrap(replies[0].getBytes(US_ASCII)));
    assertEquals(String.join("", replies), out.output());
    assertEquals(1, out.writes, "the chain's replies leave in one write");
    assertEquals(1, queued.enqueued.size());
    Request next = queued.enqueued.get(0);
    assertSame(requests.get(4), next);
    assertEquals(3, next.chainLength, "the waiting requests go as one chain");
    assertSame(requests.get(5), next.chainNext);
    assertSame(requests.get(6), next.chainNext.chainNext);

    // A request of a later round does not join a chain already with the workers.
    Request late = windowed.acquire();
    byte[] bytes = "get z\r\n".getBytes(US_ASCII);
    windowed.parser.decode(bytes, 0, bytes.length, late);
    assertEquals(ClientConnection.Admission.WAITING, windowed.admitForwarded(late, 2));
    for (int i = 4; i < 7; i++) {
      windowed.complete(requests.get(i), ByteBuffer.wrap(("R" + i + "\r\n").getBytes(US_ASCII)));
      assertEquals(i < 6 ? 1 : 2, out.writes, "in order, held until the chain's last: " + i);
    }
    assertEquals(String.join("", replies) + "R4\r\nR5\r\nR6\r\n", out.output());
    assertSame(late, queued.enqueued.get(1));
    assertEquals(1, late.chainLength);
    assertFalse(late.chained);
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** Decodes one forwarded request and admits it as the net thread does. */
  private Request forward(String input) {
    Request request = connection.acquire();
    decodeInto(request, input);
    assertEquals(Request.Status.FORWARD, request.status(), input);
    if (connection.admitForwarded(request, round) == ClientConnection.Admission.HEAD) {
      events.enqueued.add(request);
    }
    return request;
  }

  /** Decodes a request the net thread answers itself and registers it in order. */
  private Request local(String input) {
    Request request = connection.acquire();
    decodeInto(request, input);
    assertNotNull(request.status());
    connection.registerInFlight(request);
    return request;
  }

  private void decodeInto(Request request, String input) {
    byte[] bytes = input.getBytes(US_ASCII);
    int from = 0;
    while (request.status() == null && from < bytes.length) {
      int consumed = connection.parser.decode(bytes, from, bytes.length, request);
      assertTrue(consumed > 0, "decodes " + input);
      from += consumed;
    }
  }

  private void finish(Request request, String reply) {
    connection.complete(request, ByteBuffer.wrap(reply.getBytes(US_ASCII)));
  }

  private void finishHere(Request request, byte[] reply) {
    connection.complete(request, ByteBuffer.wrap(reply));
  }

  /** A socket that takes at most {@code acceptBytes} more bytes and records them. */
  private static final class FakeChannel implements ClientChannel {
    private final ByteArrayOutputStream written = new ByteArrayOutputStream();
    int acceptBytes = Integer.MAX_VALUE;
    int writes;
    ByteBuffer input = ByteBuffer.allocate(0);
    boolean readInterest = true;
    boolean writeInterest;
    boolean closed;

    String output() {
      return written.toString(US_ASCII);
    }

    @Override
    public int read(ByteBuffer into) {
      int n = Math.min(into.remaining(), input.remaining());
      into.put(input.array(), input.position(), n);
      input.position(input.position() + n);
      return n;
    }

    @Override
    public int write(ByteBuffer from) {
      int n = Math.min(from.remaining(), acceptBytes);
      writes++;
      byte[] bytes = new byte[n];
      from.get(bytes);
      written.write(bytes, 0, n);
      if (acceptBytes != Integer.MAX_VALUE) {
        acceptBytes -= n;
      }
      return n;
    }

    @Override
    public void setReadInterest(boolean on) {
      readInterest = on;
    }

    @Override
    public void setWriteInterest(boolean on) {
      writeInterest = on;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  /** What the connection told its net thread. */
  private static final class RecordedEvents implements ConnectionEvents {
    final List<Request> enqueued = new ArrayList<>();
    int resumed;
    int closed;

    @Override
    public void enqueueWaiting(Request request) {
      enqueued.add(request);
    }

    @Override
    public void resumeReading(ClientConnection c) {
      resumed++;
    }

    @Override
    public void connectionClosed() {
      closed++;
    }
  }
}
