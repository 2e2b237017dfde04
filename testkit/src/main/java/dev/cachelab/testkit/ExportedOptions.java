package dev.cachelab.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A program's options exported as JSON and kept in the repository (what the Python side reads): the
 * kept copy must be the program's own text. With {@code -Dcachelab.options.write=true} ({@code make
 * options}) the kept copy is rewritten first. Called from a test's thread.
 */
public final class ExportedOptions {
  /** The system property that rewrites the kept copy. */
  public static final String WRITE_PROPERTY = "cachelab.options.write";

  private ExportedOptions() {}

  /**
   * Asserts that {@code keptPath} (from the repository's root; a test runs in its module's folder,
   * one below) holds {@code json}, the program's export.
   */
  public static void assertKeptCopyIs(String keptPath, String json) throws IOException {
    Path kept = Path.of("..").resolve(keptPath);
    if (Boolean.getBoolean(WRITE_PROPERTY)) {
      Files.writeString(kept, json, StandardCharsets.UTF_8);
    }
    assertThat(Files.readString(kept))
        .as(keptPath + " is stale; `make options` rewrites it")
        .isEqualTo(json);
  }
}
