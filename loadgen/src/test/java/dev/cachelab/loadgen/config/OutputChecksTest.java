package dev.cachelab.loadgen.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutputChecksTest {
  @TempDir Path dir;

  @Test
  void createsTheFoldersAndLeavesNoFileBehind() throws Exception {
    Path json = dir.resolve("a/b/run.json");
    Path hdr = dir.resolve("c/lat");
    OutputChecks.check(
        LoadgenCommandTest.parse(
            "--json-out-file", json.toString(), "--hdr-file-prefix", "" + hdr));
    assertThat(json.getParent()).isDirectory();
    assertThat(hdr.getParent()).isDirectory();
    try (Stream<Path> a = Files.list(json.getParent());
        Stream<Path> c = Files.list(hdr.getParent())) {
      assertThat(a).isEmpty();
      assertThat(c).isEmpty();
    }
    assertThat(json).doesNotExist();
  }

  @Test
  void nothingToCheckWithoutOutputFiles() {
    OutputChecks.check(LoadgenCommandTest.parse());
  }

  @Test
  void folderThatCannotBeMadeFailsNamingTheOption() throws Exception {
    assertThatThrownBy(
            () -> OutputChecks.check(LoadgenCommandTest.parse("--json-out-file=/proc/nope/r.json")))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--json-out-file: /proc/nope/r.json (cannot write in /proc/nope: cannot create"
                + " /proc/nope)");
    Path file = Files.writeString(dir.resolve("file"), "x");
    assertThatThrownBy(
            () ->
                OutputChecks.check(
                    LoadgenCommandTest.parse("--hdr-file-prefix=" + file.resolve("lat"))))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--hdr-file-prefix: "
                + file.resolve("lat")
                + " (cannot write in "
                + file
                + ": "
                + file
                + " is not a folder)");
  }

  @Test
  void jsonOutFileThatIsAFolderFails() {
    assertThatThrownBy(() -> OutputChecks.check(LoadgenCommandTest.parse("--json-out-file=" + dir)))
        .isInstanceOf(ConfigException.class)
        .hasMessage("--json-out-file: " + dir + " is a folder (expected: a file)");
  }
}
