"""Options that several commands share, spelt and explained once."""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Any, TypeAlias


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that ends every option's text with its default, `(default: X)`, unless the text
    says it already (a default from the environment, or one that is not a value) or the option
    is a flag or required."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            "(default" in text
            or action.required
            or action.nargs == 0
            or not action.option_strings
            or action.default in (None, [], argparse.SUPPRESS)
        ):
            return text
        return text + " (default: %(default)s)"


class CommandParser(argparse.ArgumentParser):
    """The parser of `cachelab` and of each command: `--help` shows the defaults."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)


# The error of a local run or search given an option of --target k8s.
K8S_ONLY = (
    "--values and --loadgen are for --target k8s, as are --namespace, --release and --faults-via"
)

# The object `add_subparsers` returns, which each command's `add_parser` adds itself to.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_results(parser: argparse.ArgumentParser) -> None:
    """`--results DIR`: the base folder under which the command makes its new results folder
    (<experiment>/<timestamp>); the folder it reads or resumes is a positional RESULTS_DIR or
    `--resume RESULTS_DIR`."""
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        metavar="DIR",
        help="base folder of the new results folder, which goes in DIR/<experiment>/<timestamp> "
        "(default: <repo>/results)",
    )


def add_out(parser: argparse.ArgumentParser, default: Path | None, default_text: str) -> None:
    """`--out DIR`: the folder the command writes its files into, as it is named (made if
    missing; files of the same name replaced)."""
    parser.add_argument(
        "--out",
        type=Path,
        default=default,
        metavar="DIR",
        help=f"folder the files are written into (default: {default_text})",
    )


def env_default(variable: str, fallback: str) -> str:
    """How --help shows a default taken from the environment: the variable, its value here when
    it is set, and the built-in default."""
    value = os.environ.get(variable)
    now = f" (here: {value})" if value else ""
    return f"${variable}{now}, else {fallback}"


def add_namespace(parser: argparse.ArgumentParser, what: str) -> None:
    """`-n/--namespace NAME`: the Kubernetes namespace (default $CACHELAB_K8S_NAMESPACE, else
    default); None when not given, so that the runner's default applies."""
    parser.add_argument(
        "-n",
        "--namespace",
        default=None,
        metavar="NAME",
        help=f"{what} (default: {env_default('CACHELAB_K8S_NAMESPACE', 'default')})",
    )


def add_release(parser: argparse.ArgumentParser) -> None:
    """`--release NAME`: the testbed's Helm release (default $CACHELAB_K8S_RELEASE, else
    testbed)."""
    parser.add_argument(
        "--release",
        default=None,
        metavar="NAME",
        help="k8s: the Helm release of the testbed the runs install and measure (default: "
        f"{env_default('CACHELAB_K8S_RELEASE', 'testbed')})",
    )


def add_faults_via(parser: argparse.ArgumentParser) -> None:
    """`--faults-via auto|node|api`: how a k8s run carries out the spec's faults (default
    $CACHELAB_K8S_FAULTS, else auto)."""
    parser.add_argument(
        "--faults-via",
        choices=["auto", "node", "api"],
        default=None,
        help="k8s: how the spec's faults are carried out: node (signals and tc from this "
        "machine: the local cluster only), api (pods deleted, processes stopped from an "
        "ephemeral container: any cluster; no slow), auto (node on the local cluster, else api) "
        f"(default: {env_default('CACHELAB_K8S_FAULTS', 'auto')})",
    )


def add_json(parser: argparse._ActionsContainer, what: str) -> None:
    """`--json`: WHAT as one JSON document on stdout (its shape: docs/interfaces.md §6); errors
    and notes go to stderr."""
    parser.add_argument(
        "--json",
        action="store_true",
        help=f"print {what} as JSON on stdout (docs/interfaces.md §6); messages go to stderr",
    )


def _plain(value: Any) -> Any:
    """VALUE with paths as strings and NaN or infinite numbers as null (JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(data: Any) -> None:
    """DATA as indented JSON on stdout."""
    print(json.dumps(_plain(data), indent=2, allow_nan=False, ensure_ascii=False))


def add_target(parser: argparse.ArgumentParser) -> None:
    """`--target local|k8s`: where the runs go."""
    parser.add_argument(
        "--target",
        choices=["local", "k8s"],
        default="local",
        help="local: processes on this machine; k8s: the Jobs on the cluster of KUBECONFIG",
    )


def add_loadgen(parser: argparse.ArgumentParser, what: str) -> None:
    """`--loadgen cachelab|memtier` of --target k8s."""
    parser.add_argument(
        "--loadgen",
        choices=["cachelab", "memtier"],
        default=None,
        help=f"k8s: {what} (default: {env_default('CACHELAB_K8S_LOADGEN', 'cachelab')})",
    )


def add_values(parser: argparse.ArgumentParser, what: str) -> None:
    """`--values FILE` (repeatable) of --target k8s."""
    parser.add_argument(
        "--values",
        type=Path,
        action="append",
        metavar="FILE",
        help=f"k8s: {what}; repeatable (default: $CACHELAB_K8S_VALUES, `:`-separated, else none)",
    )
