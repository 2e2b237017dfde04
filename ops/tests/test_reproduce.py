"""`cachelab reproduce SEED`: which spec and terms a seed runs with, its errors, and one short
real run of ASL 2017 §3.1 through its emulated links ending in the fidelity table."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachelab.cli import main
from cachelab.cli.reproduce import ReproduceError, plan
from cachelab.paths import repo_root
from cachelab.spec import load_spec


def test_a_seed_runs_its_own_spec_with_its_reports_network_profile() -> None:
    chosen = plan("asl17-3.1-one-mw", quick=False)
    assert chosen.spec_path.name == "asl17-one-mw.yaml"  # not the quickstart, which names it too
    assert chosen.overrides == ()  # the spec carries its report's profile itself
    spec = load_spec(chosen.spec_path, chosen.overrides)
    assert [(link.name, link.rtt_ms) for link in spec.links()] == [
        ("client_mw", 2.3),
        ("mw_server", 2.0),
    ]


def test_a_baseline_gets_its_profile_only_where_the_profile_states_its_link() -> None:
    # ASL 2017 measured no client -> server RTT; ASL 2019 measured 0.9 ms between all machines.
    assert not any(t.startswith("network.") for t in plan("asl17-2.2-one-client", False).overrides)
    asl19 = plan("asl19-2.1-b21", quick=False)
    spec = load_spec(asl19.spec_path, asl19.overrides)
    assert spec.network.profile == "asl2019"
    assert [(link.name, link.rtt_ms) for link in spec.links()] == [("client_server", 0.9)]


def test_a_seed_runs_with_its_reports_link_capacities_where_the_target_can_shape() -> None:
    assert plan("asl17-2.2-one-client", quick=True).bandwidth == "asl2017"
    assert plan("asl19-2.1-b21", quick=True).bandwidth == "asl2019"
    unshaped = plan("asl17-2.2-one-client", quick=True, can_shape=False)
    assert unshaped.bandwidth is None
    assert any(n.startswith("bandwidth asl2017 not applied: ") for n in unshaped.notes)
    # ASL 2016 measured no link capacity.
    assert plan("asl16-003-2-baseline", quick=True).bandwidth is None


def test_quick_keeps_only_the_points_with_published_numbers() -> None:
    # §3.2 states maxima at 8 workers (write-only) and 64 (read-only) per middleware
    chosen = plan("asl17-3.2-two-mw", quick=True)
    assert "sweep.topology.workers=[8, 64]" in chosen.overrides
    assert not any(term.startswith("sweep.workload.ratio") for term in chosen.overrides)
    # Table 4's point fixes 28 clients per thread, the other curves are drawn over all of them
    assert not any(term.startswith("sweep.topology.clients_per") for term in chosen.overrides)
    assert "run.repetitions=1" in chosen.overrides
    spec = load_spec(chosen.spec_path, chosen.overrides)
    points = spec.points()
    assert {p.spec.topology.workers for p in points} == {8, 64}
    assert {p.spec.workload.ratio for p in points} == {"1:0", "0:1"}
    assert len(points) == 2 * 2 * 9  # every client count of the spec's sweep


def test_a_seed_spec_without_its_profile_gets_it_from_reproduce(tmp_path: Path) -> None:
    spec = (repo_root() / "ops" / "experiments" / "asl17-one-mw.yaml").read_text()
    (tmp_path / "no-network.yaml").write_text(
        spec.replace("network:\n  profile: asl2017", 'network:\n  profile: "off"')
    )
    chosen = plan("asl17-3.1-one-mw", quick=False, folder=tmp_path)
    assert chosen.overrides == ("network.profile=asl2017",)


@pytest.mark.parametrize(
    ("spec_name", "profile"),
    [(p.stem, "asl2017" if p.stem.startswith("asl17") else "asl2019")
     for p in sorted((repo_root() / "ops" / "experiments").glob("asl1[79]-*.yaml"))],
)  # fmt: skip
def test_each_seed_spec_carries_its_reports_profile_where_it_states_every_link(
    spec_name: str, profile: str
) -> None:
    spec = load_spec(repo_root() / "ops" / "experiments" / f"{spec_name}.yaml")
    states_every_link = spec.topology.middlewares > 0 or profile == "asl2019"
    assert spec.network.profile == (profile if states_every_link else "off"), spec_name


def test_user_terms_come_after_reproduces_own() -> None:
    chosen = plan("asl17-3.1-one-mw", quick=True, extra=("run.duration_s=5",))
    assert chosen.overrides[-1] == "run.duration_s=5"
    assert load_spec(chosen.spec_path, chosen.overrides).run.duration_s == 5


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        ("asl17-9.9-nothing", "'asl17-9.9-nothing' is no seed experiment (ids of that report:"),
        ("asl17-2.4-iperf", "asl17-2.4-iperf: the seed published no numbers this testbed holds"),
    ],
)
def test_a_seed_that_cannot_be_reproduced_is_one_clear_line(
    seed: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ReproduceError, match="^" + expected.replace("(", r"\(")):
        plan(seed, quick=True)
    assert main(["reproduce", seed]) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"error: {expected}")
    assert len(out.strip().splitlines()) == 1


def test_a_sweep_without_the_seeds_values_is_refused(tmp_path: Path) -> None:
    spec = (repo_root() / "ops" / "experiments" / "asl17-two-mw.yaml").read_text()
    (tmp_path / "only-16-32.yaml").write_text(
        spec.replace("topology.workers: [8, 16, 32, 64]", "topology.workers: [16, 32]")
    )
    with pytest.raises(
        ReproduceError, match=r"its sweep of topology.workers \(\[16, 32\]\) has none"
    ):
        plan("asl17-3.2-two-mw", quick=True, folder=tmp_path)


def test_dry_run_lists_the_points_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["reproduce", "asl17-3.1-one-mw", "--quick", "--dry-run", "--results", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "asl17-one-mw.yaml --bandwidth=asl2017 --set run.repetitions=1" in out
    # 8 and 16 workers of both workloads, 32 and 64 read-only: the sweep's product, 4 x 2 x 9
    assert "dry run: 72 of 72 points, 72 runs of 20 s" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_one_command_runs_the_seed_and_prints_its_fidelity_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "reproduce",
            "asl17-3.1-one-mw",
            "--quick",
            "--results",
            str(tmp_path),
            "--set",
            "sweep.topology.clients_per_thread=[1, 4]",
            "--set",
            "sweep.topology.workers=[8]",
            "--set",
            'sweep.workload.ratio=["1:0"]',
            "--set",
            "run.duration_s=3",
            "--set",
            "run.warmup_s=1",
            "--set",
            "run.cooldown_s=1",
        ]
    )
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    # The fidelity table, as Markdown (one row a line at any terminal width).
    (row,) = [line for line in out.splitlines() if line.startswith("| asl17-one-mw |")]
    assert "| asl17-3.1-one-mw |" in row and "3,955" in row, row
    (summary,) = tmp_path.glob("*/*/summary.csv")
    header = summary.read_text().splitlines()[0]
    assert "rtt_client_mw_p50_ms" in header and "rtt_mw_server_p50_ms" in header
