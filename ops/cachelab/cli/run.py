"""`cachelab run SPEC`: run an experiment spec and write a results folder."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from cachelab.cli.arguments import (
    K8S_ONLY,
    Subparsers,
    add_faults_via,
    add_loadgen,
    add_namespace,
    add_release,
    add_results,
    add_target,
    add_values,
    env_default,
)
from cachelab.cli.common import (
    cannot_write,
    error,
    first_missing,
    remove_made,
    spec_hint,
)
from cachelab.options import RunOptions
from cachelab.results import ResultsDir
from cachelab.spec import Spec, SpecError, load_spec
from cachelab.target import Target

# FIELD=VALUE terms (whitespace-separated) applied to every `cachelab run`'s spec after its --set
# terms: a script shortens any command's runs, e.g. CACHELAB_SET="run.duration_s=4".
SET_ENV = "CACHELAB_SET"


def add_parser(sub: Subparsers) -> None:
    run = sub.add_parser("run", help="run an experiment spec and write a results folder")
    run.set_defaults(handler=cmd_run)
    run.add_argument("spec", type=Path, help="experiment spec (YAML)")
    add_target(run)
    add_results(run)
    run.add_argument("--report", action="store_true", help="build the report when the run is done")
    run.add_argument(
        "--bandwidth",
        choices=["off", "asl2017", "asl2019", "azure-v2"],
        default=None,
        help="bandwidth profile; local: tc on lo while each run measures, needs root (asl2019 "
        "also adds its 0.9 ms RTT with netem); k8s: pod annotations (default: off locally; on "
        f"k8s {env_default('CACHELAB_K8S_BANDWIDTH', 'asl2017')})",
    )
    add_values(
        run,
        "a values file for the release after the point's own (your cluster's images, pools, sizes)",
    )
    add_loadgen(run, "the Jobs' loadgen image, the project's (built by make images) or memtier")
    add_namespace(run, "k8s: where the release and the Jobs run")
    add_release(run)
    add_faults_via(run)
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
        "missing, partial or failed run (again) (default: a new results folder)",
    )
    run.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="FIELD=VALUE",
        help="change one field of the spec for this run (run.duration_s=10, "
        "sweep.topology.workers=[8,32]); repeatable; $CACHELAB_SET's terms apply after these "
        "(default: none)",
    )
    run.add_argument(
        "--only",
        action="append",
        metavar="TERM",
        help="run only some points: indices (3, 0-2, 1,4) or swept values (workers=8, "
        "topology.workers=8,16: every number after FIELD= is a value of that field); repeat "
        "--only to require several terms (default: every point)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="list the points --only chooses (and the runs and time they take) and run nothing",
    )


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


def _target(options: RunOptions, console: Console) -> Target:
    if options.target == "k8s":
        from cachelab.k8s.target import K8sTarget

        return K8sTarget(options, console)
    from cachelab.local.target import LocalTarget

    return LocalTarget(options, console)


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    return execute(args, console)[0]


def execute(args: argparse.Namespace, console: Console) -> tuple[int, ResultsDir | None]:
    """Runs `args.spec`: the exit code and the results folder (None when nothing ran)."""
    from cachelab.experiment import ResumeError, Selection, SelectionError
    from cachelab.k8s.kube import K8sError
    from cachelab.k8s.plan import PlanError
    from cachelab.local.shaping import ShapingError
    from cachelab.monitor import MonitorError
    from cachelab.paths import RepoRootError
    from cachelab.processes import ProcessError
    from cachelab.target import run_experiment
    from cachelab.terminal import summary_table

    overrides = [*(getattr(args, "set", None) or []), *os.environ.get(SET_ENV, "").split()]
    try:
        spec = load_spec(args.spec, overrides)
        selection = Selection(tuple(args.only or ()))
        selection.choose(spec.points())  # a bad --only fails before anything starts
    except SpecError as problem:
        return error(console, f"{problem}{spec_hint(args.spec)}"), None
    except SelectionError as problem:
        return error(console, str(problem)), None
    if overrides:
        console.print(f"spec with {' '.join(overrides)}", highlight=False, soft_wrap=True)
    if args.target == "local":
        from cachelab.capacity import check

        capacity = check(spec)
        if capacity:
            return error(console, f"{args.spec}: {capacity}"), None
    if getattr(args, "dry_run", False):
        return _dry_run(spec, selection, console), None
    if args.target == "k8s" and getattr(args, "monitor", False):
        return error(
            console,
            "--monitor is for --target local; on a cluster, kube-prometheus-stack scrapes the "
            "release (make monitoring-install, docs/observability.md)",
        ), None
    if args.target == "local" and (
        args.values or args.loadgen or args.namespace or args.release or args.faults_via
    ):
        return error(console, K8S_ONLY), None
    made = first_missing(args.results) if args.results is not None else None
    if args.results is not None and args.resume is None:
        unwritable = cannot_write(args.results)
        if unwritable:
            remove_made(args.results, made)
            return error(console, f"--results {args.results}: {unwritable}"), None
    options = RunOptions.from_args(args)
    try:
        results, status = run_experiment(_target(options, console), spec, selection, args.resume)
    except (
        ProcessError,
        MonitorError,
        ShapingError,
        PlanError,
        K8sError,
        SpecError,
        ResumeError,
        RepoRootError,
    ) as problem:
        remove_made(args.results, made)
        return error(console, str(problem)), None
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
        except Exception as problem:  # the report's own errors name what is wrong
            error(console, f"report failed: {type(problem).__name__}: {problem}")
            return code or 1, results
        except KeyboardInterrupt:  # the runs are kept: only the report is missing
            error(console, f"report interrupted; `cachelab report {results.path}` builds it")
            return 130, results
        console.print(f"report: {index}", highlight=False)
    return code, results
