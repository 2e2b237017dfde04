"""`cachelab search SPEC --slo ...`: the highest load of a spec that meets a latency SLO."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from cachelab.cli.arguments import (
    K8S_ONLY,
    Subparsers,
    add_faults_via,
    add_json,
    add_loadgen,
    add_namespace,
    add_release,
    add_results,
    add_target,
    add_values,
    print_json,
)
from cachelab.cli.common import error, spec_hint
from cachelab.options import RunOptions
from cachelab.search import MAX_CLIENTS_PER_THREAD
from cachelab.spec import LOADGEN_MAX_RATE_PER_THREAD, SpecError, load_spec

if TYPE_CHECKING:
    from cachelab.search import Answer, SearchSettings


def add_parser(sub: Subparsers) -> None:
    search = sub.add_parser(
        "search", help="find the highest load of a spec that meets a latency SLO"
    )
    search.set_defaults(handler=cmd_search)
    search.add_argument("spec", type=Path, help="experiment spec (YAML); open loop searches rate")
    search.add_argument(
        "--slo", required=True, help="p50, p90, p99, p99.9 or mean <= LIMIT ms|us, e.g. p99<=2ms"
    )
    search.add_argument(
        "--tolerance",
        type=float,
        default=5.0,
        metavar="PCT",
        help="stop when the bracket is this narrow, in percent of its lower end",
    )
    search.add_argument(
        "--attempts", type=int, default=3, help="runs per step before an untrusted one is a miss"
    )
    search.add_argument(
        "--max-load",
        type=float,
        default=None,
        help="highest load tried, requests/s or, for a closed-loop spec, clients per thread "
        f"(default: {LOADGEN_MAX_RATE_PER_THREAD:,.0f} requests/s per loadgen thread, or "
        f"{MAX_CLIENTS_PER_THREAD} clients per thread)",
    )
    search.add_argument(
        "--no-probe",
        dest="probe",
        action="store_false",
        help="open loop: start at the spec's rate, not from a closed-loop capacity probe",
    )
    search.add_argument(
        "--point",
        type=int,
        default=None,
        help="the point of a swept spec (default: the spec, which then must sweep nothing)",
    )
    add_target(search)
    add_values(search, "a values file of your cluster for the release")
    add_loadgen(search, "the Jobs' loadgen image")
    add_namespace(search, "k8s: where the release and the Jobs run")
    add_release(search)
    add_faults_via(search)
    add_results(search)
    add_json(search, "the answer, the search's settings and its files")
    search.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="RESULTS_DIR",
        help="go on with the search in RESULTS_DIR (default: a new search)",
    )


def _search_json(
    folder: Path, settings: SearchSettings, answer: Answer, text: str
) -> dict[str, Any]:
    """A finished search (the `--json` shape of docs/interfaces.md §6)."""
    return {
        "results_dir": folder,
        "settings": asdict(settings),
        "unit": "requests/s" if settings.open_loop else "clients per thread",
        "answer": asdict(answer),
        "text": text,
        "files": {name: folder / name for name in ("search.csv", "search.png", "answer.txt")},
    }


def _search(
    args: argparse.Namespace, settings: SearchSettings, options: RunOptions, console: Console
) -> tuple[Path, Answer, str]:
    """The search on its target: the folder, the answer and its text; the figure is drawn
    whatever happens once the steps have started."""
    from cachelab.experiment import shielded
    from cachelab.report.search_plots import write_search_figure
    from cachelab.search.run import SearchRun, open_search
    from cachelab.target import Target
    from cachelab.terminal import RunLines

    target: Target
    if args.target == "k8s":
        from cachelab.k8s.target import K8sTarget

        target = K8sTarget(options, console)
    else:
        from cachelab.local.target import LocalTarget

        target = LocalTarget(options, console, search=True)
    spec, results = open_search(target, args.spec, settings, args.point, args.resume)
    reporter = RunLines(console, spec.run.duration_s)
    try:
        executor = target.executor(spec, results, reporter.live)
        search = SearchRun(spec, settings, results, executor, reporter, console)
        try:
            answer = search.run()
        finally:
            with shielded():
                slo, best = search.slo, search.best_load()
                write_search_figure(results.path, search.steps, slo, best, search.label)
    finally:
        with shielded():
            target.close(results)
    return results.path, answer, search.write_answer(answer).strip()


def cmd_search(args: argparse.Namespace, console: Console) -> int:
    from cachelab.k8s.kube import K8sError
    from cachelab.k8s.plan import PlanError
    from cachelab.processes import ProcessError
    from cachelab.search import SearchError, choose_point, k8s_problem, settings_for
    from cachelab.slo import SloError

    try:
        spec = choose_point(load_spec(args.spec), args.point)
        settings = settings_for(
            spec, args.slo, args.tolerance, args.attempts, args.max_load, args.probe
        )
    except SpecError as problem:
        return error(console, f"{problem}{spec_hint(args.spec)}")
    except (SloError, SearchError) as problem:
        return error(console, str(problem))
    if args.target == "local" and (
        args.values or args.loadgen or args.namespace or args.release or args.faults_via
    ):
        return error(console, K8S_ONLY)
    options = RunOptions.from_args(args)
    if args.target == "k8s" and (unfit := k8s_problem(spec, settings, options)) is not None:
        return error(console, unfit)
    try:
        folder, answer, text = _search(args, settings, options, console)
    except (SearchError, ProcessError, PlanError, K8sError) as failure:
        return error(console, str(failure))
    except KeyboardInterrupt:
        error(console, "interrupted; every step measured is in search.csv (go on with --resume)")
        return 130
    if args.json:
        print_json(_search_json(folder, settings, answer, text))
        return 0
    console.print(text, highlight=False)
    console.print(f"search: {folder}/search.csv, {folder}/search.png", highlight=False)
    return 0
