package dev.cachelab.loadgen.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The values a numeric option accepts, on its {@link LoadgenCommand} field; the validation checks
 * the same constants and {@link OptionsDescription} exports the range with the option.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
@interface Range {
  double min();

  double max();

  /** Both ends are excluded: the value lies in (min, max). */
  boolean exclusive() default false;
}
