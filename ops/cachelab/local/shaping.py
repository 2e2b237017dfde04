"""Bandwidth shaping of a local run on the loopback device (`cachelab run --bandwidth PROFILE`).

On Kubernetes the bandwidth profiles become pod annotations (charts/testbed, `bandwidth.profile`).
Locally every process talks over 127.0.0.1, so a profile becomes `tc` HTB classes on `lo`, one per
sending machine or group of machines, each matched by TCP port and limited to the sender's egress
rate:

- server i -> anyone: source port of server i, the server's rate;
- middleware j -> its clients: source port of middleware j, the middleware's rate;
- middlewares -> servers: destination port of any server, the middleware's rate times the
  middlewares (every request and replicated write to any server shares the middlewares' egress);
- clients -> middlewares (or -> servers in a baseline without middleware): destination port of any
  of them, the clients' rate times the client machines (one client machine's egress is shared by
  every server or middleware it sends to, as the seeds' ASL 2017 §2.2 found: one load generator
  VM's 200 Mbit/s bounds its writes to two servers).

What a port cannot tell apart is not modelled: a middleware's two directions (to clients, to
servers) are limited separately rather than sharing one NIC, and the client machines (or the
middlewares) share one class rather than each having its own. The default class (all other
loopback traffic) is not
limited. A profile with a round-trip time (asl2019: 0.9 ms between all machines) also puts a
netem delay of half the RTT under every class, so each hop's request and reply add one RTT, where
the kernel has netem (sch_netem); where it has not, the rates still hold and the run record says
that the RTT was not added (`delay_skipped`).
Shaping needs root (`tc`), holds only while a run measures (preload and checks run
unshaped) and is removed afterwards, also on errors and Ctrl-C. Called by the runner's main thread.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, replace
from typing import Literal

from cachelab.network import PROFILES as RTT_PROFILES
from cachelab.spec import Hosts

DEVICE = "lo"
# Egress Mbit/s per role (asl2017, asl2019: iperf in the seeds) or per node pool (azure-v2);
# the seed reports (ASL 2017 §2.4, ASL 2019) and charts/testbed/values.yaml
# `bandwidth.profile`.
ROLE_MBIT = {
    "asl2017": {"client": 200, "middleware": 700, "server": 100},
    "asl2019": {"client": 180, "middleware": 710, "server": 88},
}
# Round-trip time between any two machines, added with netem where the kernel has it (ASL 2019:
# 0.9 +- 0.2 ms, the network profile's; without netem, the spec's `network` emulates RTTs).
RTT_MS = {"asl2019": RTT_PROFILES["asl2019"]["client_mw"].rtt_ms}
POOL_MBIT = {"azure-v2": {"a1": 250, "a2": 500, "a4": 1000}}
PROFILES = ("off", *ROLE_MBIT, *POOL_MBIT)
UNLIMITED = "100gbit"
# `tc -s class show`: a class line, then its counters' line
CLASS_SENT = re.compile(r"^class htb (\S+) .*\n\s*Sent (\d+) bytes", re.MULTILINE)


class ShapingError(RuntimeError):
    """tc is missing, not permitted, or `lo` is already shaped by someone else."""


@dataclass(frozen=True)
class Link:
    """One shaped link direction: packets whose `field` port is one of `ports`, at `mbit` Mbit/s
    for all of them together."""

    name: str
    field: Literal["sport", "dport"]
    ports: tuple[int, ...]
    mbit: int
    delay_us: int = 0  # netem delay of this direction (half the profile's RTT)


def role_rates(profile: str, hosts: Hosts) -> dict[str, int]:
    """Mbit/s for client, middleware and server under `profile` ({} for "off")."""
    if profile == "off":
        return {}
    if profile in ROLE_MBIT:
        return dict(ROLE_MBIT[profile])
    if profile in POOL_MBIT:
        pools = POOL_MBIT[profile]
        rates = {}
        for role, pool in (
            ("client", hosts.client),
            ("middleware", hosts.middleware),
            ("server", hosts.server),
        ):
            if pool not in pools:
                raise ShapingError(
                    f"bandwidth {profile}: topology.hosts.{role} is {pool!r},"
                    f" which the profile does not size (one of {', '.join(pools)})"
                )
            rates[role] = pools[pool]
        return rates
    raise ShapingError(f"bandwidth: {profile!r} is not one of {', '.join(PROFILES)}")


def one_way_delay_us(profile: str) -> int:
    """Half the profile's round-trip time in microseconds (0 when it has none)."""
    return round(RTT_MS.get(profile, 0.0) * 1000 / 2)


def links_for(
    rates: dict[str, int],
    server_ports: list[int],
    middleware_ports: list[int],
    client_machines: int,
    delay_us: int = 0,
) -> list[Link]:
    """The link directions of one run (see the module docstring), each delayed by `delay_us`."""
    links = _rate_links(rates, server_ports, middleware_ports, client_machines)
    return [replace(link, delay_us=delay_us) for link in links] if delay_us else links


def _rate_links(
    rates: dict[str, int],
    server_ports: list[int],
    middleware_ports: list[int],
    client_machines: int,
) -> list[Link]:
    if not rates:
        return []
    links = [
        Link(f"server-{i} out", "sport", (p,), rates["server"]) for i, p in enumerate(server_ports)
    ]
    clients = rates["client"] * client_machines
    if not middleware_ports:
        return [*links, Link("clients -> servers", "dport", tuple(server_ports), clients)]
    mw_rate = rates["middleware"]
    links.append(
        Link(
            "middlewares -> servers", "dport", tuple(server_ports), mw_rate * len(middleware_ports)
        )
    )
    links += [
        Link(f"middleware-{j} out", "sport", (port,), mw_rate)
        for j, port in enumerate(middleware_ports)
    ]
    links.append(Link("clients -> middlewares", "dport", tuple(middleware_ports), clients))
    return links


class LoopbackShaper:
    """Installs and removes the HTB classes of one run on `lo`."""

    def __init__(self, device: str = DEVICE) -> None:
        self.device = device
        self.installed = False
        self.delay_skipped: str | None = None  # why the links' netem delay is not applied
        self._classes: list[str] = []  # the classid of each applied link, in order

    def _tc(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["tc", *args], capture_output=True, text=True, check=False)
        if check and done.returncode != 0:
            raise ShapingError(f"tc {' '.join(args)} failed: {done.stderr.strip()}")
        return done

    def check(self) -> None:
        """Raises ShapingError unless shaping can work here; changes nothing."""
        if shutil.which("tc") is None:
            raise ShapingError("--bandwidth needs tc (Debian package iproute2)")
        if os.geteuid() != 0:
            raise ShapingError("--bandwidth needs root: it shapes the loopback device with tc")
        shown = self._tc("qdisc", "show", "dev", self.device).stdout
        if " root " in shown and not shown.startswith(("qdisc noqueue", "qdisc noop")):
            raise ShapingError(
                f"{self.device} already has a root qdisc ({shown.splitlines()[0].strip()});"
                " another run may be shaping it."
                f" Remove it with: tc qdisc del dev {self.device} root"
            )

    def apply(self, links: list[Link]) -> None:
        """Installs one class and filter per link; on failure removes what it installed."""
        if not links:
            return
        self.check()
        self.installed = True
        try:
            dev = ("dev", self.device)
            self._tc("qdisc", "add", *dev, "root", "handle", "1:", "htb", "default", "1")
            self._tc(
                "class", "add", *dev, "parent", "1:", "classid", "1:1", "htb", "rate", UNLIMITED
            )
            for k, link in enumerate(links):
                classid = f"1:{k + 16:x}"
                self._classes.append(classid)
                rate = f"{link.mbit}mbit"
                self._tc(
                    "class", "add", *dev, "parent", "1:", "classid", classid,
                    "htb", "rate", rate, "ceil", rate,
                )  # fmt: skip
                if link.delay_us and self.delay_skipped is None:
                    done = self._tc(
                        "qdisc", "add", *dev, "parent", classid, "handle", f"{k + 16:x}:",
                        "netem", "delay", f"{link.delay_us}us", check=False,
                    )  # fmt: skip
                    if done.returncode != 0:
                        self.delay_skipped = f"netem: {done.stderr.strip()}"
                for port in link.ports:
                    self._tc(
                        "filter", "add", *dev, "parent", "1:", "protocol", "ip", "prio", "1",
                        "u32", "match", "ip", link.field, str(port), "0xffff", "flowid", classid,
                    )  # fmt: skip
        except BaseException:
            self.clear()
            raise

    def sent_bytes(self) -> list[int | None]:
        """Bytes each applied link's class has sent since `apply`, in the order of its links
        (`tc -s class show`: IP packets with the loopback device's header); None for a class
        whose counter tc did not show."""
        if not self._classes:
            return []
        shown = self._tc("-s", "class", "show", "dev", self.device, check=False).stdout
        sent = {m[1]: int(m[2]) for m in CLASS_SENT.finditer(shown)}
        return [sent.get(classid) for classid in self._classes]

    def clear(self) -> None:
        """Removes the root qdisc this shaper installed (nothing if it installed none)."""
        if self.installed:
            self._tc("qdisc", "del", "dev", self.device, "root", check=False)
            self.installed = False
            self._classes = []


def describe(
    profile: str,
    rates: dict[str, int],
    links: list[Link],
    delay_skipped: str | None = None,
    sent_bytes: list[int | None] | None = None,
) -> dict[str, object]:
    """What a run record stores about its shaping; with `sent_bytes` (LoopbackShaper's, read
    before it is cleared) each link's bytes sent while it was shaped, which the operational
    analysis divides by the loadgens' requests of the whole run for a link's demand."""
    described = [asdict(link) for link in links]
    for link, sent in zip(described, sent_bytes or [], strict=False):
        link["sent_bytes"] = sent
    return {
        "profile": profile,
        "mbit": rates,
        "rtt_ms": RTT_MS.get(profile, 0.0) if delay_skipped is None else 0.0,
        "delay_skipped": delay_skipped,
        "links": described,
    }
