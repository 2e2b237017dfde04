"""Every plot function draws on the Axes it is given."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.figure import Figure

from cachelab.analysis import factorial
from cachelab.analysis.aggregate import aggregate_points
from cachelab.report import plots

from .sample import SAMPLE_DIR

METRICS = [
    "throughput_ops_per_s",
    "response_time_ms",
    "mw_queue_time_ms",
    "mw_service_time_ms",
    "mw_response_time_ms",
]


@pytest.fixture
def points() -> pd.DataFrame:
    summary = pd.read_csv(SAMPLE_DIR / "summary.csv")
    return aggregate_points(
        summary, METRICS, ["point", "topology.workers", "total_clients", "think_time_ms"]
    )


def _ax():  # type: ignore[no-untyped-def]
    return Figure().subplots()


def test_throughput_one_line_per_series_with_error_bars(points: pd.DataFrame) -> None:
    ax = _ax()
    plots.plot_throughput(ax, points, "total_clients", ["topology.workers"])
    labels = [c.get_label() for c in ax.containers]
    assert labels == ["workers=2", "workers=8"]
    assert ax.get_ylabel() == "throughput [ops/s]"
    assert all(c.has_yerr for c in ax.containers)


def test_response_time_without_series_draws_one_line(points: pd.DataFrame) -> None:
    ax = _ax()
    plots.plot_response_time(ax, points[points["topology.workers"] == 8], "total_clients")
    assert len(ax.containers) == 1
    assert ax.get_ylabel() == "response time [ms]"


def test_unknown_metric_or_x_is_named(points: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="metric: 'p77_ms_mean' not in frame"):
        plots.plot_throughput(_ax(), points, metric="p77_ms")
    with pytest.raises(ValueError, match="x: 'nope' not in frame"):
        plots.plot_throughput(_ax(), points, x="nope")


def test_breakdown_stacks_four_parts_per_point(points: pd.DataFrame) -> None:
    ax = _ax()
    plots.plot_mw_breakdown(ax, points, "total_clients", ["topology.workers"])
    # 4 parts x 2 series containers, each with one bar per client count
    assert len(ax.containers) == 8
    assert all(len(c.patches) == 3 for c in ax.containers)
    parts = plots.breakdown_parts(points)
    assert (parts >= 0).all().all()
    total = parts.sum(axis=1)
    assert total.to_numpy() == pytest.approx(points["response_time_ms_mean"].to_numpy(), rel=1e-6)


def test_breakdown_needs_middleware_columns(points: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="mw_queue_time_ms_mean"):
        plots.plot_mw_breakdown(_ax(), points.drop(columns=["mw_queue_time_ms_mean"]))


def test_latency_density_plot_draws_one_step_line_per_label() -> None:
    edges, fractions = [0.0, 0.5, 1.0, 1.5], [0.25, 0.5, 0.25]
    ax = _ax()
    plots.plot_latency_density(ax, {"a": (edges, fractions), "b": (edges, fractions)})
    assert len(ax.patches) == 2
    heights = ax.patches[0].get_data().values
    assert list(heights) == pytest.approx([50.0, 100.0, 50.0])  # % per ms


def test_percentiles_plot() -> None:
    ax = _ax()
    plots.plot_percentiles(ax, {"x": {50.0: 1.0, 90.0: 2.0, 99.0: 4.0, 99.9: 8.0}})
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["p50", "p90", "p99", "p99.9"]


def test_interactive_law_plot_pairs_measured_and_predicted(points: pd.DataFrame) -> None:
    frame = points.copy()
    frame["law_response_time_ms"] = (
        1000 * frame["total_clients"] / frame["throughput_ops_per_s_mean"]
    )
    ax = _ax()
    plots.plot_interactive_law(ax, frame, "total_clients", ["topology.workers"])
    assert len(ax.get_lines()) == 4
    with pytest.raises(ValueError, match="law_response_time_ms"):
        plots.plot_interactive_law(_ax(), points)


def test_model_overlay_uses_the_series_colour(points: pd.DataFrame) -> None:
    ax = _ax()
    models = {"workers=2": ([1.0, 2.0], [10.0, 20.0])}
    plots.plot_model_throughput(ax, points, models, "total_clients", ["topology.workers"])
    measured = next(c for c in ax.containers if c.get_label() == "workers=2")
    model_line = next(line for line in ax.get_lines() if line.get_label() == "model workers=2")
    assert model_line.get_color() == measured.lines[0].get_color()


def test_factorial_variation_bars() -> None:
    result = factorial.analyze([[15, 16], [45, 44], [25, 26], [75, 74]], ["topology.a", "b"])
    ax = _ax()
    plots.plot_factorial_variation(ax, result)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "a·b", "error"]
    assert len(ax.patches) == 4


def test_ordered_values_keep_category_order() -> None:
    text = pd.Series(pd.Categorical(["1:9", "1:99", "1:1"], categories=["1:99", "1:9", "1:1"]))
    assert plots.ordered_values(text) == ["1:99", "1:9", "1:1"]
    assert plots.ordered_values(pd.Series([8, 2, 8, 32])) == [2, 8, 32]


def test_key_skew_plots_draw_the_share_and_the_server_balance() -> None:
    frame = pd.DataFrame(
        {
            "workload.key_zipf_exp": [0.5, 1.0, 1.5, 0.5, 1.0, 1.5],
            "workload.routing": ["hash"] * 3 + ["round-robin"] * 3,
            "hot_key_share_mean": [0.005, 0.10, 0.39] * 2,
            "server_requests_max_over_mean_mean": [1.03, 1.04, 1.16, 1.0, 1.0, 1.0],
        }
    )
    left, right = Figure().subplots(1, 2)
    x, series = "workload.key_zipf_exp", ["workload.routing"]
    plots.plot_hot_key_share(left, frame, x, series)
    plots.plot_server_balance(right, frame, x, series)
    assert len(left.lines) == 2
    hashed = [line for line in right.lines if list(line.get_ydata()) == [1.03, 1.04, 1.16]]
    assert len(hashed) == 1
    assert any(list(line.get_ydata()) == [1.0, 1.0] for line in right.lines)  # the 1.0 guide
