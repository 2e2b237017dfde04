package dev.cachelab.loadgen.config;

/** An invalid option value or combination; the message names the option and what was wrong. */
public final class ConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public ConfigException(String message) {
    super(message);
  }
}
