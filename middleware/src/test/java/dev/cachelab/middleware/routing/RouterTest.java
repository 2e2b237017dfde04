package dev.cachelab.middleware.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.protocol.Base64Key;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RequestParser;
import dev.cachelab.middleware.servers.BackendHealth;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RouterTest {
  private static final List<String> THREE =
      List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211");

  static Request parse(String input) {
    byte[] bytes = input.getBytes(StandardCharsets.ISO_8859_1);
    Request request = new Request();
    int consumed = new RequestParser(1 << 20).decode(bytes, 0, bytes.length, request);
    assertThat(consumed).isEqualTo(bytes.length);
    assertThat(request.status()).isEqualTo(Request.Status.FORWARD);
    return request;
  }

  @Test
  void roundRobinSpreadsReadsSoCountsDifferByAtMostOne() {
    for (int servers = 1; servers <= 7; servers++) {
      RoundRobinRouter router = new RoundRobinRouter(servers, false);
      int[] counts = new int[servers];
      for (int i = 0; i < 1000; i++) {
        Request request = parse(i % 3 == 0 ? "get a b c\r\n" : "get k" + i + "\r\n");
        router.route(request);
        assertThat(request.serverCount()).isEqualTo(1);
        assertThat(request.isSplit()).isFalse();
        counts[request.server(0)]++;
        int max = 0;
        int min = Integer.MAX_VALUE;
        for (int c : counts) {
          max = Math.max(max, c);
          min = Math.min(min, c);
        }
        assertThat(max - min).as("after %d reads over %d servers", i + 1, servers).isLessThan(2);
      }
    }
  }

  @Test
  void shardingSplitsKeysEvenlyWithTheRemainderOnTheFirstServers() {
    assertThat(shares(5, 3)).containsExactly(2, 2, 1);
    assertThat(shares(10, 3)).containsExactly(4, 3, 3);
    assertThat(shares(6, 3)).containsExactly(2, 2, 2);
    assertThat(shares(2, 3)).containsExactly(1, 1, 0);
    assertThat(shares(9, 4)).containsExactly(3, 2, 2, 2);
  }

  @Test
  void shardingKeepsEachServersKeysContiguousInClientOrder() {
    RoundRobinRouter router = new RoundRobinRouter(3, true);
    Request request = parse("get k0 k1 k2 k3 k4\r\n");
    router.route(request);
    int[] servers = new int[5];
    for (int k = 0; k < 5; k++) {
      servers[k] = request.keyServer(k);
    }
    assertThat(servers).containsExactly(0, 0, 1, 1, 2);
    assertThat(request.serverCount()).isEqualTo(3);
  }

  private static int[] shares(int keys, int servers) {
    RoundRobinRouter router = new RoundRobinRouter(servers, true);
    StringBuilder line = new StringBuilder("get");
    for (int k = 0; k < keys; k++) {
      line.append(" key").append(k);
    }
    Request request = parse(line.append("\r\n").toString());
    router.route(request);
    assertThat(request.isSplit()).isTrue();
    int[] counts = new int[servers];
    for (int k = 0; k < keys; k++) {
      counts[request.keyServer(k)]++;
    }
    return counts;
  }

  @Test
  void roundRobinWritesGoToEveryServerPrimaryFirst() {
    RoundRobinRouter router = new RoundRobinRouter(3, false);
    for (String write :
        List.of(
            "set k 0 0 1\r\nv\r\n",
            "delete k\r\n",
            "incr k 1\r\n",
            "touch k 1\r\n",
            "cas k 0 0 1 5\r\nv\r\n",
            "flush_all\r\n")) {
      Request request = parse(write);
      router.route(request);
      assertThat(servers(request)).as(write).containsExactly(0, 1, 2);
    }
  }

  @Test
  void casReadsAndVersionGoToServerZero() {
    RoundRobinRouter router = new RoundRobinRouter(3, true);
    for (int i = 0; i < 5; i++) {
      for (String read : List.of("gets k\r\n", "gets a b c\r\n", "gats 1 k\r\n", "version\r\n")) {
        Request request = parse(read);
        router.route(request);
        assertThat(servers(request)).as(read).containsExactly(0);
        assertThat(request.isSplit()).isFalse();
      }
    }
  }

  @Test
  void ringSpreadsKeysRoughlyEvenly() {
    KetamaRing ring = new KetamaRing(THREE);
    int[] counts = new int[3];
    int[] out = new int[3];
    int keys = 30_000;
    for (int i = 0; i < keys; i++) {
      byte[] key = ("memtier-" + i).getBytes(StandardCharsets.US_ASCII);
      counts[ring.primary(key, 0, key.length, out)]++;
    }
    for (int c : counts) {
      assertThat(c / (double) keys).isBetween(0.22, 0.45);
    }
  }

  @Test
  void ringMovesOnlyAboutAQuarterOfTheKeysWhenAServerIsAdded() {
    KetamaRing before = new KetamaRing(THREE);
    List<String> four = new ArrayList<>(THREE);
    four.add("10.0.0.4:11211");
    KetamaRing after = new KetamaRing(four);
    int[] out = new int[4];
    int moved = 0;
    int keys = 20_000;
    for (int i = 0; i < keys; i++) {
      byte[] key = ("key:" + i).getBytes(StandardCharsets.US_ASCII);
      int was = before.primary(key, 0, key.length, out);
      int now = after.primary(key, 0, key.length, out);
      if (was != now) {
        moved++;
        assertThat(now).as("a moved key goes to the new server").isEqualTo(3);
      }
    }
    assertThat(moved / (double) keys).isBetween(0.15, 0.35);
  }

  @Test
  void replicasAreDistinctAndStartWithThePrimary() {
    KetamaRing ring = new KetamaRing(THREE);
    int[] replicas = new int[3];
    int[] primary = new int[1];
    for (int i = 0; i < 1000; i++) {
      byte[] key = ("k" + i).getBytes(StandardCharsets.US_ASCII);
      assertThat(ring.replicas(key, 0, key.length, 2, replicas)).isEqualTo(2);
      assertThat(replicas[0]).isNotEqualTo(replicas[1]);
      assertThat(replicas[0]).isEqualTo(ring.primary(key, 0, key.length, primary));
      assertThat(ring.replicas(key, 0, key.length, 3, replicas)).isEqualTo(3);
      Set<Integer> all = Set.of(replicas[0], replicas[1], replicas[2]);
      assertThat(all).containsExactlyInAnyOrder(0, 1, 2);
    }
  }

  @Test
  void hashRouterReadsFromThePrimaryAndWritesToTheReplicas() {
    HashRouter router = new HashRouter(THREE, 2);
    KetamaRing ring = new KetamaRing(THREE);
    int[] replicas = new int[3];
    for (int i = 0; i < 200; i++) {
      String key = "user:" + i;
      byte[] keyBytes = key.getBytes(StandardCharsets.US_ASCII);
      ring.replicas(keyBytes, 0, keyBytes.length, 2, replicas);
      Request get = parse("get " + key + "\r\n");
      router.route(get);
      assertThat(servers(get)).containsExactly(replicas[0]);
      Request set = parse("set " + key + " 0 0 1\r\nv\r\n");
      router.route(set);
      assertThat(servers(set)).containsExactly(replicas[0], replicas[1]);
    }
  }

  @Test
  void hashRouterPlacesABase64KeyByTheKeyItNames() {
    HashRouter router = new HashRouter(THREE, 1);
    for (int i = 0; i < 200; i++) {
      String key = "user:" + i;
      String base64 =
          java.util.Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.US_ASCII));
      Request get = parse("get " + key + "\r\n");
      router.route(get);
      List<Integer> expected = servers(get);
      for (String meta :
          List.of(
              "mg " + base64 + " b v\r\n",
              "mg " + base64 + " v k bx\r\n",
              "me " + base64 + " b\r\n",
              "md " + base64 + " q b\r\n",
              "ma " + base64 + " b\r\n",
              "ms " + base64 + " 1 b\r\nv\r\n")) {
        Request request = parse(meta);
        router.route(request);
        assertThat(servers(request)).as(meta).isEqualTo(expected);
      }
    }
  }

  @Test
  void base64KeysDecodeAsMemcachedDecodesThem() {
    byte[] out = new byte[Base64Key.MAX_DECODED_BYTES];
    for (String[] c :
        new String[][] {
          {"a2V5", "key"}, {"a2V5MQ==", "key1"}, {"a2V5MTI=", "key12"}, {"a2V*5", "key"},
          {"a2V", null}, {"a===", null}, {"!!!!", null}, {"", null}
        }) {
      byte[] in = c[0].getBytes(StandardCharsets.US_ASCII);
      int n = Base64Key.decode(in, 0, in.length, out);
      if (c[1] == null) {
        assertThat(n).as(c[0]).isEqualTo(-1);
      } else {
        assertThat(new String(out, 0, n, StandardCharsets.US_ASCII)).as(c[0]).isEqualTo(c[1]);
      }
    }
  }

  @Test
  void hashRouterSplitsMultiGetsByPrimary() {
    HashRouter router = new HashRouter(THREE, 1);
    KetamaRing ring = new KetamaRing(THREE);
    StringBuilder line = new StringBuilder("get");
    for (int k = 0; k < 40; k++) {
      line.append(" key").append(k);
    }
    Request request = parse(line.append("\r\n").toString());
    router.route(request);
    assertThat(request.isSplit()).isTrue();
    int[] out = new int[1];
    Set<Integer> used = new HashSet<>();
    for (int k = 0; k < 40; k++) {
      byte[] key = ("key" + k).getBytes(StandardCharsets.US_ASCII);
      assertThat(request.keyServer(k)).isEqualTo(ring.primary(key, 0, key.length, out));
      used.add(request.keyServer(k));
    }
    assertThat(new HashSet<>(servers(request))).isEqualTo(used);
  }

  @Test
  void hashRouterWithReplicationGivesEachKeyOfAMultiGetALiveReplica() {
    List<BackendHealth> health = new ArrayList<>();
    for (String server : THREE) {
      health.add(new BackendHealth(server, 1, 1_000_000_000L, 1));
    }
    HashRouter router = new HashRouter(THREE, 2, health);
    KetamaRing ring = new KetamaRing(THREE);
    StringBuilder line = new StringBuilder("get");
    for (int k = 0; k < 40; k++) {
      line.append(" key").append(k);
    }
    String get = line.append("\r\n").toString();
    Request request = parse(get);
    router.route(request);
    int[] replicas = new int[3];
    for (int k = 0; k < 40; k++) {
      byte[] key = ("key" + k).getBytes(StandardCharsets.US_ASCII);
      ring.replicas(key, 0, key.length, 2, replicas);
      assertThat(request.keyServer(k)).isEqualTo(replicas[0]);
      assertThat(request.keyFallback(k)).isEqualTo(replicas[1]);
    }
    health.get(1).failed(System.nanoTime()); // ejected after one failure
    assertThat(health.get(1).inRotation()).isFalse();
    request = parse(get);
    router.route(request);
    for (int k = 0; k < 40; k++) {
      byte[] key = ("key" + k).getBytes(StandardCharsets.US_ASCII);
      ring.replicas(key, 0, key.length, 2, replicas);
      boolean onEjected = replicas[0] == 1 || replicas[1] == 1;
      int live = replicas[0] == 1 ? replicas[1] : replicas[0];
      assertThat(request.keyServer(k)).as("key%d", k).isEqualTo(live);
      assertThat(request.keyFallback(k)).as("key%d", k).isEqualTo(onEjected ? -1 : replicas[1]);
    }
    assertThat(servers(request)).doesNotContain(1);
  }

  private static List<Integer> servers(Request request) {
    List<Integer> servers = new ArrayList<>();
    for (int i = 0; i < request.serverCount(); i++) {
      servers.add(request.server(i));
    }
    return servers;
  }
}
