"""The conventions every `cachelab` command follows: one option name per meaning, the Kubernetes
settings as options, `--json` output, defaults in `--help`, shell completion."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from cachelab.cli import build_parser, main
from cachelab.options import RunOptions

QUICKSTART = Path(__file__).parents[1] / "experiments" / "quickstart.yaml"


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


def _help(command: str) -> str:
    """`cachelab COMMAND --help`, its lines joined."""
    return " ".join(_commands()[command].format_help().split())


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


def test_namespace_and_release_are_options_of_the_k8s_commands(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cachelab.k8s.collect_results
    import cachelab.k8s.runner
    import cachelab.search
    from cachelab.k8s.kube import K8sError

    seen: list[tuple[str | None, str | None]] = []

    def fake_run(spec: object, options: RunOptions, *rest: object) -> None:
        seen.append((options.namespace, options.release))
        raise K8sError("stopped before the cluster")

    def fake_search(
        spec: Path, settings: object, point: object, options: RunOptions, _: object
    ) -> None:
        seen.append((options.namespace, options.release))
        raise K8sError("stopped before the cluster")

    def fake_collect(namespace: str | None, results: Path | None, console: object) -> Path:
        seen.append((namespace, None))
        raise K8sError("stopped before the cluster")

    monkeypatch.setattr(cachelab.k8s.runner, "run", fake_run)
    monkeypatch.setattr(cachelab.search, "k8s_problem", lambda *args: None)
    monkeypatch.setattr(cachelab.search, "run_k8s", fake_search)
    monkeypatch.setattr(cachelab.k8s.collect_results, "collect", fake_collect)
    k8s = ["--target", "k8s", "--namespace", "lab", "--release", "tb"]
    assert main(["run", str(QUICKSTART), *k8s]) == 2
    assert main(["search", str(QUICKSTART), "--point", "0", "--slo", "p99<=2ms", *k8s]) == 2
    assert main(["collect", "-n", "lab"]) == 2
    assert main(["run", str(QUICKSTART), "--target", "k8s"]) == 2  # the runner's defaults
    assert seen == [("lab", "tb"), ("lab", "tb"), ("lab", None), (None, None)]
    assert capsys.readouterr().out.count("error: stopped before the cluster") == 4


def test_the_k8s_settings_are_refused_on_the_local_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for extra in (["--namespace", "lab"], ["--release", "tb"]):
        argv = ["run", str(QUICKSTART), "--results", str(tmp_path / "r"), *extra]
        assert main(argv) == 2
        out = capsys.readouterr().out
        assert "are for --target k8s, as are --namespace and --release" in out
    assert not (tmp_path / "r").exists()


def test_help_shows_where_the_k8s_defaults_come_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CACHELAB_K8S_NAMESPACE", "lab")
    monkeypatch.delenv("CACHELAB_K8S_RELEASE", raising=False)
    for command in ("run", "search"):
        text = _help(command)
        assert "(default: $CACHELAB_K8S_NAMESPACE (here: lab), else default)" in text
        assert "(default: $CACHELAB_K8S_RELEASE, else testbed)" in text
    assert "$CACHELAB_K8S_NAMESPACE (here: lab)" in _help("collect")


def test_the_resume_command_of_a_k8s_run_parses_to_its_options() -> None:
    options = RunOptions(
        Path("s.yaml"),
        target="k8s",
        report=True,
        only=("workers=8",),
        namespace="lab",
        release="tb",
        loadgen="memtier",
        values=(Path("v.yaml"),),
    )
    words = shlex.split(options.resume_command(Path("results/x")))
    args = build_parser().parse_args(words[1:])
    assert RunOptions.from_args(args) == replace(options, resume=Path("results/x"))
