package dev.cachelab.loadgen.config;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Checks before a run that its output files can be written, so that a bad {@code --json-out-file}
 * or {@code --hdr-file-prefix} fails at once with a {@link ConfigException} naming the option,
 * instead of after the run with its measurements lost. Creates the folders the files go in (as the
 * writers would) and writes and deletes one empty file there. Main thread.
 */
public final class OutputChecks {
  private OutputChecks() {}

  /**
   * Runs both checks.
   *
   * @throws ConfigException naming the option whose folder cannot be written
   */
  public static void check(LoadgenConfig config) {
    if (config.jsonOutFile() != null) {
      Path file = config.jsonOutFile();
      if (Files.isDirectory(file)) {
        throw new ConfigException("--json-out-file: " + file + " is a folder (expected: a file)");
      }
      requireWritableFolder("--json-out-file", file);
    }
    if (config.hdrFilePrefix() != null) {
      requireWritableFolder("--hdr-file-prefix", Path.of(config.hdrFilePrefix()));
    }
  }

  /** The folder {@code file} goes in exists (or is created) and takes a new file. */
  private static void requireWritableFolder(String option, Path file) {
    Path folder = file.toAbsolutePath().getParent();
    try {
      Files.createDirectories(folder);
      Files.delete(Files.createTempFile(folder, ".loadgen-write-check", ""));
    } catch (IOException | SecurityException e) {
      throw new ConfigException(
          option + ": " + file + " (cannot write in " + folder + ": " + reason(e) + ")");
    }
  }

  private static String reason(Exception e) {
    return switch (e) {
      case NoSuchFileException f -> "cannot create " + f.getFile();
      case FileAlreadyExistsException f -> f.getFile() + " is not a folder";
      case AccessDeniedException f -> "permission denied on " + f.getFile();
      case FileSystemException f when f.getReason() != null -> f.getReason() + ": " + f.getFile();
      default -> String.valueOf(e.getMessage());
    };
  }
}
