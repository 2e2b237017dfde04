package dev.cachelab.middleware.net;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * A {@link ClientChannel} on a non-blocking socket registered with the net thread's selector. Read
 * by the net thread; written by the thread holding its connection's monitor.
 */
final class SocketClientChannel implements ClientChannel {
  private final SocketChannel channel;
  private final DirectScratch scratch;
  private SelectionKey key;

  SocketClientChannel(SocketChannel channel, DirectScratch scratch) {
    this.channel = channel;
    this.scratch = scratch;
  }

  /** Net thread, right after registering the socket. */
  void attach(SelectionKey key) {
    this.key = key;
  }

  @Override
  public int read(ByteBuffer into) throws IOException {
    return scratch.read(channel, into);
  }

  @Override
  public int write(ByteBuffer from) throws IOException {
    // A direct buffer goes to the socket as it is; a heap one through the net thread's buffer.
    return !from.isDirect() && scratch.owns() ? scratch.write(channel, from) : channel.write(from);
  }

  @Override
  public void setReadInterest(boolean on) {
    if (on) {
      key.interestOpsOr(SelectionKey.OP_READ);
    } else {
      key.interestOpsAnd(~SelectionKey.OP_READ);
    }
  }

  @Override
  public void setWriteInterest(boolean on) {
    if (on) {
      key.interestOpsOr(SelectionKey.OP_WRITE);
      key.selector().wakeup();
    } else if ((key.interestOps() & SelectionKey.OP_WRITE) != 0) {
      key.interestOpsAnd(~SelectionKey.OP_WRITE);
    }
  }

  @Override
  public void close() {
    if (key != null) {
      key.cancel();
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // already failing
    }
  }
}
