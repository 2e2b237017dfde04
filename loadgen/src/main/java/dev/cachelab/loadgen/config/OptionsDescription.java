package dev.cachelab.loadgen.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The loadgen's options as JSON, from the picocli model of {@link LoadgenCommand} and its {@link
 * Range}s, in {@code --help}'s order; the same fields as the middleware's export. The checked-in
 * copy, {@code ops/cachelab/schemas/loadgen-options.json} ({@code make options}), is where the spec
 * reads the loadgen's bounds.
 */
public final class OptionsDescription {
  private OptionsDescription() {}

  /** Where the checked-in copy lives, from the repository root. */
  public static final String PATH = "ops/cachelab/schemas/loadgen-options.json";

  /** The description, ending in a newline. */
  public static String json() {
    List<Map<String, Object>> options = new ArrayList<>();
    for (OptionSpec option : new CommandLine(new LoadgenCommand()).getCommandSpec().options()) {
      Map<String, Object> fields = new LinkedHashMap<>();
      fields.put("names", List.of(option.names()));
      fields.put("param", option.arity().max() > 0 ? option.paramLabel() : null);
      fields.put("type", option.type().getSimpleName());
      fields.put("required", option.required());
      fields.put("default", option.defaultValue());
      Range range = range(option);
      if (range != null) {
        fields.put("min", range.min());
        fields.put("max", range.max());
        fields.put("exclusive", range.exclusive());
      }
      fields.put("description", String.join(" ", option.description()));
      options.add(fields);
    }
    Map<String, Object> description = new LinkedHashMap<>();
    description.put("program", "loadgen");
    description.put("options", options);
    try {
      return new ObjectMapper()
              .enable(SerializationFeature.INDENT_OUTPUT)
              .writeValueAsString(description)
              .replace("\r\n", "\n")
          + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The {@link Range} on the option's field, or null. */
  static Range range(OptionSpec option) {
    return option.userObject() instanceof Field field ? field.getAnnotation(Range.class) : null;
  }
}
