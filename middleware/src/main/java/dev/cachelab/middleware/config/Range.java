package dev.cachelab.middleware.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The values a numeric flag accepts, on its {@link ConfigParser.Flags} field. {@link
 * MiddlewareConfig} checks the same constants; {@link OptionsDescription} exports the range with
 * the flag, and the spec, the chart and the docs take their bounds from that export.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
@interface Range {
  long min();

  long max();

  /** What the maximum really is when it depends on another flag ({@code max} is its largest). */
  String maxIs() default "";

  /** 0 is accepted as well (an "off" or "default" value below {@code min}). */
  boolean orZero() default false;

  /** For a list: the range bounds how many values it has. */
  boolean count() default false;
}
