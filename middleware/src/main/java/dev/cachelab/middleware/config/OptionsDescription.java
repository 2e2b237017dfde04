package dev.cachelab.middleware.config;

import static dev.cachelab.middleware.json.JsonStrings.quote;
import static dev.cachelab.middleware.json.JsonStrings.quoteAll;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The middleware's flags as JSON, from the picocli model of {@link ConfigParser.Flags} and its
 * {@link Range}s: names, parameter, type, whether required, default, range and help text, in {@code
 * --help}'s order. The checked-in copy, {@code ops/cachelab/schemas/middleware-options.json}
 * ({@code make options}), is what the spec, the chart's checks and the docs' tables read, so a flag
 * and its bounds are written once, here in Java.
 */
public final class OptionsDescription {
  private OptionsDescription() {}

  /** Where the checked-in copy lives, from the repository root. */
  public static final String PATH = "ops/cachelab/schemas/middleware-options.json";

  /** The description, one option a line, ending in a newline. */
  public static String json() {
    Map<String, Range> ranges = ranges();
    StringBuilder j = new StringBuilder("{\n  \"program\": \"middleware\",\n  \"options\": [");
    List<OptionSpec> options = new CommandLine(new ConfigParser.Flags()).getCommandSpec().options();
    for (int i = 0; i < options.size(); i++) {
      OptionSpec option = options.get(i);
      List<String> fields = new ArrayList<>();
      fields.add("\"names\": " + quoteAll(List.of(option.names())));
      fields.add("\"param\": " + (option.arity().max() > 0 ? quote(option.paramLabel()) : "null"));
      fields.add("\"type\": " + quote(option.type().getSimpleName()));
      fields.add("\"required\": " + option.required());
      fields.add(
          "\"default\": "
              + (option.defaultValue() == null ? "null" : quote(option.defaultValue())));
      Range range = ranges.get(option.longestName());
      if (range != null) {
        fields.add("\"min\": " + range.min());
        fields.add("\"max\": " + (range.max() == Long.MAX_VALUE ? "null" : range.max()));
        if (!range.maxIs().isEmpty()) {
          fields.add("\"max_is\": " + quote(range.maxIs()));
        }
        if (range.orZero()) {
          fields.add("\"or_zero\": true");
        }
        if (range.count()) {
          fields.add("\"count\": true");
        }
      }
      fields.add("\"description\": " + quote(String.join(" ", option.description())));
      j.append(i == 0 ? "\n" : ",\n").append("    {").append(String.join(", ", fields)).append('}');
    }
    return j.append("\n  ]\n}\n").toString();
  }

  /** The {@link Range} of each annotated flag, by its longest name. */
  static Map<String, Range> ranges() {
    Map<String, Range> ranges = new HashMap<>();
    for (OptionSpec option : new CommandLine(new ConfigParser.Flags()).getCommandSpec().options()) {
      if (option.userObject() instanceof Field field && field.isAnnotationPresent(Range.class)) {
        ranges.put(option.longestName(), field.getAnnotation(Range.class));
      }
    }
    return ranges;
  }
}
