"""The conventions every `cachelab` command follows: one option name per meaning, the Kubernetes
settings as options, `--json` output, defaults in `--help`, shell completion."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from cachelab.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _options() -> Iterator[tuple[str, argparse.Action]]:
    """(command, option) for every option of every command."""
    for name, command in _commands().items():
        for action in command._actions:
            if action.option_strings:
                yield name, action


def _with(flag: str) -> dict[str, argparse.Action]:
    return {name: action for name, action in _options() if flag in action.option_strings}


def test_one_option_name_per_folder_meaning() -> None:
    # --results: the base folder of a new results folder; --out: the folder written into as named
    results, out = _with("--results"), _with("--out")
    assert sorted(results) == ["collect", "run", "search"]
    assert sorted(out) == ["compare", "render"]
    for actions in (results, out):
        meanings = {(a.metavar, str(a.help).split(" (default")[0]) for a in actions.values()}
        assert len(meanings) == 1, meanings
