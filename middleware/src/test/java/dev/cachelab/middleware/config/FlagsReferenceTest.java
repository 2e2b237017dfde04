package dev.cachelab.middleware.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code --help} explains every flag, and the flag table of {@code middleware/README.md} is the one
 * {@code --help} describes: the table between {@code <!-- flags:begin -->} and {@code <!--
 * flags:end -->} is rendered here from the same picocli options and must match.
 */
class FlagsReferenceTest {
  private static final String BEGIN = "<!-- flags:begin (FlagsReferenceTest) -->\n";
  private static final String END = "<!-- flags:end -->";

  private static CommandLine commandLine() {
    return new CommandLine(new ConfigParser.Flags());
  }

  @Test
  void helpGivesEveryOptionADescriptionAndItsDefault() {
    StringWriter help = new StringWriter();
    commandLine().usage(new PrintWriter(help));
    for (OptionSpec option : commandLine().getCommandSpec().options()) {
      String description = String.join(" ", option.description());
      assertThat(description).as(option.longestName()).isNotBlank();
      boolean standard = option.usageHelp() || option.versionHelp();
      if (!option.required() && !standard) {
        assertThat(option.defaultValue() != null || description.toLowerCase().contains("default:"))
            .as(option.longestName() + " names its default")
            .isTrue();
      }
    }
    assertThat(help.toString())
        .containsPattern("--backend-timeout-ms=<ms>\\s+How long a worker waits")
        .contains("Default: 1000")
        .doesNotContainPattern("Required\\.\\s+Default:");
  }

  @Test
  void theReadmeFlagTableIsTheOneHelpDescribes() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    int begin = readme.indexOf(BEGIN);
    int end = readme.indexOf(END);
    assertThat(begin).as("README.md has the flags:begin marker").isNotNegative();
    String table = readme.substring(begin + BEGIN.length(), end);
    String expected = table();
    assertThat(table)
        .as("middleware/README.md's flag table; it should read:\n" + expected)
        .isEqualTo(expected);
  }

  /** The flag table as markdown: flag, meaning and default of each option, in --help's order. */
  static String table() {
    StringBuilder out = new StringBuilder("| flag | meaning | default |\n|---|---|---|\n");
    for (OptionSpec option : commandLine().getCommandSpec().options()) {
      String names = "`" + String.join("`, `", option.names()) + "`";
      if (option.arity().max() > 0) {
        names = "`" + String.join("`, `", option.names()) + " " + option.paramLabel() + "`";
      }
      String defaultValue =
          option.required()
              ? "required"
              : option.defaultValue() == null ? "" : "`" + option.defaultValue() + "`";
      out.append("| ")
          .append(names.replace("|", "\\|"))
          .append(" | ")
          .append(String.join(" ", option.description()).replace("|", "\\|"))
          .append(" | ")
          .append(defaultValue)
          .append(" |\n");
    }
    return out.toString();
  }
}
