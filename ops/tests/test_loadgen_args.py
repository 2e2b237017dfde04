"""One spec point gives the same loadgen flags locally and on Kubernetes (cachelab.loadgen_args)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from cachelab.k8s import plan
from cachelab.loadgen_args import LoadgenArgsError, joined, measure_args
from cachelab.local.commands import loadgen_argv, preload_argv, verify_argv
from cachelab.spec import Spec, load_spec, parse_spec

EXPERIMENTS = Path(__file__).parents[1] / "experiments"
JAR = Path("/x/loadgen.jar")
# What only a target adds: where the load and the output go, and the key range of a slice.
TARGET_FLAGS = ("--server=", "--port=", "--json-out-file=", "--hdr-file-prefix=", "--key-m")


def _shared(argv: list[str]) -> list[str]:
    flags = argv[argv.index("-jar") + 2 :]
    return [f for f in flags if f not in ("--quiet", "--hide-histogram")]


def _without_targets(flags: list[str]) -> list[str]:
    return [f for f in flags if not f.startswith(TARGET_FLAGS)]


def _local_measure(spec: Spec) -> list[str]:
    argv = loadgen_argv("java", JAR, spec, "127.0.0.1", 9000, Path("o.json"), Path("h"))
    return _shared(argv)


def _k8s_measure(spec: Spec, loadgen: str = "cachelab") -> list[str]:
    config = plan.job_config(spec, plan.Target(loadgen=loadgen))
    # the script's word splitting of the literal, as sh does it
    return shlex.split(config["LOADGEN_ARGS"])


SPECS = sorted(EXPERIMENTS.glob("*.yaml"))


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_every_point_has_the_same_measuring_flags_locally_and_on_kubernetes(path: Path) -> None:
    spec = load_spec(path)
    for point in spec.points():
        local = _without_targets(_local_measure(point.spec))
        k8s = _without_targets(_k8s_measure(point.spec))
        assert local == k8s, point.label()
        # and both ask for HDR interval percentiles and a distinct key sequence per client
        assert "--distinct-client-seed" in k8s and "--randomize" in k8s


def test_the_key_range_of_a_measuring_instance_is_the_same_too() -> None:
    spec = parse_spec({"name": "t", "workload": {"key_maximum": 777}})
    local = [f for f in _local_measure(spec) if f.startswith("--key-m")]
    k8s = [f for f in _k8s_measure(spec) if f.startswith("--key-m")]
    assert local == k8s == ["--key-minimum=1", "--key-maximum=777"]


def test_the_preload_recipe_is_shared() -> None:
    spec = parse_spec({"name": "t", "workload": {"value_bytes": 100}})
    config = plan.job_config(spec, plan.Target())
    fill = _without_targets(_shared(preload_argv("java", JAR, spec, "h", 1, Path("p.json"))))
    verify = _without_targets(_shared(verify_argv("java", JAR, spec, "h", 1, Path("v.json"))))
    assert fill == shlex.split(config["PRELOAD_FILL_ARGS"])
    assert verify == shlex.split(config["PRELOAD_VERIFY_ARGS"])


def test_memtier_has_no_think_time() -> None:
    spec = parse_spec({"name": "t", "workload": {"think_time_ms": 2}})
    assert "--think-time=2" in measure_args(spec, "cachelab")
    with pytest.raises(LoadgenArgsError, match=r"workload\.think_time_ms: 2\.0 needs the cachelab"):
        measure_args(spec, "memtier")


def test_a_flag_with_whitespace_cannot_become_a_configmap_literal() -> None:
    with pytest.raises(LoadgenArgsError, match="holds whitespace"):
        joined(["--ratio=1:0", "--server=a b"])


def test_a_zipf_pattern_passes_its_exponent_as_memtier_names_it() -> None:
    zipf = parse_spec({"name": "t", "workload": {"key_pattern": "R:Z", "key_zipf_exp": 0.99}})
    for loadgen in ("cachelab", "memtier"):
        assert "--key-zipf-exp=0.99" in measure_args(zipf, loadgen)
    assert "--key-pattern=R:Z" in _k8s_measure(zipf)
    uniform = parse_spec({"name": "t", "workload": {"key_zipf_exp": 0.99}})
    assert not [f for f in measure_args(uniform) if f.startswith("--key-zipf-exp")]
