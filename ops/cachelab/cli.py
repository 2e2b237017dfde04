"""The `cachelab` command line: run, validate, report, compare, list, summarize, schema."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from cachelab import __version__
from cachelab.spec import SpecError, json_schema, load_spec

EXPERIMENTS_DIR = Path(__file__).resolve().parents[1] / "experiments"

# summary.csv columns shown in the closing table of a run (means over repetitions)
TABLE_COLUMNS = [
    ("throughput_ops_per_s", "ops/s", "{:,.0f}"),
    ("response_time_ms", "RT ms", "{:.3f}"),
    ("p99_ms", "p99 ms", "{:.3f}"),
    ("mw_throughput_ops_per_s", "MW ops/s", "{:,.0f}"),
    ("mw_response_time_ms", "MW RT ms", "{:.3f}"),
    ("mw_queue_time_ms", "queue ms", "{:.3f}"),
    ("mw_service_time_ms", "service ms", "{:.3f}"),
    ("misses", "misses", "{:.0f}"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cachelab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"cachelab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run an experiment spec and write a results folder")
    run.add_argument("spec", type=Path, help="experiment spec (YAML)")
    run.add_argument("--target", choices=["local", "k8s"], default="local")
    run.add_argument(
        "--results", type=Path, default=None, help="results base folder (default: <repo>/results)"
    )
    run.add_argument("--report", action="store_true", help="build the report when the run is done")
    run.add_argument(
        "--bandwidth",
        choices=["off", "asl2017", "asl2019", "azure-v2"],
        default=None,
        help="bandwidth profile; local: tc on lo while each run measures, needs root (default"
        " off; asl2019 also adds its 0.9 ms RTT with netem); k8s: pod annotations (default"
        " $CACHELAB_K8S_BANDWIDTH or asl2017)",
    )
    run.add_argument(
        "--monitor",
        action="store_true",
        help="local target: scrape the run with a Prometheus, data in <results>/prometheus",
    )

    validate = sub.add_parser("validate", help="check specs and print their points")
    validate.add_argument("specs", type=Path, nargs="+", metavar="SPEC")

    report = sub.add_parser("report", help="build report/index.html for a results folder")
    report.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")

    compare = sub.add_parser(
        "compare", help="overlay several results folders on the same axes, as one report"
    )
    compare.add_argument("results_dirs", type=Path, nargs="+", metavar="RESULTS_DIR")
    compare.add_argument(
        "--label",
        action="append",
        default=[],
        help="legend label of the next folder, in order (default: <experiment>/<timestamp>)",
    )
    compare.add_argument("--out", type=Path, default=Path("cachelab-compare"), help="output folder")
    compare.add_argument(
        "--x", default=None, help="summary.csv column on the x axis (default: the specs' report.x)"
    )

    summarize = sub.add_parser("summarize", help="rebuild summary.csv from a results folder")
    summarize.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")

    listing = sub.add_parser("list", help="list the experiment specs")
    listing.add_argument("--dir", type=Path, default=EXPERIMENTS_DIR, help="folder of specs")

    sub.add_parser("schema", help="print the JSON schema of the spec format")
    return parser


def _error(console: Console, message: str) -> int:
    console.print(f"[red]error:[/] {message}", highlight=False, soft_wrap=True)
    return 2


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    failed = 0
    for path in args.specs:
        try:
            spec = load_spec(path)
        except SpecError as error:
            console.print(f"[red]✗[/] {error}", highlight=False, soft_wrap=True)
            failed += 1
            continue
        points = spec.points()
        runs = len(points) * spec.run.repetitions
        console.print(
            f"[green]✓[/] {path}: {spec.name}, {len(points)} points x "
            f"{spec.run.repetitions} repetitions = {runs} runs of {spec.run.duration_s} s",
            highlight=False,
            soft_wrap=True,
        )
    return 1 if failed else 0


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    table = Table("spec", "points", "runs", "measured", "seeds", "description")
    for path in sorted(args.dir.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError as error:
            table.add_row(path.name, "-", "-", "-", "-", f"[red]invalid[/]: {error.problems[0]}")
            continue
        points = len(spec.points())
        runs = points * spec.run.repetitions
        table.add_row(
            path.name,
            str(points),
            str(runs),
            f"{runs * spec.run.duration_s} s",
            ", ".join(spec.seeds),
            spec.description.strip(),
        )
    console.print(table)
    return 0


def _lazy(module: str, attribute: str, what: str) -> Any:
    """A function from a module another part of cachelab provides, or None if not there yet."""
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name and module.startswith(error.name):
            return None
        raise
    function = getattr(loaded, attribute, None)
    if function is None:
        raise SystemExit(f"error: {module} has no {attribute}() ({what})")
    return function


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    if not (args.results_dir / "summary.csv").is_file():
        return _error(console, f"{args.results_dir}: no summary.csv (is it a results folder?)")
    build_report = _lazy("cachelab.report", "build_report", "the report builder")
    if build_report is None:
        return _error(console, "the report builder (cachelab.report) is not installed yet")
    try:
        index = build_report(args.results_dir)
    except Exception as error:  # the report's own errors name what is wrong
        return _error(console, f"report failed: {type(error).__name__}: {error}")
    console.print(f"report: [bold]{index}[/]", highlight=False)
    return 0


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from cachelab.compare import build_comparison
    from cachelab.report import ReportError

    for folder in args.results_dirs:
        if not (folder / "summary.csv").is_file():
            return _error(console, f"{folder}: no summary.csv (is it a results folder?)")
    try:
        index = build_comparison(args.results_dirs, args.out, args.label, args.x)
    except ReportError as error:
        return _error(console, str(error))
    console.print(f"comparison: [bold]{index}[/]", highlight=False)
    return 0


def cmd_summarize(args: argparse.Namespace, console: Console) -> int:
    from cachelab.summary import build_summary

    if not (args.results_dir / "spec.yaml").is_file():
        return _error(console, f"{args.results_dir}: no spec.yaml (is it a results folder?)")
    path = build_summary(args.results_dir)
    console.print(f"summary: [bold]{path}[/]")
    return 0


def summary_table(summary_csv: Path, axes: list[str]) -> Table:
    """Means over repetitions, one row per point (the closing note of a run)."""
    import pandas as pd

    frame = pd.read_csv(summary_csv)
    keys = ["point", *[a for a in axes if a in frame.columns], "total_clients"]
    present = [
        (c, h, f) for c, h, f in TABLE_COLUMNS if c in frame.columns and frame[c].notna().any()
    ]
    grouped = frame.groupby(keys, sort=True)
    table = Table(*[k.split(".")[-1] for k in keys], "reps", *[h for _, h, _ in present])
    for key, group in grouped:
        values = key if isinstance(key, tuple) else (key,)
        cells = [str(v) for v in values] + [str(len(group))]
        for column, _, fmt in present:
            mean = group[column].mean()
            cells.append("" if pd.isna(mean) else fmt.format(mean))
        table.add_row(*cells)
    return table


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    try:
        spec = load_spec(args.spec)
    except SpecError as error:
        return _error(console, str(error))
    if args.target == "k8s" and getattr(args, "monitor", False):
        return _error(
            console,
            "--monitor is for --target local; on a cluster, kube-prometheus-stack scrapes the "
            "release (make monitoring-install, docs/observability.md)",
        )
    if args.target == "k8s":
        k8s_run = _lazy("cachelab.k8s.runner", "run", "the Kubernetes runner")
        if k8s_run is None:
            return _error(
                console,
                "the Kubernetes runner (cachelab.k8s.runner) is not installed yet; "
                "use --target local",
            )
        result = k8s_run(spec, args)
        return int(result) if isinstance(result, int) else 0

    from cachelab.local.procs import ProcessError
    from cachelab.local.runner import run as local_run
    from cachelab.local.shaping import ShapingError
    from cachelab.monitor import MonitorError

    try:
        results, status = local_run(spec, args.spec, args)
    except (ProcessError, MonitorError, ShapingError) as error:
        return _error(console, str(error))
    if results.summary_file.is_file():
        table = summary_table(results.summary_file, list(spec.sweep))
        console.print(table)
    console.print(
        f"{status.state}: {status.runs_done}/{status.runs_total} runs; "
        f"results in [bold]{results.path}[/]",
        highlight=False,
    )
    if status.message:
        console.print(status.message, highlight=False)
    code = {"complete": 0, "interrupted": 130}.get(status.state, 1)
    if args.report and results.summary_file.is_file():
        build_report = _lazy("cachelab.report", "build_report", "the report builder")
        if build_report is None:
            console.print(
                "no report: the report builder (cachelab.report) is not installed yet; "
                f"the numbers are in {results.summary_file}",
                highlight=False,
            )
        else:
            try:
                index = build_report(results.path)
            except Exception as error:  # the report's own errors name what is wrong
                _error(console, f"report failed: {type(error).__name__}: {error}")
                return code or 1
            console.print(f"report: [bold]{index}[/]", highlight=False)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # a wide console when the output is a file or a pipe (make, CI logs), so tables stay readable
    console = Console() if sys.stdout.isatty() else Console(width=160)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "schema":
        print(json.dumps(json_schema(), indent=2, sort_keys=True))
        return 0
    commands = {
        "run": cmd_run,
        "validate": cmd_validate,
        "report": cmd_report,
        "summarize": cmd_summarize,
        "compare": cmd_compare,
        "list": cmd_list,
    }
    result: int = commands[args.command](args, console)
    return result


if __name__ == "__main__":
    sys.exit(main())
