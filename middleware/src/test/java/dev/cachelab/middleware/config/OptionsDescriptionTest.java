package dev.cachelab.middleware.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cachelab.testkit.ExportedOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The exported description is the checked-in one ({@link ExportedOptions}), and each {@link Range}
 * is what the help says and what the validation accepts: the bounds other languages read from the
 * export are the program's.
 */
class OptionsDescriptionTest {
  @Test
  void theCheckedInDescriptionIsTheProgramsOwn() throws IOException {
    ExportedOptions.assertKeptCopyIs(OptionsDescription.PATH, OptionsDescription.json());
  }

  @Test
  void everyNumericFlagHasARange() {
    Map<String, Range> ranges = OptionsDescription.ranges();
    for (OptionSpec option : new CommandLine(new ConfigParser.Flags()).getCommandSpec().options()) {
      Class<?> type = option.type();
      if (type == int.class || type == long.class) {
        assertThat(ranges).as(option.longestName()).containsKey(option.longestName());
      }
    }
  }

  @Test
  void theHelpStatesEachRange() {
    for (Map.Entry<String, Range> entry : OptionsDescription.ranges().entrySet()) {
      Range range = entry.getValue();
      String stated =
          range.orZero()
              ? "0 or >= " + range.min()
              : range.min() + ".." + (range.maxIs().isEmpty() ? range.max() : range.maxIs());
      assertThat(description(entry.getKey())).as(entry.getKey()).contains(stated);
    }
  }

  @Test
  void theValidationAcceptsEachRangeAndNothingOutside() {
    for (Map.Entry<String, Range> entry : OptionsDescription.ranges().entrySet()) {
      String flag = entry.getKey();
      Range range = entry.getValue();
      assertAccepted(flag, range.min());
      assertRejected(flag, range.min() - 1, range.orZero() && range.min() - 1 == 0);
      if (range.orZero()) {
        assertAccepted(flag, 0);
      }
      if (range.max() != Long.MAX_VALUE) {
        assertAccepted(flag, range.max());
        assertRejected(flag, range.max() + 1, false);
      }
    }
  }

  private static String description(String flag) {
    OptionSpec option = new CommandLine(new ConfigParser.Flags()).getCommandSpec().findOption(flag);
    return String.join(" ", option.description());
  }

  private static void assertAccepted(String flag, long value) {
    assertThatCode(() -> ConfigParser.parse(args(flag, value)))
        .as(flag + " " + value)
        .doesNotThrowAnyException();
  }

  private static void assertRejected(String flag, long value, boolean zeroAccepted) {
    if (zeroAccepted || (flag.equals("-m") && value < 1)) {
      return;
    }
    assertThatThrownBy(() -> ConfigParser.parse(args(flag, value)))
        .as(flag + " " + value)
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(flag + ": ");
  }

  /** Valid arguments with as many servers as any range allows, and {@code flag} set to value. */
  private static String[] args(String flag, long value) {
    Map<String, List<String>> flags = new LinkedHashMap<>();
    flags.put("-l", List.of("127.0.0.1"));
    flags.put("-p", List.of("0"));
    flags.put("-t", List.of("8"));
    flags.put("-s", List.of("false"));
    flags.put("-m", servers(MiddlewareConfig.MAX_SERVERS));
    flags.put(flag, flag.equals("-m") ? servers((int) value) : List.of(Long.toString(value)));
    List<String> args = new ArrayList<>();
    flags.forEach(
        (name, values) -> {
          args.add(name);
          args.addAll(values);
        });
    return args.toArray(String[]::new);
  }

  private static List<String> servers(int count) {
    List<String> servers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      servers.add("127.0.0.1:" + (20000 + i));
    }
    return servers;
  }
}
