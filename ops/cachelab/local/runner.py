"""`cachelab run SPEC --target local`: the local executor of the experiment loop, real processes.

For each run (`LocalRunner.run_one`): make sure the servers are up and preloaded (every key read
back), start the middleware(s) and wait for their "listening" line, start all loadgen instances
together and pass their per-second progress to the live line while they run, SIGTERM the
middleware(s) so they write their summary, record servers' counters and write `point.json`.
cachelab.experiment owns the rest (order, selection, resume, status.json, summary.csv), and
cachelab.local.target the results folder around the runs.

A spec with `network:` round-trip times gets one toxiproxy-server per run (cachelab.local.latency):
the middlewares reach their servers and the loadgens their targets through its proxies, which it
calibrates and measures before the loadgens start; it stops with the run's other processes.

Servers are reused from one run to the next while their configuration is the same and no run
wrote to them (`run.restart_servers: true` restarts them for every run); a read-only sweep thus
preloads once. On Ctrl-C (or SIGTERM) `run_one` stops every child gently, keeps what was measured
and marks the run `partial` before the loop marks the experiment `interrupted`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from cachelab.experiment import shielded
from cachelab.faults import FaultInjector
from cachelab.local.commands import loadgen_argv, middleware_argv, preload_argv, verify_argv
from cachelab.local.cpu import ProcessCpuSampler
from cachelab.local.faults import (
    FaultProcess,
    LocalFaultTargets,
    progress_origin,
    targets_touched,
)
from cachelab.local.latency import ROLE as EMULATOR_ROLE
from cachelab.local.latency import Toxiproxy, off_message, toxiproxy_binary
from cachelab.local.servers import HOST, Server, server_stats, start_servers
from cachelab.local.shaping import (
    LoopbackShaper,
    ShapingError,
    describe,
    links_for,
    one_way_delay_us,
    role_rates,
)
from cachelab.local.tools import Toolchain
from cachelab.monitor import LocalMonitor, MonitorSettings
from cachelab.processes import ManagedProcess, ProcessError, ProcessSet, free_port
from cachelab.results import (
    MeasuredInterval,
    ResultsDir,
    RunRecord,
    RunStatus,
    finish_point_record,
    start_point_record,
    write_json,
)
from cachelab.results.layout import CPU_FILE
from cachelab.results.run import client_stats
from cachelab.spec import Point, Spec
from cachelab.summary import SummaryError
from cachelab.terminal import LiveSample, combine, last_progress

LISTENING = "cachelab middleware listening on"
LIVE_POLL_S = 0.5  # how often the runner looks at the loadgens' progress lines
MISS_RATIO_TOLERANCE = 0.02


class RunError(RuntimeError):
    """A run that cannot go on (a child failed, the preload check failed)."""


@dataclass
class ServerGroup:
    """Servers kept across runs, with the configuration they were started and loaded for."""

    key: tuple[Any, ...]
    procs: ProcessSet
    servers: list[Server]
    started_in: str
    preload: dict[str, Any]
    dirty: bool = False


def _server_key(spec: Spec) -> tuple[Any, ...]:
    w = spec.workload
    return (
        spec.topology.backend,
        spec.topology.servers,
        w.protocol,
        w.value_bytes,
        w.key_maximum,
        spec.preload.enabled,
        spec.preload.expected_miss_ratio,
        spec.server,
    )


@dataclass
class LocalRunner:
    """Runs one spec locally into one results folder; the main thread drives everything."""

    spec: Spec
    spec_path: Path
    results: ResultsDir
    tools: Toolchain
    monitor: LocalMonitor | None = None  # `--monitor`: a Prometheus scraping every process
    bandwidth: str = "off"  # `--bandwidth`: a profile shaped on lo while each run measures
    live: Callable[[LiveSample], None] | None = None  # gets each second of a run's load
    group: ServerGroup | None = None
    target_name: str = "local"
    toxiproxy: str | None = None  # the toxiproxy-server binary (found when a spec sets RTTs)

    # --- servers and preload ------------------------------------------------------------------

    def _servers_for(self, spec: Spec, run_dir: Path) -> ServerGroup:
        key = _server_key(spec)
        group = self.group
        if group and (group.key != key or group.dirty or spec.run.restart_servers):
            group.procs.stop_all()
            self.group = group = None
        if group is None:
            procs = ProcessSet()
            try:
                servers = start_servers(
                    procs,
                    spec.topology.backend,
                    spec.topology.servers,
                    run_dir,
                    settings=spec.server,
                )
                preload = self._preload(spec, servers, run_dir / "preload")
            except BaseException:
                procs.stop_all()
                raise
            group = ServerGroup(key, procs, servers, run_dir.name, preload)
            self.group = group
        return group

    def _run_batch(self, procs: list[ManagedProcess], what: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for proc in procs:
            code = proc.wait(max(1.0, deadline - time.monotonic()))
            if code != 0:
                raise RunError(f"{what}: {proc.failure(f'exited with code {code}')}")

    def _one_per_server(
        self,
        procs: ProcessSet,
        argv_of: Callable[[str, Path, Spec, str, int, Path], list[str]],
        name: str,
        stem: str,
        spec: Spec,
        servers: list[Server],
        folder: Path,
    ) -> list[ManagedProcess]:
        """One loadgen per server started in `procs`: `argv_of`'s command, its JSON and log as
        `<stem>-<i>.json` and `.log` in `folder`."""
        t = self.tools
        return [
            procs.start(
                f"{name}-{i}",
                argv_of(t.java, t.loadgen_jar, spec, s.host, s.port, folder / f"{stem}-{i}.json"),
                folder / f"{stem}-{i}.log",
            )
            for i, s in enumerate(servers)
        ]

    def _preload(self, spec: Spec, servers: list[Server], folder: Path) -> dict[str, Any]:
        if not spec.preload.enabled:
            return {"enabled": False}
        folder.mkdir(parents=True, exist_ok=True)
        with ProcessSet() as procs:
            loaders = self._one_per_server(
                procs, preload_argv, "preload", "load", spec, servers, folder
            )
            self._run_batch(loaders, "preload", 300.0)
            checkers = self._one_per_server(
                procs, verify_argv, "verify", "check", spec, servers, folder
            )
            self._run_batch(checkers, "preload check", 120.0)
        checks = []
        for i, server in enumerate(servers):
            stats = client_stats(folder / f"check-{i}.json", MeasuredInterval(0, 1))
            looked_up = stats.hits + stats.misses
            ratio = stats.misses / looked_up if looked_up else 1.0
            checks.append(
                {
                    "server": server.address,
                    "hits": stats.hits,
                    "misses": stats.misses,
                    "miss_ratio": ratio,
                }
            )
            expected = spec.preload.expected_miss_ratio
            if abs(ratio - expected) > MISS_RATIO_TOLERANCE:
                raise RunError(
                    f"preload check failed on {server.address}: miss ratio {ratio:.3f} "
                    f"({stats.misses:.0f} of {looked_up:.0f}), spec expects {expected:.3f} "
                    f"± {MISS_RATIO_TOLERANCE}"
                )
        return {
            "enabled": True,
            "expected_miss_ratio": spec.preload.expected_miss_ratio,
            "checks": checks,
        }

    # --- one run ------------------------------------------------------------------------------

    def run_one(self, point: Point, repetition: int) -> RunRecord:
        spec = point.spec
        run_dir = self.results.run_dir(point.index, repetition)
        record = start_point_record(point, repetition)
        status: RunStatus = "failed"
        message = ""
        group: ServerGroup | None = None
        try:
            group = self._servers_for(spec, run_dir)
            record["servers"] = [{"address": s.address, "pid": s.proc.pid} for s in group.servers]
            record["servers_started_in"] = group.started_in
            record["preload"] = group.preload
            with ProcessSet() as procs:
                try:
                    self._measure(spec, group, procs, run_dir, record)
                    status = "ok"
                    message = off_message(record.get("network", {}).get("flagged") or [])
                except KeyboardInterrupt:
                    status, message = "partial", "interrupted"
                    with shielded():
                        self._stop_gently(procs)
                    raise
            if spec.workload.writes:
                group.dirty = True
        except (RunError, ProcessError, SummaryError, ShapingError, OSError) as error:
            status, message = "failed", str(error)
        except KeyboardInterrupt:
            status, message = "partial", "interrupted"
            raise
        finally:
            if group is not None:
                stats = {s.address: server_stats(s) for s in group.servers}
                write_json(run_dir / "servers.json", stats)
            finish_point_record(run_dir, record, status, message)
        return RunRecord(point.index, repetition, status, message)

    def _measure(
        self,
        spec: Spec,
        group: ServerGroup,
        procs: ProcessSet,
        run_dir: Path,
        record: dict[str, Any],
    ) -> None:
        t = self.tools
        addresses = [s.address for s in group.servers]
        if self.monitor is not None:
            self.monitor.begin_run(spec.topology.backend, addresses)
            record["monitor"] = dataclasses.asdict(self.monitor.settings)
        rtts = {link.name: link for link in spec.links()}
        emulator = None
        if rtts:
            if self.toxiproxy is None:
                self.toxiproxy = toxiproxy_binary(t.root)
            emulator = Toxiproxy(self.toxiproxy)
            emulator.start(procs, run_dir / "toxiproxy.log")
        middlewares: list[tuple[ManagedProcess, int]] = []
        for j in range(spec.topology.middlewares):
            port = free_port(HOST)
            stats_dir = run_dir / f"middleware-{j}"
            stats_dir.mkdir(exist_ok=True)
            servers = addresses
            if emulator is not None and "mw_server" in rtts:
                proxies = emulator.proxy_each(f"mw{j}-server", rtts["mw_server"], addresses)
                servers = [proxy.address for proxy in proxies]
            argv = middleware_argv(t.java, t.middleware_jar, spec, HOST, port, servers, stats_dir)
            if self.monitor is not None:
                argv += self.monitor.scrape_middleware(f"middleware-{j}")
            middlewares.append(
                (procs.start(f"middleware-{j}", argv, stats_dir / "stdout.log"), port)
            )
        for proc, _ in middlewares:
            proc.wait_for_line(LISTENING, timeout_s=60.0)
        record["middlewares"] = [
            {
                "index": j,
                "address": f"{HOST}:{port}",
                "stats_dir": f"middleware-{j}",
                "argv": proc.argv,
            }
            for j, (proc, port) in enumerate(middlewares)
        ]
        targets = [(HOST, port) for _, port in middlewares] or [
            (s.host, s.port) for s in group.servers
        ]
        if emulator is not None:  # the loadgens reach their targets through proxies too
            link = "client_mw" if middlewares else "client_server"
            if link in rtts:
                prefix = "clients-mw" if middlewares else "clients-server"
                upstreams = [f"{host}:{port}" for host, port in targets]
                proxies = emulator.proxy_each(prefix, rtts[link], upstreams)
                targets = [(HOST, proxy.listen_port) for proxy in proxies]
            record["network"] = emulator.calibrate(spec.workload.protocol)
        rates = role_rates(self.bandwidth, spec.topology.hosts)
        links = links_for(
            rates,
            [s.port for s in group.servers],
            [port for _, port in middlewares],
            spec.topology.client_machines,
            one_way_delay_us(self.bandwidth),
        )
        shaper = LoopbackShaper()
        shaper.apply(links)
        sampler: ProcessCpuSampler | None = None
        faulty: LocalFaultTargets | None = None
        try:  # lo unshaped again whatever fails from here, its counters read first
            sampler = ProcessCpuSampler(
                run_dir / CPU_FILE, lambda: _cpu_processes(procs, group.servers)
            ).start()
            faulty = _fault_targets(spec, group, middlewares, procs) if spec.faults else None
            failures = self._drive_loadgens(spec, procs, run_dir, record, targets, faulty)
        finally:
            if sampler is not None:
                sampler.stop()
            sent = shaper.sent_bytes()
            shaper.clear()
            record["bandwidth"] = describe(self.bandwidth, rates, links, shaper.delay_skipped, sent)
            if faulty is not None:
                _after_faults(spec, group, faulty)
        for j, ((proc, _), entry) in enumerate(
            zip(middlewares, record["middlewares"], strict=True)
        ):
            name = f"middleware-{j}"
            if faulty is not None:
                for old in procs:  # a restarted middleware's killed process
                    if old.name == proc.name and old is not faulty.current(name):
                        old.stop(grace_s=1.0)
                proc = faulty.current(name)
                if name in faulty.killed:
                    entry["exit_code"] = "killed by a fault"
                    continue
            entry["exit_code"] = proc.stop(grace_s=30.0)
            if entry["exit_code"] != 0:
                failures.append(f"{proc.name} exited with code {entry['exit_code']} on SIGTERM")
        if failures:
            raise RunError("; ".join(failures))

    def _drive_loadgens(
        self,
        spec: Spec,
        procs: ProcessSet,
        run_dir: Path,
        record: dict[str, Any],
        targets: list[tuple[str, int]],
        faulty: LocalFaultTargets | None = None,
    ) -> list[str]:
        """Starts the measuring loadgens together and waits for them (injecting the spec's
        faults meanwhile); returns their failures."""
        t = self.tools
        loadgens = []
        entries = []
        quiet = self.live is None and faulty is None  # faults: per-second lines for the report
        for i in range(spec.topology.instances):
            host, port = targets[i % len(targets)]
            argv = loadgen_argv_for(t, spec, host, port, run_dir, i, quiet=quiet)
            if self.monitor is not None:
                argv += self.monitor.scrape_loadgen(f"loadgen-{i}")
            proc = procs.start(f"loadgen-{i}", argv, run_dir / f"loadgen-{i}.log")
            loadgens.append(proc)
            entries.append(
                {
                    "index": i,
                    "target": f"{host}:{port}",
                    "json": f"loadgen-{i}.json",
                    "hdr_prefix": f"loadgen-{i}-hdr",
                    "launch_epoch_ms": proc.started_epoch_ms,
                    "argv": argv,
                }
            )
        record["loadgens"] = entries
        deadline = time.monotonic() + spec.run.duration_s + 60.0
        injector = None
        if faulty is not None:
            origin = progress_origin(run_dir / "loadgen-0.log")
            injector = FaultInjector(spec.faults, faulty, origin).start()
        try:
            self._watch(loadgens, run_dir, deadline)
            failures = []
            for proc, entry in zip(loadgens, entries, strict=True):
                code = proc.wait(max(1.0, deadline - time.monotonic()))
                entry["exit_code"] = code
                if code != 0:
                    failures.append(proc.failure(f"exited with code {code}"))
        finally:
            if injector is not None:
                with shielded():
                    injector.stop()
                    injector.write(run_dir)
        return failures

    def _watch(self, loadgens: list[ManagedProcess], run_dir: Path, deadline: float) -> None:
        """Until the loadgens exit (or the deadline): once a second, their latest progress lines
        together to `self.live`."""
        if self.live is None:
            return
        last = -1
        while any(p.running() for p in loadgens) and time.monotonic() < deadline:
            time.sleep(LIVE_POLL_S)
            if not any(p.running() for p in loadgens):
                break  # what they printed last is the run's cut-off partial second, not a live one
            logs = [run_dir / f"loadgen-{i}.log" for i in range(len(loadgens))]
            sample = combine([s for s in map(last_progress, logs) if s is not None])
            if sample is not None and sample.second != last:
                last = sample.second
                self.live(sample)

    def _stop_gently(self, procs: ProcessSet) -> None:
        """On Ctrl-C: SIGTERM the clients and then the middlewares, so both write what they have."""
        for proc in procs:
            if proc.name.startswith("loadgen"):
                proc.stop(grace_s=5.0)
        for proc in procs:
            proc.stop(grace_s=10.0)

    def close(self) -> None:
        """Stop the servers kept across runs."""
        if self.group is not None:
            self.group.procs.stop_all()
            self.group = None


def loadgen_argv_for(
    tools: Toolchain,
    spec: Spec,
    host: str,
    port: int,
    run_dir: Path,
    index: int,
    quiet: bool = True,
) -> list[str]:
    return loadgen_argv(
        tools.java,
        tools.loadgen_jar,
        spec,
        host,
        port,
        run_dir / f"loadgen-{index}.json",
        run_dir / f"loadgen-{index}-hdr",
        quiet=quiet,
    )


def _fault_targets(
    spec: Spec,
    group: ServerGroup,
    middlewares: list[tuple[ManagedProcess, int]],
    procs: ProcessSet,
) -> LocalFaultTargets:
    """The processes the spec's faults may hit: servers (restarted into the servers' set) and
    middlewares (into the run's)."""
    targets: dict[str, FaultProcess] = {}
    for i, server in enumerate(group.servers):
        targets[f"server-{i}"] = FaultProcess(server.proc, server.port, _port_ready(server.port))
    for j, (proc, port) in enumerate(middlewares):
        targets[f"middleware-{j}"] = FaultProcess(
            proc, port, lambda p: p.wait_for_line(LISTENING, timeout_s=60.0)
        )
    return _ServerAwareTargets(group.procs, targets, procs)


def _port_ready(port: int) -> Callable[[ManagedProcess], None]:
    def ready(proc: ManagedProcess) -> None:
        proc.wait_for_port(HOST, port)

    return ready


class _ServerAwareTargets(LocalFaultTargets):
    """Restarted servers join the servers' process set, restarted middlewares the run's."""

    def __init__(
        self, server_procs: ProcessSet, targets: dict[str, FaultProcess], run_procs: ProcessSet
    ) -> None:
        super().__init__(server_procs, targets)
        self.run_procs = run_procs

    def start_again(self, target: str) -> int:
        if target.startswith("middleware"):
            keep, self.procs = self.procs, self.run_procs
            try:
                return super().start_again(target)
            finally:
                self.procs = keep
        return super().start_again(target)


def _after_faults(spec: Spec, group: ServerGroup, faulty: LocalFaultTargets) -> None:
    """The servers as the faults left them: a restarted one's new process; servers that were
    killed or restarted lost their keys, so the next run starts fresh ones."""
    group.servers = [
        dataclasses.replace(s, proc=faulty.current(f"server-{i}"))
        for i, s in enumerate(group.servers)
    ]
    if targets_touched(spec.faults, "server"):
        group.dirty = True


def _cpu_processes(procs: ProcessSet, servers: list[Server]) -> list[tuple[str, str, int]]:
    """(role, name, pid) of every process of a run, for the CPU sampler."""
    found = [(s.backend, f"{s.backend}-{i}", s.proc.pid) for i, s in enumerate(servers)]
    found = [("server", name, pid) for _, name, pid in found]
    for proc in list(procs):
        role = proc.name.split("-")[0]
        if role in ("loadgen", "middleware", EMULATOR_ROLE):
            found.append((role, proc.name, proc.pid))
    return found


def start_monitor(spec: Spec, workdir: Path, console: Console) -> LocalMonitor:
    """`--monitor`: Prometheus and exporters for the whole experiment (docs/observability.md)."""
    hosts = spec.topology.hosts
    settings = MonitorSettings(pools=(hosts.client, hosts.middleware, hosts.server))
    monitor = LocalMonitor(workdir, settings, port_allocator=lambda: free_port(HOST))
    monitor.start()
    console.print(
        f"monitor: Prometheus at {monitor.client().base_url}, data in {workdir}", highlight=False
    )
    for note in monitor.skipped:
        console.print(f"monitor: no {note}", highlight=False)
    return monitor
