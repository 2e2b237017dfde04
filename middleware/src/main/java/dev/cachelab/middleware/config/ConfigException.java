package dev.cachelab.middleware.config;

/** A command-line value outside its accepted range; the message names the flag and the range. */
public final class ConfigException extends IllegalArgumentException {
  public ConfigException(String message) {
    super(message);
  }
}
