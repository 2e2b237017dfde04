"""Round-trip times between the roles of a run: the links, the seeds' profiles, and what a spec's
`network` section resolves to (the local runner emulates them with toxiproxy,
cachelab.local.latency).

A link is one kind of hop of a request: `client_mw` (a loadgen to its middleware), `mw_server`
(a middleware to a backend server), `client_server` (a loadgen to a server, in a baseline without
middleware). A profile sets each link's RTT (and jitter) from one seed report's own measurements;
each value names its source. The spec's `network.rtt_ms` / `network.jitter_ms` override a
profile link by link.
"""

from __future__ import annotations

from dataclasses import dataclass

LINKS = ("client_mw", "mw_server", "client_server")
LINK_WORDS = {
    "client_mw": "loadgens <-> middleware",
    "mw_server": "middleware <-> servers",
    "client_server": "loadgens <-> servers (no middleware)",
}
MAX_RTT_MS = 1000.0  # more is not a data-centre link; a typo such as 2000 for 2.0 is caught


@dataclass(frozen=True)
class LinkRtt:
    """One link's round-trip time in a profile, with the report and section that measured it."""

    rtt_ms: float
    jitter_ms: float
    source: str


PROFILES: dict[str, dict[str, LinkRtt]] = {
    "asl2017": {
        "client_mw": LinkRtt(
            2.3,
            0.0,
            "ASL 2017 §3.1.1: client <-> middleware RTT about 2.3 ms (ping, or client RT - MWT), "
            "the think time the middleware sees before saturation",
        ),
        "mw_server": LinkRtt(
            2.0,
            0.0,
            "ASL 2017 §3.1.1 (VMs of §2.4): middleware -> server RTT about 2 ms, so 8 workers "
            "reach at most 8 / 2 ms = 4,000 req/s",
        ),
    },
    "asl2017-fig11": {
        "client_mw": LinkRtt(
            0.5,
            0.0,
            "ASL 2017 §3.1.1, Figure 11: client <-> middleware 0.5 ms after a redeploy",
        ),
        "mw_server": LinkRtt(
            2.5,
            0.0,
            "ASL 2017 §3.1.1, Figure 11: middleware <-> server 2.5 ms after a redeploy",
        ),
    },
    "asl2019": {
        link: LinkRtt(
            0.9,
            0.2,
            "ASL 2019 §4.2 network characteristics: ping RTT 0.9 ± 0.2 ms between all systems",
        )
        for link in LINKS
    },
}
# ASL 2016 (seeds 001, 003) states no ping RTT: it has no profile here.
PROFILE_NAMES = ("off", *PROFILES)


def links_of(middlewares: int) -> tuple[str, ...]:
    """The links a topology has: through a middleware, or straight to the servers."""
    return ("client_mw", "mw_server") if middlewares > 0 else ("client_server",)


@dataclass(frozen=True)
class Link:
    """The RTT a run emulates on one link, and where the number comes from."""

    name: str
    rtt_ms: float
    jitter_ms: float
    source: str

    @property
    def one_way_ms(self) -> float:
        """Half the RTT: each direction's delay."""
        return self.rtt_ms / 2

    @property
    def one_way_jitter_ms(self) -> float:
        return self.jitter_ms / 2
