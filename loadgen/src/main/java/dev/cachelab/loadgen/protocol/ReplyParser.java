package dev.cachelab.loadgen.protocol;

import java.nio.ByteBuffer;

/**
 * Incremental parser of one connection's replies, fed whatever bytes arrived (any split). Used by
 * that connection's thread only. Usage: {@link #expect} before the first byte of each reply, then
 * {@link #parse} until it returns true, then read {@link #hits()} and {@link #errorReply()}.
 */
public interface ReplyParser {

  /** The next reply answers a SET ({@code getKeys == 0}) or a GET of {@code getKeys} keys. */
  void expect(int getKeys);

  /**
   * Consumes bytes from {@code in} (position to limit). Returns true when the reply is complete;
   * false when more bytes are needed (the unconsumed rest of an incomplete line stays in {@code
   * in}).
   *
   * @throws ProtocolException if the bytes are not a valid reply to the expected request
   */
  boolean parse(ByteBuffer in) throws ProtocolException;

  /** Values returned by the completed GET reply. */
  int hits();

  /** Whether the completed reply was an error reply ({@code SERVER_ERROR}, {@code -ERR}, ...). */
  boolean errorReply();
}
