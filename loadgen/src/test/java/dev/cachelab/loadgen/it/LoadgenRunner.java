package dev.cachelab.loadgen.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cachelab.loadgen.Main;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs the load generator in-process (as {@code java -jar} would) and reads its JSON. */
final class LoadgenRunner {
  /** Exit status, captured stdout/stderr and the parsed JSON (null if none was written). */
  record Outcome(int exitCode, String out, String err, JsonNode json) {
    JsonNode all() {
      return json.get("ALL STATS");
    }

    long count(String section) {
      return all().get(section).get("Count").asLong();
    }

    double perSecond(String section, String field) {
      return all().get(section).get(field).asDouble();
    }

    /** Hits (or misses) as a count: rate times the run's duration. */
    long total(String section, String field) {
      double seconds = all().at("/Runtime/Total duration").asLong() / 1000.0;
      return Math.round(perSecond(section, field) * seconds);
    }
  }

  private LoadgenRunner() {}

  /** {@code base} followed by {@code extra}: a test's fixed options plus one case's own. */
  static String[] concat(String[] base, String... extra) {
    String[] all = new String[base.length + extra.length];
    System.arraycopy(base, 0, all, 0, base.length);
    System.arraycopy(extra, 0, all, base.length, extra.length);
    return all;
  }

  static Outcome run(Path dir, String... args) throws IOException {
    Path json = dir.resolve("run-" + System.nanoTime() + ".json");
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--json-out-file=" + json);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Main.run(all.toArray(String[]::new), o, e);
    }
    JsonNode node = Files.exists(json) ? new ObjectMapper().readTree(json.toFile()) : null;
    return new Outcome(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8), node);
  }
}
