"""Effects the seeds state in words (cachelab/seeds/effects.yaml) and a run's two series of the
same change checked against them: the data against its sentence, the verdicts, the CLI."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from seed_runs import shaped_run

from cachelab.cli import main
from cachelab.cli.reproduce import plan
from cachelab.effects import effect_rows
from cachelab.seeds import all_effects, catalogue
from cachelab.spec import load_spec

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
# (client <-> MW, MW <-> server) RTT of each profile, ms
RTTS = {"asl2017": (2.3, 2.0), "asl2017-fig11": (0.5, 2.5)}


@pytest.mark.parametrize("effect", all_effects(), ids=lambda e: e.seed)
def test_each_effect_is_the_sentence_its_seed_printed(effect: Any) -> None:
    assert effect.seed in catalogue()
    sentence = effect.excerpt_path.read_text(encoding="utf-8")
    numbers = {float(n) for n in NUMBER.findall(sentence)}
    assert abs(effect.knee_shift_clients) in numbers
    assert ("earlier" if effect.knee_shift_clients < 0 else "later") in sentence
    assert "not reach the same maximum" in sentence  # the saturation is lower
    assert effect.saturation == "lower"
    spec = load_spec(plan(effect.seed, quick=True).spec_path)
    assert effect.field in spec.sweep
    assert {effect.base, effect.variant} <= set(spec.sweep[effect.field])


def closed_loop(row: dict[str, Any]) -> float:
    """8 workers, each holding a request for the MW <-> server RTT; clients thinking for the
    client <-> MW RTT: min(N / (Z + S), WT / S) requests per second."""
    think_ms, service_ms = RTTS[row["network.profile"]]
    return min(row["total_clients"] / (think_ms + service_ms), 8 / service_ms) * 1000


def test_the_worker_bound_with_figure_11s_rtts_moves_as_the_seed_says(tmp_path: Any) -> None:
    (row,) = effect_rows(shaped_run(tmp_path, "asl17-rtt-variant", closed_loop))
    assert row.base.saturation == pytest.approx(4000)
    assert row.variant.saturation == pytest.approx(3200)
    assert row.saturation_ratio == pytest.approx(0.8)
    assert (row.base.knee, row.variant.knee) == (24, 16)
    assert row.knee_shift_clients == -8
    assert row.saturation_agrees and row.knee_agrees


def test_a_change_that_moves_nothing_is_not_as_the_seed(tmp_path: Any) -> None:
    def unchanged(row: dict[str, Any]) -> float:
        return closed_loop({**row, "network.profile": "asl2017"})

    (row,) = effect_rows(shaped_run(tmp_path, "asl17-rtt-variant", unchanged))
    assert row.saturation_ratio == pytest.approx(1.0)
    assert row.knee_shift_clients == 0
    assert row.saturation_agrees is False and row.knee_agrees is False


def test_the_cli_prints_the_effect_and_its_json(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = shaped_run(tmp_path, "asl17-rtt-variant", closed_loop)
    assert main(["fidelity", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "network.profile asl2017 -> asl2017-fig11" in out
    assert "seed: lower (as the seed)" in out
    assert main(["fidelity", str(folder), "--json"]) == 0
    (effect,) = json.loads(capsys.readouterr().out)["effects"]
    assert effect["saturation_ratio"] == pytest.approx(0.8)
    assert effect["knee_shift_clients"] == -8
    assert effect["saturation_agrees"] and effect["knee_agrees"]


def test_a_seed_with_an_effect_can_be_reproduced() -> None:
    chosen = plan("asl17-3.1-rtt-variant", quick=True)
    assert chosen.spec_path.name == "asl17-rtt-variant.yaml"
    assert "run.repetitions=1" in chosen.overrides
