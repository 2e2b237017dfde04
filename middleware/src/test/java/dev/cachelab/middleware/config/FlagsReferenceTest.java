package dev.cachelab.middleware.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code --help} explains every flag and names its default. The flag table of {@code
 * middleware/README.md} is rendered from the exported description ({@link OptionsDescription}).
 */
class FlagsReferenceTest {
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
}
