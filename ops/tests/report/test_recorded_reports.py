"""The report of every recorded results folder: its CSVs hold only catalogued, non-empty
columns and name each point's swept values; its bounds bound every measured point."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from cachelab.columns import BOTTLENECKS, MODELS, POINTS, describe
from cachelab.report import build_report

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = sorted(p.name for p in DATA.glob("results-*") if (p / "raw").is_dir())


@pytest.fixture(scope="module", params=RECORDED)
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("recorded") / str(request.param)
    shutil.copytree(DATA / str(request.param), target, ignore=shutil.ignore_patterns("report"))
    build_report(target)
    return target / "report"


def test_every_csv_column_is_catalogued_and_none_is_empty(report: Path) -> None:
    for name, file in (
        ("points.csv", POINTS),
        ("models.csv", MODELS),
        ("bottlenecks.csv", BOTTLENECKS),
    ):
        frame = pd.read_csv(report / name)
        assert [c for c in frame.columns if describe(c, file) is None] == [], name
        assert [c for c in frame.columns if frame[c].isna().all()] == [], name


def test_every_per_point_csv_names_the_swept_values_and_clients(report: Path) -> None:
    points = pd.read_csv(report / "points.csv")
    axes = [c for c in points.columns if "." in c]
    for name in ("models.csv", "bottlenecks.csv"):
        frame = pd.read_csv(report / name)
        if frame.empty:
            continue
        assert {"point", "total_clients", *axes} <= set(frame.columns), name
        merged = frame.merge(points[["point", "total_clients", *axes]], on="point")
        assert (merged["total_clients_x"] == merged["total_clients_y"]).all()


def test_the_bounds_bound_every_measured_point(report: Path) -> None:
    points = pd.read_csv(report / "points.csv")
    if "bound_throughput_ops_per_s" not in points.columns:
        pytest.skip("no model for this folder")
    slack = points["throughput_ops_per_s_ci95"].fillna(0.0)
    above = points["throughput_ops_per_s_mean"] - slack > points["bound_throughput_ops_per_s"]
    assert not above.any(), points.loc[above, ["point", "throughput_ops_per_s_mean"]]
    slack = points["response_time_ms_ci95"].fillna(0.0)
    below = points["response_time_ms_mean"] + slack < points["bound_response_time_ms"]
    assert not below.any(), points.loc[below, ["point", "response_time_ms_mean"]]
