package dev.cachelab.loadgen.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The exported description is the checked-in one, and each {@link Range} is what the help says and
 * what the validation accepts. With {@code -Dcachelab.options.write=true} (make options) the
 * checked-in copy is rewritten.
 */
class OptionsDescriptionTest {
  private static final Path CHECKED_IN = Path.of("..").resolve(OptionsDescription.PATH);

  @Test
  void theCheckedInDescriptionIsTheProgramsOwn() throws IOException {
    String json = OptionsDescription.json();
    if (Boolean.getBoolean("cachelab.options.write")) {
      Files.writeString(CHECKED_IN, json, StandardCharsets.UTF_8);
    }
    assertThat(Files.readString(CHECKED_IN))
        .as(OptionsDescription.PATH + " is stale; `make options` rewrites it")
        .isEqualTo(json);
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
