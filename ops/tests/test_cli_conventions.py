"""The conventions every `cachelab` command follows: one option name per meaning, the Kubernetes
settings as options, `--json` output, defaults in `--help`, shell completion."""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import argcomplete
import pytest
from rich.console import Console

from cachelab.cli import build_parser, main
from cachelab.options import RunOptions

EXPERIMENTS = Path(__file__).parents[1] / "experiments"
QUICKSTART = EXPERIMENTS / "quickstart.yaml"
SAMPLE = Path(__file__).parent / "data" / "results-sample"


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
    assert sorted(results) == ["collect", "reproduce", "run", "search"]
    assert sorted(out) == ["compare", "render"]
    for actions in (results, out):
        meanings = {(a.metavar, str(a.help).split(" (default")[0]) for a in actions.values()}
        assert len(meanings) == 1, meanings


def test_namespace_and_release_are_options_of_the_k8s_commands(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cachelab.search
    from cachelab.k8s.collect_results import CollectTarget
    from cachelab.k8s.kube import K8sError
    from cachelab.k8s.target import K8sTarget
    from cachelab.spec import Spec

    seen: list[tuple[str | None, str | None]] = []

    def fake_check(target: K8sTarget, spec: Spec) -> None:
        seen.append((target.options.namespace, target.options.release))
        raise K8sError("stopped before the cluster")

    def fake_point_spec(target: CollectTarget) -> Spec:
        seen.append((target.namespace, None))
        raise K8sError("stopped before the cluster")

    monkeypatch.setattr(K8sTarget, "check", fake_check)
    monkeypatch.setattr(cachelab.search, "k8s_problem", lambda *args: None)
    monkeypatch.setattr(CollectTarget, "point_spec", fake_point_spec)
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
    for extra in (["--namespace", "lab"], ["--release", "tb"], ["--faults-via", "api"]):
        cli_args = ["run", str(QUICKSTART), "--results", str(tmp_path / "r"), *extra]
        assert main(cli_args) == 2
        out = capsys.readouterr().out
        assert "are for --target k8s, as are --namespace, --release and --faults-via" in out
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


def _json_out(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def test_list_json_has_every_spec_and_its_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--json"]) == 0
    listing = _json_out(capsys)
    names = [p.stem for p in sorted(EXPERIMENTS.glob("*.yaml"))]
    assert [s["name"] for s in listing["specs"]] == names
    quickstart = next(s for s in listing["specs"] if s["name"] == "quickstart")
    assert quickstart["valid"] and quickstart["problems"] == []
    assert (quickstart["points"], quickstart["runs"]) == (8, 24)
    assert quickstart["seeds"] == ["asl17-3.1-one-mw"] and quickstart["wall_s"] > 160
    assert listing["wall_s"] == pytest.approx(sum(s["wall_s"] for s in listing["specs"]))
    (tmp_path / "bad.yaml").write_text("name: bad\ntopology:\n  workers: 0\n")
    assert main(["list", "--json", "--dir", str(tmp_path)]) == 0
    (bad,) = _json_out(capsys)["specs"]
    assert bad["valid"] is False and bad["points"] is None
    assert bad["problems"] == ["topology.workers: must be >= 1, got 0"]


def test_json_commands_print_errors_on_stderr_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--json", "--dir", str(tmp_path / "nope")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"error: --dir {tmp_path / 'nope'}: no such folder" in captured.err
    assert main(["fidelity", "--json", str(tmp_path)]) == 2
    assert capsys.readouterr().out == ""


def test_validate_json_gives_each_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ntopology:\n  workers: 0\n")
    assert main(["validate", "--json", str(QUICKSTART), str(bad)]) == 1
    good, wrong = _json_out(capsys)["specs"]
    assert good == {
        "path": str(QUICKSTART),
        "valid": True,
        "name": "quickstart",
        "points": 8,
        "repetitions": 3,
        "max_repetitions": 5,
        "until_ci_pct": 10.0,
        "runs": 24,
        "max_runs": 40,
        "duration_s": 10,
        "problems": [],
    }
    assert wrong["valid"] is False and wrong["name"] is None
    assert wrong["problems"] == ["topology.workers: must be >= 1, got 0"]
    assert main(["validate", "--json", str(QUICKSTART)]) == 0
    assert len(_json_out(capsys)["specs"]) == 1


def test_fidelity_json_holds_the_table_as_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from seed_runs import shaped_run, worker_bound

    from cachelab.fidelity import fidelity_rows

    folder = shaped_run(tmp_path, "asl17-heavy-load-1mw", worker_bound)
    assert main(["fidelity", "--json", str(folder)]) == 0
    out = _json_out(capsys)
    expected = fidelity_rows(folder)
    assert len(out["rows"]) == len(expected) == 5  # Table 3's four worker counts, Table 4's
    row, first = out["rows"][0], expected[0]
    assert (row["experiment"], row["seed"], row["series"]) == (
        first.experiment,
        first.seed,
        first.series,
    )
    assert row["ours"]["saturation_ops_per_s"] == pytest.approx(first.ours.saturation)
    assert row["seed_published"]["knee"] == first.theirs.knee
    assert row["ratios"]["saturation"] == pytest.approx(
        row["ours"]["saturation_ops_per_s"] / row["seed_published"]["saturation_ops_per_s"]
    )
    assert row["seed_rt_from_law"] is True and row["x"] == "total_clients"
    assert row["config"]["topology.middlewares"] == 1 and row["config"]["workload.ratio"] == "1:0"
    assert row["bottleneck"] == {
        "ours": "unknown",  # no raw runs, so no CPU samples
        "seed": "worker_pool_rtt",
        "seed_where": "§3.3.1 'Explanation'",
        "same": None,
    }
    assert 0 <= row["shape_max_abs_difference"] <= 1
    # the seed's two-middleware curves (Table 3's four, Table 4's) are refused, each naming the
    # fields that differ
    assert len(out["refused"]) == 5
    fields = {d["field"]: (d["ours"], d["seed"]) for d in out["refused"][0]["differences"]}
    assert fields["topology.middlewares"] == (1, 2)
    with pytest.raises(SystemExit):  # one shape at a time
        main(["fidelity", "--json", "--markdown", str(folder)])


def test_search_json_is_the_answer_and_its_progress_goes_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cachelab.cli.search
    from cachelab.search import Answer, Bracket

    answer = Answer(8.0, Bracket(8.0, 9.0), 5, 6, 20_000.0, 1.5, float("nan"), False)

    def fake_search(
        args: object, settings: object, options: object, console: Console
    ) -> tuple[Path, Answer, str]:
        console.print("  step 0 attempt 0: 4 -> pass")
        return tmp_path, answer, "8 clients per thread meets p99<=2ms"

    monkeypatch.setattr(cachelab.cli.search, "_search", fake_search)
    cli_args = ["search", str(QUICKSTART), "--point", "0", "--slo", "p99<=2ms", "--json"]
    assert main(cli_args) == 0
    captured = capsys.readouterr()
    assert "step 0 attempt 0" in captured.err
    found = json.loads(captured.out)
    assert found["results_dir"] == str(tmp_path)
    assert found["unit"] == "clients per thread"
    assert found["settings"]["slo"] == "p99<=2ms"
    assert found["settings"]["axis"] == "topology.clients_per_thread"
    assert found["answer"]["load"] == 8.0
    assert found["answer"]["bracket"] == {"passed": 8.0, "failed": 9.0}
    assert found["answer"]["statistic_high_ms"] is None  # NaN: not a JSON number
    assert found["text"] == "8 clients per thread meets p99<=2ms"
    assert found["files"]["search.csv"] == str(tmp_path / "search.csv")


def test_every_option_with_a_value_shows_its_default_in_help() -> None:
    missing = []
    for name, command in _commands().items():
        formatter = command._get_formatter()
        for action in command._actions:
            if not action.option_strings or action.nargs == 0 or action.required:
                continue
            text = formatter._expand_help(action) if action.help else ""
            if "(default: " not in text:
                missing.append(f"cachelab {name} {action.option_strings[-1]}: {text!r}")
    assert missing == []
    assert "(default: 3)" in _help("search")  # a plain default is added by the formatter
    assert "(default: local)" in _help("run")


class _Finder(argcomplete.CompletionFinder):  # type: ignore[misc]
    """argcomplete's finder with its debug output left on stderr: its own stream is fd 9, which
    pytest holds."""

    def _init_debug_stream(self) -> None:
        pass


def _completions(line: str) -> list[str]:
    """What argcomplete offers for LINE (the cursor at its end), asked in process."""
    stream = io.StringIO()
    env = {"_ARGCOMPLETE": "1", "COMP_LINE": line, "COMP_POINT": str(len(line))}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with pytest.raises(SystemExit):
            _Finder()(build_parser(), output_stream=stream, exit_method=sys.exit)
    return sorted(stream.getvalue().split("\013"))


def test_completion_offers_the_commands_and_their_options() -> None:
    assert _completions("cachelab ru") == ["run "]
    assert _completions("cachelab s") == ["schema", "search", "summarize"]
    assert _completions("cachelab run --na") == ["--namespace "]
    assert _completions("cachelab run --target k") == ["k8s "]


def test_the_entry_point_answers_a_shell_asking_for_completions(tmp_path: Path) -> None:
    # what `eval "$(register-python-argcomplete cachelab)"` makes bash do on <Tab>
    entry = Path(sys.executable).with_name("cachelab")
    if not entry.is_file():
        pytest.fail(f"{entry} is missing: make venv")
    out = tmp_path / "completions"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "COMP_LINE": "cachelab ru",
        "COMP_POINT": "11",
        "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
    }
    done = subprocess.run([entry], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "run "
    assert done.stdout == ""
