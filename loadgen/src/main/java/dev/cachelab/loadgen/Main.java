package dev.cachelab.loadgen;

import dev.cachelab.loadgen.config.ConfigException;
import dev.cachelab.loadgen.config.LoadgenCommand;
import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.config.OutputChecks;
import java.io.PrintStream;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * Entry point: {@code java -jar loadgen.jar [memtier options]}. Exit status 0 when every run
 * completed, 1 when a run failed (unreachable server, closed connection, malformed reply; what was
 * measured is still printed and written), 2 for invalid options (also an output file whose folder
 * cannot be written, found before the run: {@link OutputChecks}).
 */
public final class Main {
  /** Exit status for invalid options. */
  public static final int EXIT_USAGE = 2;

  /** Exit status for a run that failed. */
  public static final int EXIT_FAILED = 1;

  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Parses {@code args}, runs, and returns the exit status. Main thread. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    LoadgenCommand command = new LoadgenCommand();
    CommandLine commandLine = new CommandLine(command);
    LoadgenConfig config;
    try {
      LoadgenCommand.rejectUnsupported(args);
      commandLine.parseArgs(args);
      if (commandLine.isUsageHelpRequested()) {
        commandLine.usage(out);
        return 0;
      }
      if (commandLine.isVersionHelpRequested()) {
        commandLine.printVersionHelp(out);
        return 0;
      }
      config = command.toConfig();
      OutputChecks.check(config);
    } catch (ParameterException | ConfigException e) {
      err.println("error: " + e.getMessage());
      err.println("Try 'java -jar loadgen.jar --help' for the options.");
      return EXIT_USAGE;
    }
    return new Loadgen(config, List.of(args), out, err).run();
  }
}
