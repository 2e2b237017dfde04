"""One aggregated point (a row of the report's points.csv) read once into numbers: the means
the report's tables take, by field rather than by column name. The figures keep the frame, as
they draw whole columns."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cachelab.columns import (
    MW_QUEUE_LENGTH,
    MW_QUEUE_TIME_MS,
    MW_RESPONSE_TIME_MS,
    MW_SERVICE_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
    mean_column,
)


@dataclass(frozen=True)
class PointMeans:
    """A point's means over its usable repetitions (NaN: the point has no such measure)."""

    point: int
    clients: int | float  # as the points frame holds it (an integer column stays integer)
    throughput_ops_per_s: float
    mw_throughput_ops_per_s: float
    response_time_ms: float
    mw_response_time_ms: float
    mw_queue_time_ms: float
    mw_queue_length: float
    mw_service_time_ms: float

    @classmethod
    def of(cls, row: pd.Series) -> PointMeans:
        """The means of one row of an aggregated points frame."""

        def mean(column: str) -> float:
            return float(row.get(mean_column(column), math.nan))

        clients = row[TOTAL_CLIENTS]
        return cls(
            point=int(row["point"]),
            clients=clients.item() if isinstance(clients, np.generic) else clients,
            throughput_ops_per_s=mean(THROUGHPUT_OPS_PER_S),
            mw_throughput_ops_per_s=mean(MW_THROUGHPUT_OPS_PER_S),
            response_time_ms=mean(RESPONSE_TIME_MS),
            mw_response_time_ms=mean(MW_RESPONSE_TIME_MS),
            mw_queue_time_ms=mean(MW_QUEUE_TIME_MS),
            mw_queue_length=mean(MW_QUEUE_LENGTH),
            mw_service_time_ms=mean(MW_SERVICE_TIME_MS),
        )
