"""`cachelab reproduce SEED`: run a seed experiment as the seed ran it, then its fidelity table.

The spec is the one in ops/experiments that names the seed (`seeds:`); a spec that sets no
`network` gets its report's network profile (ASL 2017's links for `asl17-*`, ASL 2019's for
`asl19-*`) where the profile states every link of its topology, since the seeds explain their
results by those RTTs (ASL 2019 states the client-to-server link of a baseline; ASL 2017 not).
`--quick` runs only the points that have published numbers to compare with (each swept field
narrowed to the values the seed's curves fix), once, for 20 s each. The links' capacities
come from the same report (`--bandwidth`: each role's egress as the seed's iperf measured it),
since several seeds name a link as their bottleneck; locally that needs root (tc), and without
it the run goes unshaped, with a note saying so.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from cachelab.cli.arguments import CommandParser, Subparsers, add_results, add_target
from cachelab.cli.common import EXPERIMENTS_DIR, error, note
from cachelab.spec import Spec, SpecError, load_spec

# The network profile of each report's seeds (cachelab.network.PROFILES); ASL 2016 and the
# Memcached-vs-Redis thesis state no RTT between their machines.
PROFILE_OF_REPORT = {"asl17": "asl2017", "asl19": "asl2019"}
# The bandwidth profile of each report (cachelab.local.shaping.ROLE_MBIT: the seeds' iperf).
BANDWIDTH_OF_REPORT = {"asl17": "asl2017", "asl19": "asl2019"}
QUICK_SETTINGS = ("run.repetitions=1", "run.duration_s=20", "run.warmup_s=2", "run.cooldown_s=2")


class ReproduceError(ValueError):
    """A seed that cannot be reproduced here, in one line."""


@dataclass(frozen=True)
class Plan:
    """What `reproduce` runs: the spec file and the `--set` terms on it, with why each was set."""

    spec_path: Path
    overrides: tuple[str, ...]
    notes: tuple[str, ...]
    bandwidth: str | None = None


def add_parser(sub: Subparsers) -> None:
    reproduce = sub.add_parser(
        "reproduce",
        help="run a seed experiment at its own configuration, then print its fidelity table",
    )
    reproduce.set_defaults(handler=cmd_reproduce)
    reproduce.add_argument("seed", metavar="SEED", help="a seed experiment id (cachelab list)")
    add_target(reproduce)
    add_results(reproduce)
    reproduce.add_argument(
        "--quick",
        action="store_true",
        help="only the points with published numbers, one repetition of 20 s each "
        "(default: the spec's whole sweep, repetitions and durations)",
    )
    reproduce.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="FIELD=VALUE",
        help="change one field of the spec, after reproduce's own terms; repeatable "
        "(default: none)",
    )
    reproduce.add_argument(
        "--dry-run",
        action="store_true",
        help="print the spec and the terms it would run with, and the points, and run nothing",
    )


def specs_naming(seed: str, folder: Path = EXPERIMENTS_DIR) -> list[tuple[Path, Spec]]:
    """The spec files of `folder` whose `seeds:` names `seed`, each read once (invalid specs
    are skipped)."""
    found = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError:
            continue
        if seed in spec.seeds:
            found.append((path, spec))
    return found


def plan(
    seed: str,
    quick: bool,
    extra: tuple[str, ...] = (),
    folder: Path = EXPERIMENTS_DIR,
    can_shape: bool = True,
) -> Plan:
    """The spec and the terms that run `seed` as the seed ran it (`can_shape`: whether the
    target can shape bandwidth; locally only root can); ReproduceError when it cannot."""
    from cachelab.seeds import curves_for, effects_for, known_seed

    unknown = known_seed(seed)
    if unknown:
        raise ReproduceError(unknown)
    curves = curves_for(seed)
    if not curves and not effects_for(seed):
        raise ReproduceError(
            f"{seed}: the seed published no numbers this testbed holds "
            "(cachelab/seeds/curves.yaml, effects.yaml), so there is nothing to compare a run with"
        )
    named = specs_naming(seed, folder)
    if not named:
        raise ReproduceError(f"{seed}: no spec in {folder} names it (seeds:)")
    # The seed's own spec first (named after its report, e.g. asl17-*), the fewest seeds first.
    report = seed.split("-")[0]
    named.sort(key=lambda ps: (not ps[0].stem.startswith(report), len(ps[1].seeds), ps[0].name))
    spec_path, spec = named[0]
    overrides: list[str] = []
    notes: list[str] = []
    if len(named) > 1:
        notes.append(f"{len(named)} specs name {seed}; running {spec_path.name}")
    profile = PROFILE_OF_REPORT.get(report)
    if profile and not spec.links() and _covers(profile, spec.topology.middlewares):
        overrides.append(f"network.profile={profile}")
        notes.append(f"network.profile={profile}: the links' RTTs its report measured")
    bandwidth = BANDWIDTH_OF_REPORT.get(report)
    if bandwidth and not can_shape:
        notes.append(
            f"bandwidth {bandwidth} not applied: shaping the local links needs root (tc); "
            "the links run at loopback speed"
        )
        bandwidth = None
    elif bandwidth:
        notes.append(f"bandwidth {bandwidth}: each role's egress as its report measured it")
    if quick:
        overrides += QUICK_SETTINGS
        overrides += _narrowed_sweep(spec, curves, notes)
    return Plan(spec_path, (*overrides, *extra), tuple(notes), bandwidth)


def _covers(profile: str, middlewares: int) -> bool:
    """Whether `profile` states an RTT for every link of a topology with `middlewares`."""
    from cachelab.network import PROFILES, links_of

    return all(link in PROFILES[profile] for link in links_of(middlewares))


def _narrowed_sweep(spec: Spec, curves: list[Any], notes: list[str]) -> list[str]:
    """`sweep.FIELD=[...]` terms keeping only the swept values some curve of the seed fixes; a
    field one of its curves leaves open (drawn over it, or not fixed) keeps all its values."""
    from cachelab.seeds import same_value

    terms = []
    for field, values in spec.sweep.items():
        wanted = [c.config.get(field) for c in curves]
        if not wanted or None in wanted:
            continue
        kept = [v for v in values if any(same_value(field, v, w) for w in wanted)]
        if not kept:
            raise ReproduceError(
                f"{spec.name}: its sweep of {field} ({values}) has none of the values the seed's "
                f"curves were measured at ({sorted({str(w) for w in wanted})})"
            )
        if len(kept) < len(values):
            rendered = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in kept)
            terms.append(f"sweep.{field}=[{rendered}]")
            notes.append(f"{field}: only {rendered} (the values with published numbers)")
    return terms


def _run_parser() -> argparse.ArgumentParser:
    """`cachelab run`'s own parser, for the arguments reproduce hands it."""
    from cachelab.cli import run

    parser = CommandParser(prog="cachelab")
    run.add_parser(parser.add_subparsers(dest="command", parser_class=CommandParser))
    return parser


def cmd_reproduce(args: argparse.Namespace, console: Console) -> int:
    from cachelab.cli import fidelity, run

    can_shape = args.target == "k8s" or os.geteuid() == 0
    try:
        chosen = plan(args.seed, args.quick, tuple(args.set or ()), can_shape=can_shape)
    except (ReproduceError, SpecError) as problem:
        return error(console, str(problem))
    shaping = [f"--bandwidth={chosen.bandwidth}"] if chosen.bandwidth else []
    console.print(
        f"reproduce {args.seed}: {chosen.spec_path} "
        + " ".join([*shaping, *(f"--set {term}" for term in chosen.overrides)]),
        highlight=False,
        soft_wrap=True,
    )
    for line in chosen.notes:
        note(console, line)
    cli_args = ["run", str(chosen.spec_path), "--target", args.target, *shaping]
    cli_args += [f"--set={term}" for term in chosen.overrides]
    if args.results is not None:
        cli_args += ["--results", str(args.results)]
    if args.dry_run:
        cli_args.append("--dry-run")
    run_args = _run_parser().parse_args(cli_args)
    code, results = run.execute(run_args, console)
    if args.dry_run or results is None or not results.summary_file.is_file():
        return code
    shown = fidelity.cmd_fidelity(
        argparse.Namespace(results_dirs=[results.path], json=False, markdown=True), console
    )
    return code or shown
