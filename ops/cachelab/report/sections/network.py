"""The report's network section for a spec with `network:` RTTs: per run and proxy, the RTT the
spec configured, what each direction's toxic waited after calibration and the RTT achieved (p50,
p90 of the calibration's round trips through the proxy, with the system idle), and whether the
p50 is within ±10 % of the configured RTT (cachelab.local.latency)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cachelab.report.sections.extras import ExtraSection
from cachelab.results import ResultsDir
from cachelab.results.records import PointRecord


def network_section(results_dir: Path) -> ExtraSection | None:
    """The section, or None when no run emulated an RTT."""
    rows: list[dict[str, Any]] = []
    emulator = ""
    for run in ResultsDir(results_dir).runs():
        if not run.point_file.is_file():
            continue
        network = PointRecord.load(run.point_file).extra.get("network")
        if not isinstance(network, dict):
            continue
        emulator = str(network.get("emulator", emulator))
        for proxy in network.get("links") or []:
            achieved = proxy.get("achieved") or {}
            within = proxy.get("within_10pct")
            rows.append(
                {
                    "run": run.path.name,
                    "link": proxy.get("link"),
                    "proxy": proxy.get("proxy"),
                    "configured_rtt_ms": proxy.get("rtt_ms"),
                    "jitter_ms": proxy.get("jitter_ms"),
                    "toxic_one_way_ms": proxy.get("toxic_one_way_ms"),
                    "achieved_p50_ms": achieved.get("p50_ms"),
                    "achieved_p90_ms": achieved.get("p90_ms"),
                    "within ±10 %": "-" if within is None else "yes" if within else "NO",
                    "source": proxy.get("source"),
                }
            )
    if not rows:
        return None
    missed = sum(r["within ±10 %"] == "NO" for r in rows)
    note = (
        f"RTTs emulated by {emulator or 'toxiproxy-server'}: one proxy per link instance, a "
        "latency toxic on each direction. Before the loadgens started, one client timed up to 200 "
        "round trips through each proxy on the idle system; the first proxy of a link set each "
        "direction's toxic to half the configured RTT less half of the least the emulator added "
        f"beyond it (its fastest round trip). {len(rows) - missed} of {len(rows)} proxies "
        "achieved a p50 within ±10 % of the configured RTT"
        + (f"; {missed} did not (their runs' status message names them)." if missed else ".")
    )
    return ExtraSection("network", "Round-trip times", note, rows)
