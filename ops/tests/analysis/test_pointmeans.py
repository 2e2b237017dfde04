"""A point's means read once from a row of the aggregated points frame
(cachelab.analysis.pointmeans)."""

from __future__ import annotations

import math

import pandas as pd

from cachelab.analysis.pointmeans import PointMeans
from cachelab.columns import (
    MW_THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
    mean_column,
)


def _points() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "point": [0, 1],
            "label": ["a", "a"],
            TOTAL_CLIENTS: [8, 16],
            mean_column(THROUGHPUT_OPS_PER_S): [1000.0, 1800.0],
            mean_column(RESPONSE_TIME_MS): [8.0, 8.9],
            mean_column(MW_THROUGHPUT_OPS_PER_S): [990.0, 1790.0],
        }
    )


def test_a_row_becomes_its_means_by_field() -> None:
    means = PointMeans.of(_points().iloc[1])
    assert (means.point, means.clients) == (1, 16)
    assert isinstance(means.clients, int)
    assert means.throughput_ops_per_s == 1800.0
    assert means.mw_throughput_ops_per_s == 1790.0
    assert means.response_time_ms == 8.9


def test_a_measure_the_run_did_not_have_is_nan() -> None:
    means = PointMeans.of(_points().iloc[0])
    assert math.isnan(means.mw_queue_time_ms) and math.isnan(means.mw_queue_length)


def test_rows_from_iterrows_read_the_same() -> None:
    _, row = next(_points().iterrows())
    means, expected = PointMeans.of(row), PointMeans.of(_points().iloc[0])
    assert (means.point, means.clients, means.response_time_ms) == (0, 8, 8.0)
    assert (means.point, means.clients, means.response_time_ms) == (
        expected.point,
        expected.clients,
        expected.response_time_ms,
    )
