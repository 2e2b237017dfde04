package dev.cachelab.middleware.net;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cachelab.middleware.backend.SendBuffer;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RequestParser;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a value's bytes are copied between a client's socket and a server's, behind an event loop:
 * a set's data block goes from the client's read buffer straight to the server's send buffer (the
 * request holds no copy of it), and is copied into its request only before that read buffer's bytes
 * change or the request leaves for the workers; a direct reply the client's socket does not take at
 * once is copied into the unsent bytes once, with no array allocated for it on the way.
 */
class ValueCopiesTest {
  private static final int VALUE_BYTES = 16 * 1024;

  private final ScriptedChannel channel = new ScriptedChannel();
  private final List<Request> queued = new ArrayList<>();
  private final BufferBudget budget = new BufferBudget(64L << 20);
  private final ClientConnection connection =
      new ClientConnection(channel, new Queued(queued), budget, new RequestParser(1 << 20), 1);

  @Test
  void aSetsValueIsForwardedFromTheReadBufferItself() throws Exception {
    connection.lendData(true);
    String set = set("k", 'v', VALUE_BYTES);
    channel.feed(set);
    Request request = readAndDecode();

    assertTrue(request.dataLent(), "the value stays in the read buffer");
    assertTrue(request.bytes().length < VALUE_BYTES, "the request holds no copy of the value");
    RecordingSendBuffer server = new RecordingSendBuffer();
    WorkerBackends.appendForward(server, request);
    request.dataForwarded();

    assertEquals(set, server.text(), "the server gets the request byte for byte");
    assertSame(connection.readBuf, server.arrays.getLast(), "the value's bytes: the read buffer's");
    assertEquals(VALUE_BYTES + 2, server.lengths.getLast());
    assertFalse(request.dataLent());
    assertThrows(IllegalStateException.class, request::dataArray, "not forwarded twice");
  }

  @Test
  void withoutAnEventLoopTheRequestHoldsItsOwnCopy() throws Exception {
    channel.feed(set("k", 'v', 100));
    Request request = readAndDecode();

    assertFalse(request.dataLent());
    assertSame(request.bytes(), request.dataArray());
  }

  @Test
  void aLentValueIsCopiedInBeforeAPartialRequestIsMovedOverIt() throws Exception {
    connection.lendData(true);
    String set = set("k", 'a', 1000);
    channel.feed(set + "get part"); // a partial request behind the set
    Request request = readAndDecode();
    assertEquals(0, decode(connection.acquire()), "the get is not whole yet");

    connection.compact(); // moves "get part" to the front, over the set's bytes
    assertFalse(request.dataLent(), "copied into the request before the move");
    assertEquals(set, forwarded(request));
  }

  @Test
  void aFullReadBufferIsReadAgainOnlyAfterItsLentValueIsForwardedOrCopied() throws Exception {
    String first = set("a", 'x', VALUE_BYTES);
    Request request = fillWithLentSet(first);
    assertTrue(request.dataLent());

    channel.feed(set("b", 'y', 10));
    assertEquals(0, connection.read(), "the next round reads, after the loop forwards the value");
    assertTrue(request.dataLent(), "nothing was read over it");
    assertEquals(connection.readEnd, connection.parseStart);

    assertTrue(connection.read() > 0, "read in the next round even if the value is still lent");
    assertFalse(request.dataLent(), "then it was copied into the request first");
    assertEquals(first, forwarded(request));
  }

  @Test
  void aForwardedValueLetsTheReadBufferBeReadAtOnce() throws Exception {
    fillWithLentSet(set("a", 'x', VALUE_BYTES)).dataForwarded(); // the loop sent it on

    String second = set("b", 'y', 10);
    channel.feed(second);
    assertEquals(second.length(), connection.read(), "no round is skipped");
  }

  @Test
  void aValueWaitingForTheWorkersIsItsRequestsOwn() throws Exception {
    connection.lendData(true);
    String first = set("a", 'x', 100);
    String second = set("b", 'y', 100);
    channel.feed(first + second);
    connection.read();
    Request head = decodeWhole();
    Request waiting = decodeWhole();
    assertTrue(head.dataLent());
    assertTrue(waiting.dataLent());

    assertEquals(ClientConnection.Admission.HEAD, connection.admitForwarded(head, 1));
    assertEquals(ClientConnection.Admission.WAITING, connection.admitForwarded(waiting, 1));
    assertTrue(head.dataLent(), "the chain forwarded in this round keeps it lent");
    assertFalse(waiting.dataLent(), "queued later by a completion: copied now");
    Arrays.fill(connection.readBuf, (byte) '#');
    assertEquals(second, forwarded(waiting));
  }

  @Test
  void aLentValueIsNotCountedAsHeldLess() throws Exception {
    connection.lendData(true);
    channel.feed(set("k", 'v', 60 * 1024));
    Request lent = readAndDecode();
    ClientConnection copying =
        new ClientConnection(
            new ScriptedChannel(), new Queued(queued), budget, new RequestParser(1 << 20), 1);
    Request owned = copying.acquire();
    byte[] wire = set("k", 'v', 60 * 1024).getBytes(US_ASCII);
    copying.parser.decode(wire, 0, wire.length, owned);

    assertTrue(lent.heldBytes() >= 60 * 1024, "the budget sees what a copy would hold");
    lent.ownData();
    assertTrue(lent.heldBytes() <= owned.heldBytes(), "and the copy holds no more than that");
  }

  @Test
  void aDirectReplyTheSocketDoesNotTakeIsCopiedOnceWithNoArrayOnTheWay() {
    ByteBuffer reply = ByteBuffer.allocateDirect(VALUE_BYTES);
    for (int i = 0; i < VALUE_BYTES; i++) {
      reply.put((byte) ('a' + i % 26));
    }
    // One pass grows the unsent-bytes buffer; the second is measured.
    replyNotTakenThenDrained(reply.clear());
    channel.written.reset();

    long allocated = allocatedBytes();
    replyNotTakenThenDrained(reply.clear());
    allocated = allocatedBytes() - allocated;

    assertTrue(allocated < VALUE_BYTES / 4, "no copy of the reply allocated: " + allocated);
    byte[] expected = new byte[VALUE_BYTES];
    reply.get(0, expected);
    assertArrayEquals(expected, channel.written.toByteArray());
  }

  // ---- helpers ------------------------------------------------------------------------------

  private static String set(String key, char fill, int valueBytes) {
    return "set "
        + key
        + " 0 0 "
        + valueBytes
        + "\r\n"
        + String.valueOf(fill).repeat(valueBytes)
        + "\r\n";
  }

  /**
   * Lends data; reads and decodes {@code set} twice, the first forwarded: the buffer, grown to the
   * set's length, is full with the second, lent, and decoded to its end. Returns the second.
   */
  private Request fillWithLentSet(String set) throws Exception {
    connection.lendData(true);
    channel.feed(set);
    readAndDecode().dataForwarded();
    connection.compact();
    channel.feed(set);
    Request request = readAndDecode();
    assertEquals(connection.readBuf.length, connection.readEnd, "the set fills the buffer");
    connection.compact();
    return request;
  }

  /** Reads what the channel holds (growing the buffer as needed) and decodes one request. */
  private Request readAndDecode() throws Exception {
    Request request = connection.acquire();
    for (int reads = 0; reads < 16; reads++) {
      int n = connection.read();
      assertTrue(n >= 0);
      if (decode(request) > 0) {
        assertEquals(Request.Status.FORWARD, request.status());
        return request;
      }
    }
    throw new AssertionError("no whole request");
  }

  private Request decodeWhole() {
    Request request = connection.acquire();
    assertTrue(decode(request) > 0);
    return request;
  }

  /** Decodes at parseStart as the net thread does; the bytes consumed. */
  private int decode(Request request) {
    int consumed =
        connection.parser.decode(
            connection.readBuf, connection.parseStart, connection.readEnd, request);
    connection.parseStart += consumed;
    if (consumed > 0 && request.dataLent()) {
      connection.noteLent(request);
    }
    return consumed;
  }

  private static String forwarded(Request request) {
    RecordingSendBuffer server = new RecordingSendBuffer();
    WorkerBackends.appendForward(server, request);
    return server.text();
  }

  private void replyNotTakenThenDrained(ByteBuffer reply) {
    channel.acceptBytes = 0;
    Request get = connection.acquire();
    byte[] wire = "get k\r\n".getBytes(US_ASCII);
    connection.parser.decode(wire, 0, wire.length, get);
    connection.admitForwarded(get, 1);
    connection.complete(get, reply);
    assertTrue(channel.writeInterest);
    channel.acceptBytes = Integer.MAX_VALUE;
    connection.onWritable();
    assertTrue(connection.isIdle());
  }

  private static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getCurrentThreadAllocatedBytes();
  }

  /** The server's send buffer: every append's array and length, and the bytes in order. */
  private static final class RecordingSendBuffer implements SendBuffer {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final List<byte[]> arrays = new ArrayList<>();
    final List<Integer> lengths = new ArrayList<>();

    @Override
    public void append(byte[] from, int offset, int length) {
      arrays.add(from);
      lengths.add(length);
      bytes.write(from, offset, length);
    }

    String text() {
      return bytes.toString(US_ASCII);
    }
  }

  /**
   * A socket fed by the test, taking at most {@code acceptBytes} of each write into {@code
   * written}; writes of direct buffers read them in place (no array of the reply's size).
   */
  private static final class ScriptedChannel implements ClientChannel {
    final ByteArrayOutputStream written = new ByteArrayOutputStream();
    private final byte[] chunk = new byte[4096];
    private ByteBuffer input = ByteBuffer.allocate(0);
    int acceptBytes = Integer.MAX_VALUE;
    boolean writeInterest;

    void feed(String text) {
      input = ByteBuffer.wrap(text.getBytes(US_ASCII));
    }

    @Override
    public int read(ByteBuffer into) {
      int n = Math.min(into.remaining(), input.remaining());
      into.put(into.position(), input, input.position(), n);
      into.position(into.position() + n);
      input.position(input.position() + n);
      return n;
    }

    @Override
    public int write(ByteBuffer from) {
      int total = 0;
      while (from.hasRemaining() && total < acceptBytes) {
        int n = Math.min(Math.min(from.remaining(), chunk.length), acceptBytes - total);
        from.get(chunk, 0, n);
        written.write(chunk, 0, n);
        total += n;
      }
      return total;
    }

    @Override
    public void setReadInterest(boolean on) {}

    @Override
    public void setWriteInterest(boolean on) {
      writeInterest = on;
    }

    @Override
    public void close() {}
  }

  private record Queued(List<Request> queued) implements ConnectionEvents {
    @Override
    public void enqueueWaiting(Request request) {
      queued.add(request);
    }

    @Override
    public void resumeReading(ClientConnection c) {}

    @Override
    public void connectionClosed() {}
  }
}
