package dev.cachelab.middleware.it.isolation;

import dev.cachelab.middleware.it.isolation.ClientPrograms.Program;
import dev.cachelab.middleware.it.isolation.ClientPrograms.Round;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One client's program run twice: on its own connection to the model memcached ({@link #runModel}),
 * then through the middleware while the other clients run theirs ({@link #runMiddleware}). Checks,
 * round by round, that the middleware's replies are the model's (after {@link
 * ModelDifferences#normalise}) and that none carries another client's key or value; each problem is
 * one readable paragraph. Each method is called by one thread at a time.
 */
final class ClientRun {
  private final Program program;
  private final int clients;
  private final List<List<String>> modelRounds = new ArrayList<>();
  private final List<String> problems = new ArrayList<>();

  /**
   * @param clients how many clients run at once (their ids are 0..clients-1)
   */
  ClientRun(Program program, int clients) {
    this.program = program;
    this.clients = clients;
  }

  void runModel(int modelPort) throws IOException {
    try (ClientConnection model = new ClientConnection(modelPort, true)) {
      for (Round round : program.rounds()) {
        modelRounds.add(normalised(model.exchange(round, new ArrayList<>())));
      }
    }
  }

  void runMiddleware(int middlewarePort) throws IOException {
    try (ClientConnection middleware = new ClientConnection(middlewarePort, false)) {
      for (int r = 0; r < program.rounds().size() && problems.isEmpty(); r++) {
        List<String> soFar = new ArrayList<>();
        List<String> replies;
        try {
          replies = middleware.exchange(program.rounds().get(r), soFar);
        } catch (IOException e) {
          checkForeign(r, soFar);
          problems.add(describe(r, "no complete reply (" + e + ")", soFar));
          return;
        }
        checkForeign(r, replies);
        if (!normalised(replies).equals(modelRounds.get(r))) {
          problems.add(describe(r, "replies differ from memcached's", replies));
        }
      }
      if (problems.isEmpty()) {
        String next = middleware.noOp();
        if (!next.equals("MN\r\n")) {
          problems.add(
              "client "
                  + program.client()
                  + ": after its last round, a reply more: "
                  + Request.readable(next));
        }
      }
    }
  }

  List<String> problems() {
    return problems;
  }

  /** No reply may carry another client's key ({@code ~c<n>~}) or value ({@code <c<n>>}). */
  private void checkForeign(int round, List<String> replies) {
    for (String reply : replies) {
      for (int other = 0; other < clients; other++) {
        if (other == program.client()) {
          continue;
        }
        if (reply.contains(ClientPrograms.keyMarker(other))
            || reply.contains(ClientPrograms.valueMarker(other))) {
          problems.add(
              "client "
                  + program.client()
                  + " got client "
                  + other
                  + "'s key or value in round "
                  + round
                  + ": "
                  + Request.readable(reply));
        }
      }
    }
  }

  private String describe(int round, String what, List<String> replies) {
    List<String> expected = modelRounds.get(round);
    List<String> actual = normalised(replies);
    StringBuilder text =
        new StringBuilder("client ")
            .append(program.client())
            .append(", round ")
            .append(round)
            .append(": ")
            .append(what)
            .append("\n  requests");
    text.append(program.rounds().get(round));
    text.append("\n  memcached (normalised) | middleware (normalised):");
    for (int i = 0; i < Math.max(expected.size(), actual.size()); i++) {
      String e = i < expected.size() ? Request.readable(expected.get(i)) : "-";
      String a = i < actual.size() ? Request.readable(actual.get(i)) : "-";
      text.append("\n    ").append(e.equals(a) ? "  " : "X ").append(e).append(" | ").append(a);
    }
    return text.toString();
  }

  private static List<String> normalised(List<String> frames) {
    return frames.stream().map(ModelDifferences::normalise).toList();
  }
}
