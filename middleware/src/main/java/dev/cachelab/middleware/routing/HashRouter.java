package dev.cachelab.middleware.routing;

import dev.cachelab.middleware.protocol.Base64Key;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.servers.BackendHealth;
import java.util.List;

/**
 * Consistent-hash routing (ASL 2016 generalised): a key's reads go to its primary on the {@link
 * KetamaRing}, its writes to its {@code replication} replicas (primary first); a multi-key read is
 * split by primary. With replication, a single-key read's fallback is its second replica, and a
 * multi-key read gives each key to its first replica in rotation (not ejected), with the next one
 * in rotation as the key's fallback (a worker re-reads there the keys of a server found down).
 * {@code flush_all}/{@code verbosity} go to every server. Net thread only.
 */
public final class HashRouter implements Router {
  private final KetamaRing ring;
  private final int serverCount;
  private final int replication;
  private final int[] replicas;
  private final boolean[] used;
  private final int[] replicasOfA;
  private final int[] replicasOfB;
  private final List<BackendHealth> health;
  private final byte[] decodedKey = new byte[Base64Key.MAX_DECODED_BYTES];

  public HashRouter(List<String> servers, int replication) {
    this(servers, replication, null);
  }

  /**
   * @param health the servers' health, read to route multi-key reads to replicas in rotation; null:
   *     every server is taken as in rotation
   */
  public HashRouter(List<String> servers, int replication, List<BackendHealth> health) {
    this.health = health;
    this.ring = new KetamaRing(servers);
    this.serverCount = servers.size();
    this.replication = replication;
    this.replicas = new int[serverCount];
    this.used = new boolean[serverCount];
    this.replicasOfA = new int[serverCount];
    this.replicasOfB = new int[serverCount];
  }

  /** Whether two keys have the same replicas, in the same order (so the same primary). */
  @Override
  public boolean sameServers(byte[] bytes, int aStart, int aEnd, int bStart, int bEnd) {
    int n = ring.replicas(bytes, aStart, aEnd, replication, replicasOfA);
    ring.replicas(bytes, bStart, bEnd, replication, replicasOfB);
    return java.util.Arrays.equals(replicasOfA, 0, n, replicasOfB, 0, n);
  }

  /**
   * Writes the first {@code count} replicas of key {@code k} of the request into {@code out}: the
   * replicas of the key memcached stores, the decoded one for a base64 key (a key that does not
   * decode, which memcached refuses, is placed by its bytes).
   */
  private int replicasOfKey(Request request, int k, int count, int[] out) {
    byte[] bytes = request.bytes();
    if (request.base64Key()) {
      int decoded = Base64Key.decode(bytes, request.keyStart(k), request.keyEnd(k), decodedKey);
      if (decoded >= 0) {
        return ring.replicas(decodedKey, 0, decoded, count, out);
      }
    }
    return ring.replicas(bytes, request.keyStart(k), request.keyEnd(k), count, out);
  }

  @Override
  public boolean replicatesWrites() {
    return replication > 1;
  }

  /**
   * Key {@code k} of a multi-key read with replication: its first replica in rotation reads it, the
   * next one in rotation is its fallback; if none is in rotation, its primary (whose failure
   * answers). Returns the key's server.
   */
  private int routeReplicatedKey(Request request, int k) {
    int n = replicasOfKey(request, k, replication, replicas);
    int server = -1;
    int fallback = -1;
    for (int i = 0; i < n && fallback < 0; i++) {
      if (health == null || health.get(replicas[i]).inRotation()) {
        if (server < 0) {
          server = replicas[i];
        } else {
          fallback = replicas[i];
        }
      }
    }
    if (server < 0) {
      server = replicas[0];
    }
    request.setKeyServer(k, server);
    request.setKeyFallback(k, fallback);
    return server;
  }

  @Override
  public void route(Request request) {
    request.clearServers();
    switch (request.family()) {
      case RETRIEVAL -> {
        if (request.keyCount() == 1) {
          Command command = request.command();
          if (replication > 1 && command != Command.GETS && command != Command.GATS) {
            replicasOfKey(request, 0, 2, replicas);
            request.addServer(replicas[0]);
            request.setFallbackServer(replicas[1], false);
          } else {
            replicasOfKey(request, 0, 1, replicas);
            request.addServer(replicas[0]);
          }
          return;
        }
        java.util.Arrays.fill(used, false);
        for (int k = 0; k < request.keyCount(); k++) {
          int server;
          if (replication > 1) {
            server = routeReplicatedKey(request, k);
          } else {
            replicasOfKey(request, k, 1, replicas);
            server = replicas[0];
            request.setKeyServer(k, server);
          }
          if (!used[server]) {
            used[server] = true;
            request.addServer(server);
          }
        }
      }
      case STORAGE, KEYED -> {
        int n = replicasOfKey(request, 0, replication, replicas);
        for (int i = 0; i < n; i++) {
          request.addServer(replicas[i]);
        }
      }
      case BROADCAST -> {
        for (int server = 0; server < serverCount; server++) {
          request.addServer(server);
        }
      }
      case FIRST_SERVER, LOCAL -> request.addServer(0);
    }
  }
}
