"""`cachelab collect`: the output of an overlay's Jobs as a results folder (what it reads is
cachelab.k8s.collect_results'), and its report."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from cachelab.cli.arguments import Subparsers, add_namespace, add_results
from cachelab.cli.common import error


def add_parser(sub: Subparsers) -> None:
    collect = sub.add_parser(
        "collect",
        help="write the results of an overlay's Jobs (kubectl apply -k) as a results folder",
        description="Read the ConfigMap cachelab-point, the Jobs preload and benchmark and their "
        "pods' logs in a namespace, and write a results folder as `cachelab run --target k8s` "
        "does (docs/kubernetes.md).",
    )
    collect.set_defaults(handler=cmd_collect)
    add_namespace(collect, "where the Jobs ran")
    add_results(collect)
    collect.add_argument("--report", action="store_true", help="build the report afterwards")


def cmd_collect(args: argparse.Namespace, console: Console) -> int:
    from cachelab.k8s.collect_results import CollectTarget
    from cachelab.k8s.kube import K8sError
    from cachelab.target import run_experiment

    target = CollectTarget(args.namespace, args.results, console)
    try:
        results, status = run_experiment(target, target.point_spec())
    except K8sError as problem:
        return error(console, str(problem))
    if status.state != "complete":
        return error(console, f"{status.message} (results in {results.path})")
    folder = results.path
    console.print(f"results: [bold]{escape(str(folder))}[/]", highlight=False)
    if args.report:
        from cachelab.report import build_report

        try:
            index = build_report(folder)
        except Exception as failure:  # the report's own errors name what is wrong
            error(console, f"report failed: {type(failure).__name__}: {failure}")
            return 1
        console.print(f"report: {index}", highlight=False)
    return 0
