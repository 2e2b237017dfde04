"""The seed experiment specs in ops/experiments/ and their map in docs/experiments.md."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.paths import repo_root

REPO = repo_root()
EXPERIMENTS = REPO / "ops" / "experiments"
DOC = REPO / "docs" / "experiments.md"
SPECS = sorted(EXPERIMENTS.glob("*.yaml"))

# docs/interfaces.md §3: every key a spec may have
SECTION_KEYS: dict[str, set[str]] = {
    "topology": {
        "client_machines",
        "instances_per_machine",
        "threads",
        "clients_per_thread",
        "middlewares",
        "workers",
        "worker_batch",
        "event_loops",
        "servers",
        "backend",
        "hosts",
    },
    "workload": {
        "protocol",
        "ratio",
        "value_bytes",
        "key_maximum",
        "key_pattern",
        "key_zipf_exp",
        "multi_get",
        "sharded",
        "routing",
        "replication",
        "think_time_ms",
        "rate_ops",
    },
    "preload": {"enabled", "expected_miss_ratio"},
    "server": {"memcached", "redis"},
    "network": {"profile", "rtt_ms", "jitter_ms"},
    "run": {"repetitions", "duration_s", "warmup_s", "cooldown_s", "restart_servers"},
    "report": {"x", "series"},
}
TOP_KEYS = {"name", "description", "seeds", "sweep", *SECTION_KEYS}
SEED_ID = re.compile(r"^\| ((?:asl17|asl19|asl16|mvr)-[\w.-]+) \|", re.MULTILINE)


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name}: top level must be a mapping"
    return data


def test_there_are_seed_specs() -> None:
    assert len([p for p in SPECS if not p.stem.startswith("quickstart")]) >= 40


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_spec_uses_only_contract_keys(path: Path) -> None:
    spec = _load(path)
    assert set(spec) <= TOP_KEYS, f"unknown top-level keys {set(spec) - TOP_KEYS}"
    assert spec["name"] == path.stem, "name must match the file name"
    assert re.fullmatch(r"[a-z0-9-]+", spec["name"])
    for section, keys in SECTION_KEYS.items():
        extra = set(spec.get(section) or {}) - keys
        assert not extra, f"{section}: unknown keys {extra}"
    for axis, values in (spec.get("sweep") or {}).items():
        section, _, leaf = axis.partition(".")
        leaf = leaf.split(".", 1)[0]  # server.memcached.threads: the section's key is memcached
        assert leaf in SECTION_KEYS.get(section, set()), f"sweep.{axis}: not a spec field"
        assert isinstance(values, list) and values, f"sweep.{axis}: needs a non-empty list"
    ratio = (spec.get("workload") or {}).get("ratio", "0:1")
    assert re.fullmatch(r"\d+:\d+", str(ratio)), f"workload.ratio {ratio!r} (quote it in YAML)"
    run = spec.get("run") or {}
    assert run.get("warmup_s", 0) + run.get("cooldown_s", 0) < run.get("duration_s", 10)


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_spec_validates_with_the_spec_module(path: Path) -> None:
    if importlib.util.find_spec("cachelab.spec") is None:
        # the runner's spec module is not merged yet: the key check above is the validation
        assert _load(path)["name"] == path.stem
        return
    spec_module = importlib.import_module("cachelab.spec")
    spec = spec_module.load_spec(path)
    assert spec.points(), f"{path.name}: no points"


def _catalogue_text() -> str:
    """The doc without its generated fidelity table, whose rows start with a spec's name."""
    text = DOC.read_text(encoding="utf-8")
    begin, end = text.find("<!-- fidelity table: begin"), text.find("<!-- fidelity table: end")
    return text[:begin] + text[end:] if 0 <= begin < end else text


def test_doc_maps_all_49_seed_experiments_once() -> None:
    ids = SEED_ID.findall(_catalogue_text())
    assert len(ids) == 49
    assert len(set(ids)) == 49
    counts = {
        prefix: sum(i.startswith(prefix) for i in ids)
        for prefix in ("asl17", "asl19", "asl16", "mvr")
    }
    assert counts == {"asl17": 17, "asl19": 8, "asl16": 8, "mvr": 16}


def test_every_spec_is_in_the_doc_and_its_seeds_exist() -> None:
    doc = DOC.read_text(encoding="utf-8")
    ids = set(SEED_ID.findall(doc))
    for path in SPECS:
        if path.stem == "quickstart":
            continue
        assert f"`{path.name}`" in doc, f"{path.name} is not in docs/experiments.md"
        for seed in _load(path).get("seeds", []):
            assert seed in ids or seed.startswith("x-"), f"{path.name}: unknown seed id {seed}"
