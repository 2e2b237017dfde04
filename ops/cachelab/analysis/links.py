"""The links' round-trip times as the closed models see them: delay stations on a request's path.

A request crosses two links (cachelab.network): the client's (loadgen <-> middleware, or
loadgen <-> server in a baseline without middleware) and the middleware's to the servers. In
the closed network (cachelab.analysis.models):

- the **client's link** is an infinite-server (delay) station: every request spends its RTT
  there whatever the load, like think time, so it is part of the delay Z' + Z;
- the **middleware -> server link** is inside a worker's holding time: a synchronous worker
  sends, waits the RTT for the reply, and only then takes the next request, so the worker pool
  is a multi-server station (m = workers x middlewares) whose demand per request is
  RTT_mw_server + the server's service + the worker's own CPU, and its ceiling is
  m / (RTT_mw_server + S_server + S_worker) (ASL 2017 §3.1.1: 8 workers / 2 ms = 4,000 req/s).

Where a link's RTT comes from, in order: the RTT the run achieved on it (summary.csv's
`rtt_<link>_p50_ms`, the p50 of the calibration's round trips through its proxies), else what
the run's spec asked for (`network.rtt_ms.<link>`: configured; else its `network.profile`:
the seed report's own number), else none (the link adds no delay; the model is the one
without links).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from cachelab.network import LINKS, MAX_RTT_MS, PROFILE_NAMES, PROFILES

RttSource = Literal["achieved", "configured", "profile"]
RTT_SOURCES: tuple[RttSource, ...] = ("achieved", "configured", "profile")
SOURCE_WORDS: dict[str, str] = {
    "achieved": "achieved by the run (p50 of the calibration round trips)",
    "configured": "configured in the spec (network.rtt_ms)",
    "profile": "the spec's network profile (the seed report's own measurement)",
}


def achieved_column(link: str) -> str:
    """summary.csv's column of a link's achieved RTT."""
    return f"rtt_{link}_p50_ms"


@dataclass(frozen=True)
class LinkDelay:
    """One link's RTT as a delay on the request's path, and where the number comes from."""

    link: str
    rtt_ms: float
    source: RttSource
    detail: str = ""  # the spec field or the seed report's section

    def __post_init__(self) -> None:
        if self.link not in LINKS:
            raise ValueError(f"link: {self.link!r} (expected: one of {', '.join(LINKS)})")
        if not math.isfinite(self.rtt_ms) or not 0 <= self.rtt_ms <= MAX_RTT_MS:
            raise ValueError(
                f"{self.link} RTT: {self.rtt_ms!r} ms (expected: a number in 0..{MAX_RTT_MS:g})"
            )
        if self.source not in RTT_SOURCES:
            raise ValueError(
                f"{self.link} RTT source: {self.source!r} (expected: one of "
                f"{', '.join(RTT_SOURCES)})"
            )


@dataclass(frozen=True)
class LinkDelays:
    """The RTTs of a run's links (empty: no link adds a delay)."""

    links: tuple[LinkDelay, ...] = ()

    def __post_init__(self) -> None:
        names = [d.link for d in self.links]
        if len(set(names)) != len(names):
            raise ValueError(f"links: {names} (expected: each link at most once)")

    @classmethod
    def of(
        cls,
        source: RttSource = "configured",
        detail: str = "",
        **rtt_ms: float,
    ) -> LinkDelays:
        """Delays from link=RTT pairs, all from one source:
        ``LinkDelays.of(client_mw=2.3, mw_server=2.0)``."""
        return cls(tuple(LinkDelay(link, rtt, source, detail) for link, rtt in rtt_ms.items()))

    def __bool__(self) -> bool:
        return bool(self.links)

    def get(self, link: str) -> LinkDelay | None:
        return next((d for d in self.links if d.link == link), None)

    def rtt_ms(self, link: str) -> float:
        """A link's RTT, 0 when the run has no delay on it."""
        found = self.get(link)
        return found.rtt_ms if found is not None else 0.0

    def client_rtt_ms(self, middlewares: int) -> float:
        """The RTT of the client's link: to the middleware, or to the servers without one."""
        return self.rtt_ms("client_mw" if middlewares > 0 else "client_server")

    def server_rtt_ms(self, middlewares: int) -> float:
        """The RTT inside a worker's holding time (none without a middleware)."""
        return self.rtt_ms("mw_server") if middlewares > 0 else 0.0

    @property
    def sources(self) -> tuple[str, ...]:
        """The sources of the links' numbers, in LINKS order, each once."""
        return tuple(dict.fromkeys(d.source for d in self._ordered()))

    def _ordered(self) -> list[LinkDelay]:
        return sorted(self.links, key=lambda d: LINKS.index(d.link))

    def describe(self) -> str:
        """'client_mw 2.3 ms (profile), mw_server 2 ms (profile)', or 'none'."""
        if not self.links:
            return "none"
        return ", ".join(f"{d.link} {d.rtt_ms:.3g} ms ({d.source})" for d in self._ordered())

    def merged_over(self, fallback: LinkDelays) -> LinkDelays:
        """These links, and each of `fallback`'s links these do not have."""
        have = {d.link for d in self.links}
        return LinkDelays(self.links + tuple(d for d in fallback.links if d.link not in have))


NO_LINKS = LinkDelays()


def profile_delays(profile: str) -> LinkDelays:
    """The RTTs of a seed's profile (cachelab.network.PROFILES), each naming its section.

    Raises
    ------
    ValueError
        If there is no such profile.
    """
    if profile not in PROFILES:
        raise ValueError(f"profile: {profile!r} (expected: one of {', '.join(PROFILE_NAMES)})")
    return LinkDelays(
        tuple(
            LinkDelay(link, rtt.rtt_ms, "profile", rtt.source)
            for link, rtt in PROFILES[profile].items()
        )
    )


def achieved_delays(row: Mapping[str, Any] | pd.Series, suffix: str = "") -> LinkDelays:
    """The RTTs a run achieved, from a summary row (``suffix="_mean"``: an aggregated point)."""
    found = []
    for link in LINKS:
        try:
            value = float(row.get(f"{achieved_column(link)}{suffix}", math.nan))
        except (TypeError, ValueError):
            continue
        if math.isfinite(value):
            found.append(LinkDelay(link, value, "achieved", achieved_column(link)))
    return LinkDelays(tuple(found))
