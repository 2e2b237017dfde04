"""Round-trip times between the roles of a local run, emulated in user space with toxiproxy.

The kernel of the development machine has HTB but no netem, so delay comes from toxiproxy-server
(github.com/Shopify/toxiproxy/v2, built once per machine by scripts/toxiproxy.sh, which widens
its `latency` toxic to fractional milliseconds). A run whose spec sets `network:` RTTs starts one
toxiproxy-server on a free loopback port and creates one proxy per link instance:

- `mw<j>-server<i>`: middleware j's connections to server i (the middleware is given the
  proxies' ports as its servers);
- `clients-mw<j>`: every loadgen of middleware j to it (the loadgens target the proxy);
- `clients-server<i>`: the loadgens to server i in a baseline without middleware.

Each proxy has a `latency` toxic on both directions (upstream and downstream), half the link's
RTT each way, jitter likewise. Preloads go to the servers directly, unshaped. The toxic waits on
a timerfd read through Go's netpoller (scripts/toxiproxy.sh's patch): a wait holds no thread and
none of the runtime's processors, so the server runs with Go's default GOMAXPROCS, the machine's
CPUs, whatever the number of connections it carries (the blocking nanosleep it replaced held one
per waiting direction, and so needed as many; ops/README.md has the CPU each costs per request).

Calibrated, not assumed (`calibrate_links`): before the loadgens start, with the system idle, one
client times N small round trips through each proxy (memcached `mn`, answered `MN` by memcached
and by the middleware itself; RESP `PING` for redis). The first proxy of a link measures the
least the emulator adds beyond its toxics (its fastest round trip less the RTT and jitter:
loopback, the proxy's two hops, waking up): each direction's toxic is lowered by half of that,
so no round trip is faster than the RTT, and then every proxy of the link is measured again. The
achieved p50 is recorded with the configured RTT; a link whose p50 is outside ±10 % of it is
flagged.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cachelab.network import Link
from cachelab.processes import ManagedProcess, ProcessError, ProcessSet, free_port

HOST = "127.0.0.1"
ROLE = "toxiproxy"  # its process's role in cpu.csv: never counted as a middleware's or a server's
PROBES = 200  # round trips per calibration
PROBE_BUDGET_S = 10.0  # fewer (at least MIN_PROBES) where 200 round trips would take longer
MIN_PROBES = 20
TOLERANCE = 0.10  # a link's achieved p50 within ±10 % of its configured RTT
API_TIMEOUT_S = 5.0
PROBE_TIMEOUT_S = 5.0
SEED = 1  # toxiproxy's jitter draws, the same in every run

# A request each kind of endpoint answers at once, and the reply's end.
PROBE = {
    "memcache_text": (b"mn\r\n", b"MN\r\n"),
    "redis": (b"*1\r\n$4\r\nPING\r\n", b"+PONG\r\n"),
}
PROBE_NAME = {"memcache_text": "mn", "redis": "PING"}


def gomaxprocs() -> int:
    """GOMAXPROCS of a run's toxiproxy-server: the user's GOMAXPROCS when set, else Go's default,
    the machine's CPUs (its waits hold none)."""
    configured = os.environ.get("GOMAXPROCS", "")
    return int(configured) if configured.isdigit() and int(configured) > 0 else os.cpu_count() or 1


class LatencyError(ProcessError):
    """toxiproxy-server cannot be built, started or configured, or a probe got no answer."""


def toxiproxy_binary(root: Path, say: Callable[[str], None] = print) -> str:
    """The toxiproxy-server binary (scripts/toxiproxy.sh builds it the first time on this
    machine; its progress lines go to `say`)."""
    script = root / "scripts" / "toxiproxy.sh"
    if not script.is_file():
        raise LatencyError(f"{script} is missing: the checkout is incomplete")
    proc = subprocess.Popen(
        [str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None and proc.stdout is not None
    errors = []
    for line in proc.stderr:
        line = line.rstrip()
        if line:
            errors.append(line)
            if not line.startswith("error:"):  # an error ends up in the exception instead
                say(f"network: {line}")
    out = proc.stdout.read().strip()
    code = proc.wait(timeout=1200)
    if code != 0 or not out:
        cause = errors[-1] if errors else f"exit code {code}"
        raise LatencyError(f"cannot build toxiproxy-server (scripts/toxiproxy.sh): {cause}")
    return out.splitlines()[-1]


@dataclass(frozen=True)
class Rtt:
    """Round trips timed through one proxy, in milliseconds."""

    n: int
    p50_ms: float
    p90_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float

    @classmethod
    def of(cls, samples_ms: Sequence[float]) -> Rtt:
        ordered = sorted(samples_ms)
        n = len(ordered)

        def at(q: float) -> float:
            return ordered[min(n - 1, math.ceil(q * n) - 1)]

        return cls(n, at(0.5), at(0.9), sum(ordered) / n, ordered[0], ordered[-1])


def time_round_trips(
    host: str, port: int, protocol: str, n: int = PROBES, timeout_s: float = PROBE_TIMEOUT_S
) -> Rtt:  # timeout_s: per connect and per reply (a 1,000 ms link stays well inside it)
    """N round trips, one at a time, on one connection to host:port."""
    request, reply_end = PROBE[protocol]
    samples = []
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for _ in range(n):
                start = time.perf_counter()
                sock.sendall(request)
                got = b""
                while not got.endswith(reply_end):
                    chunk = sock.recv(256)
                    if not chunk:
                        raise LatencyError(f"{host}:{port} closed the connection while probed")
                    got += chunk
                samples.append((time.perf_counter() - start) * 1000.0)
    except OSError as error:
        raise LatencyError(f"probing {host}:{port}: {error}") from None
    return Rtt.of(samples)


@dataclass
class Proxy:
    """One link instance: a toxiproxy proxy from `listen_port` to `upstream`."""

    name: str
    link: Link
    listen_port: int
    upstream: str
    toxic_one_way_ms: float = 0.0  # what each direction's toxic waits (after calibration)
    achieved: Rtt | None = None

    @property
    def address(self) -> str:
        return f"{HOST}:{self.listen_port}"

    def within_tolerance(self) -> bool | None:
        """Whether the achieved p50 is within ±10 % of the configured RTT (None: not measured,
        or no RTT to match)."""
        if self.achieved is None or self.link.rtt_ms <= 0:
            return None
        return abs(self.achieved.p50_ms - self.link.rtt_ms) <= TOLERANCE * self.link.rtt_ms

    def describe(self) -> dict[str, Any]:
        return {
            "proxy": self.name,
            "link": self.link.name,
            "listen": self.address,
            "upstream": self.upstream,
            "rtt_ms": self.link.rtt_ms,
            "jitter_ms": self.link.jitter_ms,
            "source": self.link.source,
            "toxic_one_way_ms": round(self.toxic_one_way_ms, 4),
            "achieved": asdict(self.achieved) if self.achieved else None,
            "within_10pct": self.within_tolerance(),
        }


@dataclass
class Toxiproxy:
    """One toxiproxy-server of a run and the proxies it holds; the runner's thread drives it."""

    binary: str
    proc: ManagedProcess | None = None
    api_port: int = 0
    gomaxprocs: int = 0
    proxies: list[Proxy] = field(default_factory=list)

    def start(self, procs: ProcessSet, log: Path) -> None:
        """Starts the server in `procs` (stopped with the run's other processes)."""
        self.api_port = free_port(HOST)
        argv = [self.binary, "-host", HOST, "-port", str(self.api_port), "-seed", str(SEED)]
        self.gomaxprocs = gomaxprocs()
        env = {"GOMAXPROCS": str(self.gomaxprocs)}
        self.proc = procs.start(ROLE, argv, log, env=env)
        self.proc.wait_for_port(HOST, self.api_port, timeout_s=20.0)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"http://{HOST}:{self.api_port}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=API_TIMEOUT_S) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace").strip()
            raise LatencyError(f"toxiproxy {method} {path}: HTTP {error.code} {detail}") from None
        except OSError as error:
            raise LatencyError(f"toxiproxy {method} {path}: {error}") from None
        try:
            return json.loads(text) if text.strip() else None
        except ValueError:  # /version answers plain text
            return text.decode(errors="replace").strip()

    def add_proxy(self, name: str, link: Link, upstream: str) -> Proxy:
        """A proxy on a free port to `upstream` (host:port) with the link's latency toxics."""
        proxy = Proxy(name, link, free_port(HOST), upstream, link.one_way_ms)
        self._call(
            "POST",
            "/proxies",
            {"name": name, "listen": proxy.address, "upstream": upstream, "enabled": True},
        )
        for stream in ("upstream", "downstream"):
            self._call(
                "POST",
                f"/proxies/{name}/toxics",
                {
                    "name": f"latency-{stream}",
                    "type": "latency",
                    "stream": stream,
                    "toxicity": 1.0,
                    "attributes": {
                        "latency": proxy.toxic_one_way_ms,
                        "jitter": link.one_way_jitter_ms,
                    },
                },
            )
        self.proxies.append(proxy)
        return proxy

    def proxy_each(self, prefix: str, link: Link, upstreams: Sequence[str]) -> list[Proxy]:
        """One proxy per upstream, named `<prefix><index>`."""
        return [self.add_proxy(f"{prefix}{k}", link, u) for k, u in enumerate(upstreams)]

    def calibrate(self, protocol: str) -> dict[str, Any]:
        """Calibrates and measures every proxy (`calibrate_links`): what point.json records."""
        proxies = calibrate_links(self, protocol)
        return {
            "emulator": f"toxiproxy-server {self.version()}",
            "gomaxprocs": self.gomaxprocs,
            "probe": PROBE_NAME[protocol],
            "links": proxies,
            "flagged": off_links(proxies),
        }

    def set_one_way(self, proxy: Proxy, one_way_ms: float) -> None:
        """Each direction's toxic of `proxy` to `one_way_ms`."""
        for stream in ("upstream", "downstream"):
            self._call(
                "POST",
                f"/proxies/{proxy.name}/toxics/latency-{stream}",
                {
                    "attributes": {
                        "latency": one_way_ms,
                        "jitter": proxy.link.one_way_jitter_ms,
                    }
                },
            )
        proxy.toxic_one_way_ms = one_way_ms

    def version(self) -> str:
        answer = self._call("GET", "/version")
        return str(answer.get("version", "")) if isinstance(answer, dict) else str(answer)


def calibrate_links(
    emulator: Toxiproxy, protocol: str, probes: int = PROBES
) -> list[dict[str, Any]]:
    """Calibrates and measures every proxy (see the module docstring); returns their records."""
    by_link: dict[Link, list[Proxy]] = {}
    for proxy in emulator.proxies:
        by_link.setdefault(proxy.link, []).append(proxy)
    for proxies in by_link.values():
        first = proxies[0]
        n = probes_for(first.link, probes)
        if first.link.rtt_ms > 0:
            trial = time_round_trips(HOST, first.listen_port, protocol, n)
            # the least the emulator added beyond its toxics (loopback, two hops, waking up):
            # taken off, the fastest round trip takes the RTT and the others a little more
            extra_ms = trial.min_ms - first.link.rtt_ms - first.link.jitter_ms
            one_way = max(0.0, first.link.one_way_ms - extra_ms / 2)
            for proxy in proxies:
                emulator.set_one_way(proxy, one_way)
        for proxy in proxies:
            proxy.achieved = time_round_trips(HOST, proxy.listen_port, protocol, n)
    return [p.describe() for p in emulator.proxies]


def probes_for(link: Link, probes: int = PROBES) -> int:
    """Round trips to time through a proxy of `link`: `probes`, fewer on a link so slow that
    they would take more than PROBE_BUDGET_S (a 1,000 ms link: 20)."""
    if link.rtt_ms <= 0:
        return probes
    return max(MIN_PROBES, min(probes, int(PROBE_BUDGET_S * 1000 / link.rtt_ms)))


def off_message(flagged: Sequence[str]) -> str:
    """A run's message for the links `off_links` flagged (empty: none)."""
    return "RTT outside ±10 % of the spec's: " + "; ".join(flagged) if flagged else ""


def off_links(records: Sequence[dict[str, Any]]) -> list[str]:
    """One phrase per proxy whose achieved p50 is outside ±10 % of its configured RTT."""
    return [
        f"{r['proxy']} p50 {r['achieved']['p50_ms']:.3f} ms vs {r['rtt_ms']:g} ms"
        for r in records
        if r.get("within_10pct") is False
    ]
