"""The `cachelab` command line: run, validate, report, compare, list, summarize, schema, render,
collect."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cachelab import __version__
from cachelab.k8s import collect_results as k8s_collect
from cachelab.k8s import render as k8s_render
from cachelab.options import RunOptions
from cachelab.spec import Spec, SpecError, json_schema, load_spec
from cachelab.terminal import make_console

EXPERIMENTS_DIR = Path(__file__).resolve().parents[1] / "experiments"

RUN_OVERHEAD_TEXT = "JVM start/stop"
# FIELD=VALUE terms (whitespace-separated) applied to every `cachelab run`'s spec after its --set
# terms: a script shortens any command's runs, e.g. CACHELAB_SET="run.duration_s=4".
SET_ENV = "CACHELAB_SET"


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
        "--values",
        type=Path,
        action="append",
        metavar="FILE",
        help="k8s: a values file for the release after the point's own (your cluster's images, "
        "pools, sizes; repeatable; default $CACHELAB_K8S_VALUES, `:`-separated)",
    )
    run.add_argument(
        "--loadgen",
        choices=["cachelab", "memtier"],
        default=None,
        help="k8s: the Jobs' loadgen image, the project's (built by make images) or "
        "memtier_benchmark (default $CACHELAB_K8S_LOADGEN or cachelab)",
    )
    run.add_argument(
        "--monitor",
        action="store_true",
        help="local target: scrape the run with a Prometheus, data in <results>/prometheus",
    )
    run.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="RESULTS_DIR",
        help="finish an earlier run of this spec in its results folder: only runs that are "
        "missing, partial or failed run (again)",
    )
    run.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="FIELD=VALUE",
        help="change one field of the spec for this run (run.duration_s=10, "
        "sweep.topology.workers=[8,32]); repeatable; $CACHELAB_SET's terms apply after these",
    )
    run.add_argument(
        "--only",
        action="append",
        metavar="TERM",
        help="run only some points: indices (3, 0-2, 1,4) or swept values (workers=8, "
        "topology.workers=8,16: every number after FIELD= is a value of that field); repeat "
        "--only to require several terms",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="list the points --only chooses (and the runs and time they take) and run nothing",
    )

    add_search_parser(sub)

    fidelity = sub.add_parser(
        "fidelity", help="print ours / the seed's saturation, knee and low-load response time"
    )
    fidelity.add_argument("results_dirs", type=Path, nargs="+", metavar="RESULTS_DIR")
    fidelity.add_argument("--markdown", action="store_true", help="a Markdown table")

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
    k8s_render.add_parser(sub)
    k8s_collect.add_parser(sub)
    return parser


def _error(console: Console, message: str) -> int:
    console.print(f"[red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return 2


def spec_hint(path: Path) -> str:
    """For a spec file that does not exist: the shipped spec of that name, or where they are."""
    if path.exists():
        return ""
    shipped = EXPERIMENTS_DIR / f"{path.stem}.yaml"
    try:
        shown = shipped.relative_to(Path.cwd())
    except ValueError:
        shown = shipped
    if shipped.is_file():
        return f"\n  did you mean {shown}?"
    return f"\n  `cachelab list` shows the specs in {EXPERIMENTS_DIR}"


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    failed = 0
    for path in args.specs:
        try:
            spec = load_spec(path)
        except SpecError as error:
            message = escape(f"{error}{spec_hint(path)}")
            console.print(f"[red]✗[/] {message}", highlight=False, soft_wrap=True)
            failed += 1
            continue
        points = spec.points()
        runs = f"{len(points) * spec.run.repetitions}"
        repetitions = f"{spec.run.repetitions}"
        if spec.run.until_certain is not None:
            until = spec.run.until_certain
            runs += f"-{len(points) * until.max}"
            repetitions += f"-{until.max} (until ±{until.ci_pct:g} %)"
        console.print(
            f"[green]✓[/] {path}: {spec.name}, {len(points)} points x "
            f"{repetitions} repetitions = {runs} runs of {spec.run.duration_s} s",
            highlight=False,
            soft_wrap=True,
        )
    return 1 if failed else 0


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    from cachelab.experiment import estimate_wall_s
    from cachelab.terminal import format_seconds

    if not args.dir.is_dir():
        return _error(console, f"--dir {args.dir}: no such folder")
    if not any(args.dir.glob("*.yaml")):
        return _error(console, f"--dir {args.dir}: no *.yaml spec in it")

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("spec", no_wrap=True)
    for name in ("points", "runs", "wall"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("seeds", no_wrap=True)
    total_s = 0.0
    for path in sorted(args.dir.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError as error:
            table.add_row(path.stem, "-", "-", "-", escape(f"invalid: {error.problems[0]}"))
            continue
        points = len(spec.points())
        wall_s = estimate_wall_s(spec)
        total_s += wall_s
        table.add_row(
            path.stem,
            str(points),
            str(points * spec.run.repetitions),
            "~" + format_seconds(wall_s),
            "\n".join(spec.seeds),
        )
    console.print(table)
    console.print(
        f"wall: estimated local time (runs x (duration + {RUN_OVERHEAD_TEXT}) + preloads);\n"
        f"all specs ~{format_seconds(total_s)}",
        highlight=False,
    )
    return 0


def _not_results(folder: Path) -> str | None:
    """Why ``folder`` is no results folder with a summary, or None if it is one."""
    if not folder.exists():
        return f"{folder}: no such folder"
    if not folder.is_dir():
        return f"{folder}: not a folder"
    if not (folder / "summary.csv").is_file():
        return f"{folder}: no summary.csv (is it a results folder?)"
    return None


def incomplete_note(folder: Path, shown_by: str = "the report shows") -> str | None:
    """A line saying that ``folder``'s experiment did not finish every run (its status.json), or
    that nothing says whether it did; None for a complete one. A report (or, with ``shown_by``
    "the summary has", a summary) of such a folder shows what was measured and must not pass for
    the whole experiment."""
    from cachelab.results import ResultsDir, ResultsError
    from cachelab.results.experiment import read_status

    try:
        status = read_status(ResultsDir(folder))
    except ResultsError as error:
        return f"{error}: whether every run finished is unknown"
    state = status.get("state")
    if state == "complete":
        return None
    if not status:
        return f"{folder}: no status.json, so whether every run finished is unknown"
    runs = f" ({status.get('runs_done', '?')}/{status.get('runs_total', '?')} runs)"
    return f"{folder}: the experiment is {state}{runs}; {shown_by} only the runs that ended"


def _note(console: Console, message: str) -> None:
    console.print(f"[yellow]note:[/] {escape(message)}", highlight=False, soft_wrap=True)


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    from cachelab.report import build_report
    from cachelab.report.search_report import is_search

    searched = Path(args.results_dir).is_dir() and is_search(Path(args.results_dir))
    problem = None if searched else _not_results(args.results_dir)
    if problem:
        return _error(console, problem)

    try:
        index = build_report(args.results_dir)
    except Exception as error:  # the report's own errors name what is wrong
        return _error(console, f"report failed: {type(error).__name__}: {error}")
    from cachelab.results.metadata import record_command

    record_command(Path(args.results_dir) / "metadata.json")
    console.print(f"report: [bold]{index}[/]", highlight=False)
    note = None if searched else incomplete_note(args.results_dir)
    if note:
        _note(console, note)
    return 0


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from cachelab.report import ReportError
    from cachelab.report.compare import build_comparison

    for folder in args.results_dirs:
        problem = _not_results(folder)
        if problem:
            return _error(console, problem)
    made = _first_missing(args.out)
    problem = _cannot_write(args.out)
    if problem:
        _remove_made(args.out, made)
        return _error(console, f"--out {args.out}: {problem}")
    try:
        index = build_comparison(args.results_dirs, args.out, args.label, args.x)
    except ReportError as error:
        _remove_made(args.out, made)
        return _error(console, str(error))
    console.print(f"comparison: [bold]{index}[/]", highlight=False)
    for folder in args.results_dirs:
        note = incomplete_note(folder)
        if note:
            _note(console, note)
    return 0


def cmd_summarize(args: argparse.Namespace, console: Console) -> int:
    from cachelab.results import ResultsError
    from cachelab.summary import build_summary

    if not (args.results_dir / "spec.yaml").is_file():
        return _error(console, f"{args.results_dir}: no spec.yaml (is it a results folder?)")
    try:
        path = build_summary(args.results_dir)
    except ResultsError as error:
        return _error(console, str(error))
    console.print(f"summary: [bold]{escape(str(path))}[/]")
    note = incomplete_note(args.results_dir, shown_by="the summary has")
    if note:
        _note(console, note)
    return 0


def _cannot_write(folder: Path) -> str | None:
    """Why no results folder can be made in ``folder`` (created if missing), or None."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        return f"cannot write there ({error.strerror or error})"
    return None


def _first_missing(folder: Path) -> Path | None:
    """The outermost folder of ``folder``'s path that does not exist yet (None: it exists)."""
    missing = None
    for path in (folder, *folder.absolute().parents):
        if path.exists():
            break
        missing = path
    return missing


def _remove_made(folder: Path, made: Path | None) -> None:
    """Remove the empty folders from ``folder`` up to ``made``: what the write check created
    for a command that then failed."""
    if made is None:
        return
    for path in (folder.absolute(), *folder.absolute().parents):
        if not path.is_dir() or any(path.iterdir()):
            return
        path.rmdir()
        if path == made.absolute():
            return


def _dry_run(spec: Spec, selection: Any, console: Console) -> int:
    """`--dry-run`: the chosen points, one line each, and what running them would take."""
    from cachelab.experiment import estimate_wall_s
    from cachelab.terminal import format_seconds, point_text

    chosen = selection.choose(spec.points())
    total = len(spec.points())
    runs = len(chosen) * spec.run.repetitions
    share = estimate_wall_s(spec) * len(chosen) / total
    console.print(
        f"dry run: {len(chosen)} of {total} points, {runs} runs of {spec.run.duration_s} s "
        f"(about {format_seconds(share)}); nothing was run",
        highlight=False,
    )
    for point in chosen:
        console.print(f"  {point_text(point, 0).replace(' r0', '', 1)}", highlight=False)
    return 0


def add_search_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    search = sub.add_parser(
        "search", help="find the highest load of a spec that meets a latency SLO"
    )
    search.add_argument("spec", type=Path, help="experiment spec (YAML); open loop searches rate")
    search.add_argument(
        "--slo", required=True, help="p50, p90, p99, p99.9 or mean <= LIMIT ms|us, e.g. p99<=2ms"
    )
    search.add_argument(
        "--tolerance",
        type=float,
        default=5.0,
        metavar="PCT",
        help="stop when the bracket is this narrow, in percent of its lower end (default 5)",
    )
    search.add_argument(
        "--attempts", type=int, default=3, help="runs per step before an untrusted one is a miss"
    )
    search.add_argument(
        "--max-load",
        type=float,
        default=None,
        help="highest load tried (requests/s, or clients per thread for a closed-loop spec)",
    )
    search.add_argument(
        "--no-probe",
        dest="probe",
        action="store_false",
        help="open loop: start at the spec's rate, not from a closed-loop capacity probe",
    )
    search.add_argument("--point", type=int, default=None, help="the point of a swept spec")
    search.add_argument("--target", choices=["local", "k8s"], default="local")
    search.add_argument(
        "--values",
        type=Path,
        action="append",
        metavar="FILE",
        help="k8s: the values files of your cluster for the release (repeatable; default "
        "$CACHELAB_K8S_VALUES, `:`-separated)",
    )
    search.add_argument(
        "--loadgen",
        choices=["cachelab", "memtier"],
        default=None,
        help="k8s: the Jobs' loadgen image (default $CACHELAB_K8S_LOADGEN or cachelab)",
    )
    search.add_argument(
        "--results", type=Path, default=None, help="results base folder (default: <repo>/results)"
    )
    search.add_argument(
        "--resume", type=Path, default=None, metavar="RESULTS_DIR", help="go on with a search"
    )


def cmd_search(args: argparse.Namespace, console: Console) -> int:
    from cachelab.k8s.kube import K8sError
    from cachelab.k8s.plan import PlanError
    from cachelab.processes import ProcessError
    from cachelab.search import (
        SearchError,
        choose_point,
        k8s_problem,
        run_k8s,
        run_local,
        settings_for,
    )
    from cachelab.slo import SloError

    try:
        spec = choose_point(load_spec(args.spec), args.point)
        settings = settings_for(
            spec, args.slo, args.tolerance, args.attempts, args.max_load, args.probe
        )
    except SpecError as error:
        return _error(console, f"{error}{spec_hint(args.spec)}")
    except (SloError, SearchError) as error:
        return _error(console, str(error))
    if args.target == "local" and (args.values or args.loadgen):
        return _error(console, "--values and --loadgen are for --target k8s")
    options = RunOptions.from_args(args)
    if args.target == "k8s" and (problem := k8s_problem(spec, settings, options)) is not None:
        return _error(console, problem)
    try:
        if args.target == "k8s":
            folder, _ = run_k8s(args.spec, settings, args.point, options, console)
        else:
            folder, _ = run_local(
                args.spec, settings, args.point, args.results, args.resume, console
            )
    except (SearchError, ProcessError, PlanError, K8sError) as error:
        return _error(console, str(error))
    except KeyboardInterrupt:
        _error(console, "interrupted; every step measured is in search.csv (go on with --resume)")
        return 130
    console.print((folder / "answer.txt").read_text().strip(), highlight=False)
    console.print(f"search: {folder}/search.csv, {folder}/search.png", highlight=False)
    return 0


def cmd_fidelity(args: argparse.Namespace, console: Console) -> int:
    from cachelab.fidelity import (
        HEADER,
        FidelityError,
        fidelity_rows,
        markdown_with_provenance,
        table_rows,
    )
    from cachelab.results import ResultsError

    rows = []
    for folder in args.results_dirs:
        try:
            rows += fidelity_rows(folder)
        except (FidelityError, ResultsError) as error:
            return _error(console, str(error))
    if args.markdown:
        print(markdown_with_provenance(args.results_dirs), end="")
        return 0
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name in HEADER:
        table.add_column(name)
    for cells in table_rows(rows):
        table.add_row(*(escape(c) for c in cells))
    console.print(table)
    return 0


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    from cachelab.experiment import ResumeError, Selection, SelectionError
    from cachelab.k8s.kube import K8sError
    from cachelab.k8s.plan import PlanError
    from cachelab.local.shaping import ShapingError
    from cachelab.monitor import MonitorError
    from cachelab.paths import RepoRootError
    from cachelab.processes import ProcessError
    from cachelab.terminal import summary_table

    overrides = [*(getattr(args, "set", None) or []), *os.environ.get(SET_ENV, "").split()]
    try:
        spec = load_spec(args.spec, overrides)
        selection = Selection(tuple(args.only or ()))
        selection.choose(spec.points())  # a bad --only fails before anything starts
    except SpecError as error:
        return _error(console, f"{error}{spec_hint(args.spec)}")
    except SelectionError as error:
        return _error(console, str(error))
    if overrides:
        console.print(f"spec with {' '.join(overrides)}", highlight=False, soft_wrap=True)
    if args.target == "local":
        from cachelab.capacity import check

        problem = check(spec)
        if problem:
            return _error(console, f"{args.spec}: {problem}")
    if getattr(args, "dry_run", False):
        return _dry_run(spec, selection, console)
    if args.target == "k8s" and getattr(args, "monitor", False):
        return _error(
            console,
            "--monitor is for --target local; on a cluster, kube-prometheus-stack scrapes the "
            "release (make monitoring-install, docs/observability.md)",
        )
    if args.target == "local" and (args.values or args.loadgen):
        return _error(console, "--values and --loadgen are for --target k8s")
    made = _first_missing(args.results) if args.results is not None else None
    if args.results is not None and args.resume is None:
        problem = _cannot_write(args.results)
        if problem:
            _remove_made(args.results, made)
            return _error(console, f"--results {args.results}: {problem}")
    options = RunOptions.from_args(args)
    try:
        if args.target == "k8s":
            from cachelab.k8s.runner import run as k8s_run

            results, status = k8s_run(spec, options, console, selection, args.resume)
        else:
            from cachelab.local.runner import run as local_run

            results, status = local_run(spec, args.spec, options, console, selection, args.resume)
    except (
        ProcessError,
        MonitorError,
        ShapingError,
        PlanError,
        K8sError,
        SpecError,
        ResumeError,
        RepoRootError,
    ) as error:
        _remove_made(args.results, made)
        return _error(console, str(error))
    if results.summary_file.is_file():
        console.print(summary_table(results.summary_file, list(spec.sweep)))
    console.print(
        f"{status.state}: {status.runs_done}/{status.runs_total} runs; results in {results.path}",
        highlight=False,
    )
    if status.message:
        console.print(escape(status.message), highlight=False)
    code = {"complete": 0, "interrupted": 130}.get(status.state, 1)
    stale = args.resume is not None and (results.path / "report" / "index.html").is_file()
    if stale and not args.report:
        console.print("report: the folder's report predates the resumed runs; rebuilding it")
    if (args.report or stale) and results.summary_file.is_file():
        from cachelab.report import build_report

        try:
            index = build_report(results.path)
        except Exception as error:  # the report's own errors name what is wrong
            _error(console, f"report failed: {type(error).__name__}: {error}")
            return code or 1
        except KeyboardInterrupt:  # the runs are kept: only the report is missing
            _error(console, f"report interrupted; `cachelab report {results.path}` builds it")
            return 130
        console.print(f"report: {index}", highlight=False)
    return code


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    from cachelab.paths import repo_root

    try:
        spec = load_spec(args.spec)
        out = args.out or k8s_render.default_out(spec, args.point)
        files = k8s_render.overlay_files(spec, args, out, repo_root())
        k8s_render.write_overlay(files, out)
    except SpecError as error:
        return _error(console, f"{error}{spec_hint(args.spec)}")
    except k8s_render.RenderError as error:
        return _error(console, str(error))
    except OSError as error:
        return _error(console, f"--out {out}: cannot write ({error.strerror or error})")
    console.print(f"overlay: [bold]{escape(str(out))}[/] ({', '.join(files)})", highlight=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = make_console()
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
        "render": cmd_render,
        "collect": k8s_collect.cmd_collect,
        "search": cmd_search,
        "fidelity": cmd_fidelity,
    }
    try:
        result: int = commands[args.command](args, console)
    except KeyboardInterrupt:  # Ctrl-C in a report or a comparison: a line, not a traceback
        _error(console, "interrupted")
        return 130
    return result


if __name__ == "__main__":
    sys.exit(main())
