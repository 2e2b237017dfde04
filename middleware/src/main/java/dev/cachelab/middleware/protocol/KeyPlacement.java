package dev.cachelab.middleware.protocol;

import java.util.function.Supplier;

/**
 * Where keys live, as far as the redis front end needs to know it: whether two keys are held by the
 * same servers (so that a command naming both can go whole to them) and whether a write goes to
 * more than one server. Implemented by the routers; called by the net thread only.
 */
public interface KeyPlacement {
  /** Every server holds every key (round-robin routing: writes go to all servers). */
  KeyPlacement EVERY_SERVER = everyServer(true);

  /**
   * Whether key {@code bytes[aStart, aEnd)} and key {@code bytes[bStart, bEnd)} are read from the
   * same server and written to the same servers.
   */
  boolean sameServers(byte[] bytes, int aStart, int aEnd, int bStart, int bEnd);

  /** Whether a write goes to more than one server (replicas must stay equal). */
  boolean replicatesWrites();

  /**
   * The placement of whatever {@code current} gives at each call: the routing of the servers in use
   * when the server list changes at run time.
   */
  static KeyPlacement following(Supplier<? extends KeyPlacement> current) {
    return new KeyPlacement() {
      @Override
      public boolean sameServers(byte[] bytes, int aStart, int aEnd, int bStart, int bEnd) {
        return current.get().sameServers(bytes, aStart, aEnd, bStart, bEnd);
      }

      @Override
      public boolean replicatesWrites() {
        return current.get().replicatesWrites();
      }
    };
  }

  /** Placement where every server holds every key; {@code replicated}: more than one server. */
  static KeyPlacement everyServer(boolean replicated) {
    return new KeyPlacement() {
      @Override
      public boolean sameServers(byte[] bytes, int aStart, int aEnd, int bStart, int bEnd) {
        return true;
      }

      @Override
      public boolean replicatesWrites() {
        return replicated;
      }
    };
  }
}
