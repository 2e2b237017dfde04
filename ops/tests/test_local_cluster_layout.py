"""The node layout of the local multi-node cluster (scripts/local-cluster/layout.py): one scale
factor for every pool, caps that fit the cores left after the control plane, the local runner's
link rates, and layouts the machine cannot hold refused with what would fit."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from cachelab.local.shaping import POOL_MBIT, ROLE_MBIT
from cachelab.paths import repo_root

SCRIPT = repo_root() / "scripts" / "local-cluster" / "layout.py"
MEMORY_MIB = 24 * 1024  # the machine of the default: 2 cores, 24 GiB


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layout", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layout = load()


def test_the_default_asl2017_shape_on_two_cores_is_scaled_to_fit() -> None:
    """Three client machines as in ASL 2017 §3: 17 pool cores in the 1.5 cores left."""
    assert layout.DEFAULT_NODES == "a1:3,a4:1,a2:3"
    factor, nodes = layout.layout(layout.DEFAULT_NODES, "auto", "asl2017", 2, MEMORY_MIB, 500)
    assert factor == 0.088
    rows = {name: (pool, cpu, mib, mbit) for name, pool, cpu, mib, mbit in nodes}
    assert rows == {
        "cachelab-a1-0": ("a1", 88, 158, 100),
        "cachelab-a1-1": ("a1", 88, 158, 100),
        "cachelab-a1-2": ("a1", 88, 158, 100),
        "cachelab-a4-0": ("a4", 704, 1262, 700),
        "cachelab-a2-0": ("a2", 176, 315, 200),
        "cachelab-a2-1": ("a2", 176, 315, 200),
        "cachelab-a2-2": ("a2", 176, 315, 200),
    }
    assert sum(cpu for _, _, cpu, _, _ in nodes) <= 2000 - 500


def test_the_script_the_makefile_and_the_tier_default_to_the_same_layout() -> None:
    root = repo_root()
    script = (root / "scripts" / "local-cluster.sh").read_text()
    assert f'nodes_arg="${{CLUSTER_NODES:-{layout.DEFAULT_NODES}}}"' in script
    makefile = (root / "Makefile").read_text()
    assert f"ASL2017_NODES := {layout.DEFAULT_NODES}\n" in makefile
    conftest = (root / "ops" / "tests" / "k8s_real" / "conftest.py").read_text()
    assert f'ASL2017_NODES = "{layout.DEFAULT_NODES}"' in conftest


def test_a_second_a4_node_leaves_an_a1_node_too_small() -> None:
    """Why the two middlewares share one a4 node: 25 pool cores give an a1 node < 128 MiB."""
    with pytest.raises(layout.LayoutError) as refused:
        layout.layout("a1:3,a4:2,a2:3", "auto", "asl2017", 2, MEMORY_MIB, 500)
    assert "less than 50m CPU or 128 MiB" in str(refused.value)
    assert "e.g. a1:3,a4:1,a2:3 (17)" in str(refused.value)


@pytest.mark.parametrize("profile", ["asl2017", "asl2019", "azure-v2"])
def test_link_rates_are_the_local_runners(profile: str) -> None:
    _, nodes = layout.layout("a1:1,a4:1,a2:1", "auto", profile, 2, MEMORY_MIB, 500)
    rates = {pool: mbit for _, pool, _, _, mbit in nodes}
    if profile in ROLE_MBIT:  # servers on a1, clients on a2, the middleware on a4
        roles = ROLE_MBIT[profile]
        assert rates == {"a1": roles["server"], "a2": roles["client"], "a4": roles["middleware"]}
    else:
        assert rates == POOL_MBIT[profile]


def test_more_cores_give_a_larger_factor_capped_at_the_azure_sizes() -> None:
    assert layout.layout("a1:3,a4:1,a2:2", "auto", "off", 8, MEMORY_MIB, 500)[0] == 0.5
    factor, nodes = layout.layout("a1:1", "auto", "off", 64, 1 << 20, 500)
    assert factor == 1 and nodes == [("cachelab-a1-0", "a1", 1000, 1792, 0)]


@pytest.mark.parametrize(
    ("nodes", "scale", "profile", "message"),
    [
        ("a1:3,a4:3", "auto", "asl2017", "would fit: at most 21 pool cores"),
        ("a1:3,a4:1,a2:2", "0.2", "asl2017", "would fit: SCALE <= 0.1"),
        ("a1:3,a4:1,a2:2", "big", "asl2017", "SCALE='big'"),
        ("a1:3,a1:1", "auto", "asl2017", "pool a1 named twice"),
        ("a3:1", "auto", "asl2017", "expected pool:count entries"),
        ("a1:0", "auto", "asl2017", "counts >= 1"),
        ("a1:1", "auto", "fast", "PROFILE='fast'"),
    ],
)
def test_layouts_the_machine_cannot_hold_are_refused(
    nodes: str, scale: str, profile: str, message: str
) -> None:
    with pytest.raises(layout.LayoutError) as refused:
        layout.layout(nodes, scale, profile, 2, MEMORY_MIB, 500)
    assert message in str(refused.value)


def test_the_command_prints_the_layout_or_one_error_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert layout.main(["a1:1,a4:1,a2:1", "auto", "asl2017", "2", str(MEMORY_MIB), "500"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "scale 0.136" and out[1] == "node cachelab-a1-0 a1 136 244 100"
    assert layout.main(["a1:9,a4:9", "auto", "asl2017", "2", str(MEMORY_MIB), "500"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: NODES=a1:9,a4:9: ")
