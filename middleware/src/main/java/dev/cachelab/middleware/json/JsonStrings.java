package dev.cachelab.middleware.json;

import java.util.List;
import java.util.Locale;

/** Strings as JSON text, for the run summary and the exported options. Any thread. */
public final class JsonStrings {
  private JsonStrings() {}

  /** {@code values} as a JSON array of strings. */
  public static String quoteAll(List<String> values) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < values.size(); i++) {
      s.append(i == 0 ? "" : ", ").append(quote(values.get(i)));
    }
    return s.append(']').toString();
  }

  /** {@code value} as a JSON string. */
  public static String quote(String value) {
    StringBuilder s = new StringBuilder(value.length() + 2).append('"');
    for (char c : value.toCharArray()) {
      switch (c) {
        case '"' -> s.append("\\\"");
        case '\\' -> s.append("\\\\");
        default -> {
          if (c < 0x20) {
            s.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            s.append(c);
          }
        }
      }
    }
    return s.append('"').toString();
  }
}
