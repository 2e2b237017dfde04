package dev.cachelab.middleware.it.isolation;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * The jqwik generators of a client's program: rounds of pipelined requests on keys of the client's
 * own, mixing classic and meta commands with and without {@code noreply} or the quiet flag (in each
 * spelling memcached reads as quiet), malformed lines, and values holding {@code \r\nEND\r\n}, NUL
 * bytes, numbers or up to 256 KiB. Every key holds {@code ~c<client>~} and every value that is not
 * a number starts with {@code <c<client>>}, so that a reply carrying another client's key or value
 * can be told. Used by the test's thread only.
 */
final class ClientPrograms {
  static final int KEYS_PER_CLIENT = 4;
  private static final int MAX_KEY_BYTES = 250;
  private static final int COMMAND_LINE_LIMIT_BYTES = 2048;
  private static final int LARGE_VALUE_MIN_BYTES = 16 * 1024;
  private static final int LARGE_VALUE_MAX_BYTES = 256 * 1024;

  private ClientPrograms() {}

  /** A client's rounds, each read back before the next is sent. */
  record Program(int client, List<Round> rounds) {
    int requests() {
      return rounds.stream().mapToInt(round -> round.requests().size()).sum();
    }

    @Override
    public String toString() {
      StringBuilder text = new StringBuilder("client " + client + ":");
      for (int r = 0; r < rounds.size(); r++) {
        text.append("\n  round ").append(r).append(rounds.get(r));
      }
      return text.toString();
    }
  }

  /**
   * A pipeline of requests, written to the middleware in pieces cut at the given thousandths of its
   * length (none: one write), so that requests reach it split across reads.
   */
  record Round(List<Request> requests, List<Integer> cutsPerMille) {
    @Override
    public String toString() {
      StringBuilder text = new StringBuilder();
      if (!cutsPerMille.isEmpty()) {
        text.append(" (written cut at ").append(cutsPerMille).append(" thousandths)");
      }
      text.append(':');
      for (Request request : requests) {
        text.append("\n    ").append(request);
      }
      return text.toString();
    }
  }

  static Arbitrary<Program> program(int client) {
    Arbitrary<List<Request>> requests =
        Combinators.combine(
                request(client).list().ofMinSize(1).ofMaxSize(16),
                Arbitraries.frequencyOf(
                    Tuple.of(9, Arbitraries.just(List.<Request>of())),
                    Tuple.of(1, closing(client).map(List::of))))
            .as(ClientPrograms::concat);
    Arbitrary<List<Integer>> cuts =
        Arbitraries.integers().between(1, 999).list().ofMaxSize(3).map(ClientPrograms::sorted);
    Arbitrary<Round> round = Combinators.combine(requests, cuts).as(Round::new);
    return round.list().ofMinSize(1).ofMaxSize(4).map(rounds -> new Program(client, rounds));
  }

  static String key(int client, int i) {
    return keyMarker(client) + "k" + i;
  }

  /** What every key of the client holds. */
  static String keyMarker(int client) {
    return "~c" + client + "~";
  }

  /** The marker every value of the client (but a number) starts with. */
  static String valueMarker(int client) {
    return "<c" + client + ">";
  }

  private static Arbitrary<Request> request(int client) {
    return Arbitraries.frequencyOf(
        Tuple.of(6, storage(client)),
        Tuple.of(2, cas(client)),
        Tuple.of(2, arithmetic(client)),
        Tuple.of(2, deleteOrTouch(client)),
        Tuple.of(5, read(client)),
        Tuple.of(3, multiGet(client)),
        Tuple.of(1, longMultiGet(client)),
        Tuple.of(3, metaGet(client)),
        Tuple.of(3, metaSet(client)),
        Tuple.of(2, metaDeleteOrArithmetic(client)),
        Tuple.of(1, Arbitraries.just(Request.same("mn\r\n"))),
        Tuple.of(2, malformed(client)),
        Tuple.of(1, serverWide()));
  }

  private static Arbitrary<String> key(int client) {
    return Arbitraries.integers().between(0, KEYS_PER_CLIENT - 1).map(i -> key(client, i));
  }

  private static Arbitrary<String> noreply() {
    return Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.just("")), Tuple.of(1, Arbitraries.just(" noreply")));
  }

  /** A quiet flag in one of the spellings memcached reads as quiet (a flag is its first byte). */
  private static Arbitrary<String> quiet() {
    return Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.just("")), Tuple.of(2, Arbitraries.of(" q", " qx", " q1", " qq")));
  }

  /**
   * A value: numbers stay far below 2^63, where memcached 1.6.18 stops being a model: to {@code
   * incr} or {@code decr} a stored number of 2^63 or more it looks for a '-' with strchr, which
   * runs past the value into whatever bytes follow it in memory, and answers "non-numeric" when it
   * meets one there (so {@code incr} deltas are small, and {@code decr}'s may be 2^64-1).
   */
  private static Arbitrary<String> value(int client) {
    return Arbitraries.frequencyOf(
        Tuple.of(8, smallValue(client)),
        Tuple.of(2, Arbitraries.of("0", "1", "41", "9223372036854775000", "")),
        Tuple.of(1, largeValue(client)));
  }

  /** No spaces but in {@code VALUE x 0 1}: a space in a value may be padding (ModelDifferences). */
  private static Arbitrary<String> smallValue(int client) {
    Arbitrary<String> plain = Arbitraries.strings().withChars("abxyz019").ofMaxLength(16);
    Arbitrary<String> inside =
        Arbitraries.of("", "\r\nEND\r\n", "\0", "\r\n", "VALUE x 0 1\r\n", "\0\r\nEND\r\n\0");
    return Combinators.combine(plain, inside, plain)
        .as((a, b, c) -> valueMarker(client) + a + b + c);
  }

  private static Arbitrary<String> largeValue(int client) {
    Arbitrary<Integer> bytes =
        Arbitraries.integers().between(LARGE_VALUE_MIN_BYTES, LARGE_VALUE_MAX_BYTES);
    Arbitrary<String> pattern = Arbitraries.strings().withChars("abxyz019").ofMinLength(1);
    return Combinators.combine(bytes, pattern)
        .as(
            (n, p) -> {
              String unit = p + "\r\nEND\r\n\0";
              String body = valueMarker(client) + unit.repeat(n / unit.length() + 1);
              return body.substring(0, n);
            });
  }

  private static Request storageRequest(
      String verb, String key, String flags, int exptime, String value, String more) {
    return Request.same(
        verb
            + " "
            + key
            + " "
            + flags
            + " "
            + exptime
            + " "
            + value.length()
            + more
            + "\r\n"
            + value
            + "\r\n");
  }

  private static Arbitrary<Request> storage(int client) {
    Arbitrary<String> verb = Arbitraries.of("set", "add", "replace", "append", "prepend");
    Arbitrary<String> flags = Arbitraries.of("0", "1", "42", "4294967295");
    // -1 expires the item at once, on every server alike; other expiry times are not generated,
    // since a second's boundary would fall between the model's clock and the servers'.
    Arbitrary<Integer> exptime =
        Arbitraries.frequencyOf(
            Tuple.of(9, Arbitraries.just(0)), Tuple.of(1, Arbitraries.just(-1)));
    return Combinators.combine(verb, key(client), flags, exptime, value(client), noreply())
        .as(ClientPrograms::storageRequest);
  }

  private static Arbitrary<Request> cas(int client) {
    Arbitrary<String> unique =
        Arbitraries.of(Request.LATEST_CAS, Request.LATEST_CAS, Request.STALE_CAS);
    return Combinators.combine(key(client), value(client), unique, noreply())
        .as((k, v, u, more) -> storageRequest("cas", k, "0", 0, v, " " + u + more));
  }

  private static Arbitrary<Request> arithmetic(int client) {
    Arbitrary<String> incr = Arbitraries.of("0", "1", "7").map(delta -> "incr %s " + delta);
    Arbitrary<String> decr =
        Arbitraries.of("0", "1", "7", "18446744073709551615").map(delta -> "decr %s " + delta);
    return Combinators.combine(Arbitraries.oneOf(incr, decr), key(client), noreply())
        .as((line, k, more) -> Request.same(line.formatted(k) + more + "\r\n"));
  }

  private static Arbitrary<Request> deleteOrTouch(int client) {
    Arbitrary<Request> delete =
        Combinators.combine(key(client), noreply())
            .as((k, more) -> Request.same("delete " + k + more + "\r\n"));
    Arbitrary<Request> touch =
        Combinators.combine(key(client), Arbitraries.of("0", "-1"), noreply())
            .as((k, t, more) -> Request.same("touch " + k + " " + t + more + "\r\n"));
    return Arbitraries.oneOf(delete, touch);
  }

  /**
   * One-key reads. {@code gat}/{@code gats} only with expiry 0: they refresh the item on the one
   * server that served the read (README, Replication rules), and 0 leaves the items alike.
   */
  private static Arbitrary<Request> read(int client) {
    return Combinators.combine(Arbitraries.of("get ", "gets ", "gat 0 ", "gats 0 "), key(client))
        .as((verb, k) -> Request.same(verb + k + "\r\n"));
  }

  private static Arbitrary<Request> multiGet(int client) {
    return Combinators.combine(
            Arbitraries.of("get", "gets", "gat 0", "gats 0"),
            key(client).list().ofMinSize(2).ofMaxSize(8))
        .as((verb, keys) -> Request.same(verb + " " + String.join(" ", keys) + "\r\n"));
  }

  /** A multi-get line over 2048 bytes (allowed for get and gets), mostly of keys never set. */
  private static Arbitrary<Request> longMultiGet(int client) {
    return key(client)
        .map(
            k -> {
              StringBuilder line = new StringBuilder("get ").append(k);
              for (int i = 0; line.length() <= COMMAND_LINE_LIMIT_BYTES + 100; i++) {
                line.append(' ').append(keyMarker(client)).append("miss").append(i);
              }
              return Request.same(line.append(' ').append(k).append("\r\n").toString());
            });
  }

  private static Arbitrary<String> flags(String... flags) {
    return Arbitraries.of(flags)
        .list()
        .uniqueElements()
        .ofMaxSize(4)
        .map(list -> list.isEmpty() ? "" : " " + String.join(" ", list));
  }

  private static Arbitrary<Request> metaGet(int client) {
    return Combinators.combine(key(client), flags("v", "k", "f", "s", "c", "O77"), quiet())
        .as((k, f, q) -> Request.same("mg " + k + f + q + "\r\n"));
  }

  private static Arbitrary<Request> metaSet(int client) {
    Arbitrary<String> mode = Arbitraries.of("", "", " MS", " ME", " MA", " MP", " MR");
    Arbitrary<String> flags = flags("F5", "T0", "k", "O9", "C" + Request.STALE_CAS);
    return Combinators.combine(key(client), value(client), flags, mode, quiet())
        .as(
            (k, v, f, m, q) -> {
              String wire = "ms " + k + " " + v.length() + f + m + q + "\r\n" + v + "\r\n";
              // refused while writes go to several servers (ModelDifferences)
              return f.contains(" C")
                  ? new Request(wire, ModelDifferences.refusedLine(""), false)
                  : Request.same(wire);
            });
  }

  private static Arbitrary<Request> metaDeleteOrArithmetic(int client) {
    Arbitrary<Request> delete =
        Combinators.combine(key(client), flags("k", "O4"), quiet())
            .as((k, f, q) -> Request.same("md " + k + f + q + "\r\n"));
    Arbitrary<Request> arithmetic =
        Combinators.combine(key(client), flags("v", "k", "O3", "D5", "MD", "c"), quiet())
            .as((k, f, q) -> Request.same("ma " + k + f + q + "\r\n"));
    return Arbitraries.oneOf(delete, arithmetic);
  }

  /**
   * Commands that act on every server: {@code version} (answered by server 0) and the admin
   * commands the middleware refuses at its defaults (ModelDifferences).
   */
  private static Arbitrary<Request> serverWide() {
    return Arbitraries.oneOf(
        Arbitraries.just(Request.same("version\r\n")),
        Combinators.combine(Arbitraries.of("flush_all", "flush_all 0", "verbosity 1"), noreply())
            .as(
                (line, more) ->
                    new Request(line + more + "\r\n", ModelDifferences.refusedLine(more), false)));
  }

  /**
   * Lines memcached answers with an error and reads on after. A storage command refused before its
   * data block is read gets its line alone to the model: memcached would read the data block as the
   * next command, the middleware skips it (README, Protocol: differences on purpose).
   */
  private static Arbitrary<Request> malformed(int client) {
    Arbitrary<String> longKey =
        key(client).map(k -> k + "x".repeat(MAX_KEY_BYTES + 1 - k.length()));
    return Arbitraries.oneOf(
        key(client).map(k -> Request.same("nope " + k + "\r\n")),
        Arbitraries.just(Request.same("\r\n")),
        Combinators.combine(key(client), noreply())
            .as((k, more) -> skippedBlock("set " + k + " abc 0 1" + more + "\r\n", "x")),
        Combinators.combine(key(client), noreply())
            .as((k, more) -> Request.same("incr " + k + " abc" + more + "\r\n")),
        key(client).map(k -> Request.same("touch " + k + " abc\r\n")),
        key(client).map(k -> Request.same("get " + k + "\0junk\r\n")),
        key(client).map(k -> Request.same("mg " + k + " v v\r\n")),
        key(client).map(k -> Request.same("mg " + k + " v q qq\r\n")),
        longKey.map(k -> new Request("get " + k + "\r\n", "mg " + k + " v\r\n", false)),
        longKey.map(k -> Request.same("mg " + k + " v\r\n")),
        longKey.map(k -> skippedBlock("set " + k + " 0 0 1\r\n", "x")),
        longKey.map(k -> skippedBlock("ms " + k + " 1\r\n", "x")));
  }

  private static Request skippedBlock(String line, String block) {
    return new Request(line + block + "\r\n", line, false);
  }

  /**
   * Requests after which the middleware cannot find the next request (or memcached would close): it
   * answers {@code CLIENT_ERROR} and closes the connection.
   */
  private static Arbitrary<Request> closing(int client) {
    return Arbitraries.oneOf(
        key(client).map(k -> closes("touch " + k + " 0 " + "x".repeat(3_000) + "\r\n")),
        key(client).map(k -> closes("set " + k + " 0 0 -1\r\n")),
        key(client).map(k -> closes("set " + k + " 0 0 2\r\nabcd\r\n")),
        key(client).map(k -> closes("ms " + k + " abc\r\nxy\r\n")));
  }

  private static Request closes(String wire) {
    return new Request(wire, "", true);
  }

  private static List<Integer> sorted(List<Integer> values) {
    return values.stream().sorted().toList();
  }

  private static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }
}
