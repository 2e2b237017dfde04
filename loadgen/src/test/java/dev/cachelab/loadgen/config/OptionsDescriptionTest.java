package dev.cachelab.loadgen.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cachelab.testkit.ExportedOptions;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The exported description is the checked-in one ({@link ExportedOptions}), and each {@link Range}
 * is what the help says and what the validation accepts.
 */
class OptionsDescriptionTest {
  @Test
  void theCheckedInDescriptionIsTheProgramsOwn() throws IOException {
    ExportedOptions.assertKeptCopyIs(OptionsDescription.PATH, OptionsDescription.json());
  }

  @Test
  void theHelpAndTheValidationFollowEachRange() {
    List<OptionSpec> ranged =
        new CommandLine(new LoadgenCommand())
            .getCommandSpec().options().stream()
                .filter(option -> OptionsDescription.range(option) != null)
                .toList();
    assertThat(ranged).isNotEmpty();
    for (OptionSpec option : ranged) {
      Range range = OptionsDescription.range(option);
      String stated =
          range.exclusive()
              ? "(" + number(range.min()) + ", " + number(range.max()) + ")"
              : number(range.min()) + ".." + number(range.max());
      assertThat(String.join(" ", option.description())).contains(stated);
      double inside = (range.min() + range.max()) / 2;
      String name = option.longestName();
      assertThatCode(() -> parse(name, inside)).doesNotThrowAnyException();
      for (double outside : new double[] {range.min(), range.max()}) {
        if (range.exclusive()) {
          assertThatThrownBy(() -> parse(name, outside))
              .isInstanceOf(ConfigException.class)
              .hasMessageStartingWith(name + ": ");
        } else {
          assertThatCode(() -> parse(name, outside)).doesNotThrowAnyException();
        }
      }
    }
  }

  private static String number(double value) {
    return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
  }

  /** Valid options with {@code name} set to value (the Z pattern, which the exponent needs). */
  private static void parse(String name, double value) {
    LoadgenCommandTest.parse("--key-pattern=Z:Z", name + "=" + value);
  }
}
