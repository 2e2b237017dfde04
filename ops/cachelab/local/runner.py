"""`cachelab run SPEC --target local`: every point and repetition with real processes.

For each run: make sure the servers are up and preloaded (verified with a short read run), start
the middleware(s) and wait for their "listening" line, start all loadgen instances together,
wait for them, SIGTERM the middleware(s) so they write their summary, record servers' counters,
write `point.json`, and add the run's row to `summary.csv`.

Servers are reused from one run to the next while their configuration is the same and no run
wrote to them (`run.restart_servers: true` restarts them for every run); a read-only sweep thus
preloads once. Ctrl-C (or SIGTERM) stops every child, keeps what was measured, marks the current
run `partial` and the experiment `interrupted` in status.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from rich.console import Console

from cachelab.local.commands import loadgen_argv, middleware_argv, preload_argv, verify_argv
from cachelab.local.cpu import ProcessCpuSampler
from cachelab.local.procs import ManagedProcess, ProcessError, ProcessSet, free_port
from cachelab.local.progress import RunProgress
from cachelab.local.servers import HOST, Server, server_stats, start_servers
from cachelab.local.shaping import (
    LoopbackShaper,
    ShapingError,
    describe,
    links_for,
    one_way_delay_us,
    role_rates,
)
from cachelab.local.tools import Toolchain, repo_root
from cachelab.monitor import LocalMonitor, MonitorSettings
from cachelab.results import (
    MeasuredInterval,
    ResultsDir,
    RunRecord,
    RunStatus,
    Status,
    collect_metadata,
    finish_metadata,
    finish_point_record,
    start_point_record,
    update_metadata,
    write_json,
)
from cachelab.results.layout import CPU_FILE
from cachelab.results.noise import load_warning
from cachelab.results.run import client_stats
from cachelab.spec import Point, Spec
from cachelab.summary import SummaryError, add_summary_row

LISTENING = "cachelab middleware listening on"
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
    console: Console = field(default_factory=Console)
    monitor: LocalMonitor | None = None  # `--monitor`: a Prometheus scraping every process
    bandwidth: str = "off"  # `--bandwidth`: a profile shaped on lo while each run measures
    group: ServerGroup | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)

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
                raise RunError(f"{what}: {proc.name} exited with code {code}\n{proc.log_tail()}")

    def _preload(self, spec: Spec, servers: list[Server], folder: Path) -> dict[str, Any]:
        if not spec.preload.enabled:
            return {"enabled": False}
        folder.mkdir(parents=True, exist_ok=True)
        t = self.tools
        with ProcessSet() as procs:
            loaders = [
                procs.start(
                    f"preload-{i}",
                    preload_argv(
                        t.java, t.loadgen_jar, spec, s.host, s.port, folder / f"load-{i}.json"
                    ),
                    folder / f"load-{i}.log",
                )
                for i, s in enumerate(servers)
            ]
            self._run_batch(loaders, "preload", 300.0)
            checkers = [
                procs.start(
                    f"verify-{i}",
                    verify_argv(
                        t.java, t.loadgen_jar, spec, s.host, s.port, folder / f"check-{i}.json"
                    ),
                    folder / f"check-{i}.log",
                )
                for i, s in enumerate(servers)
            ]
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
            self._add_row(run_dir)
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
        middlewares: list[tuple[ManagedProcess, int]] = []
        for j in range(spec.topology.middlewares):
            port = free_port(HOST)
            stats_dir = run_dir / f"middleware-{j}"
            stats_dir.mkdir(exist_ok=True)
            argv = middleware_argv(t.java, t.middleware_jar, spec, HOST, port, addresses, stats_dir)
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
        record["bandwidth"] = describe(self.bandwidth, rates, links, shaper.delay_skipped)
        sampler = ProcessCpuSampler(
            run_dir / CPU_FILE, lambda: _cpu_processes(procs, group.servers)
        ).start()
        try:
            failures = self._drive_loadgens(spec, procs, run_dir, record, targets)
        finally:
            sampler.stop()
            shaper.clear()
        for (proc, _), entry in zip(middlewares, record["middlewares"], strict=True):
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
    ) -> list[str]:
        """Starts the measuring loadgens together and waits for them; returns their failures."""
        t = self.tools
        loadgens = []
        entries = []
        for i in range(spec.topology.instances):
            host, port = targets[i % len(targets)]
            argv = loadgen_argv_for(t, spec, host, port, run_dir, i)
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
        failures = []
        for proc, entry in zip(loadgens, entries, strict=True):
            code = proc.wait(max(1.0, deadline - time.monotonic()))
            entry["exit_code"] = code
            if code != 0:
                failures.append(f"{proc.name} exited with code {code}\n{proc.log_tail()}")
        return failures

    def _stop_gently(self, procs: ProcessSet) -> None:
        """On Ctrl-C: SIGTERM the clients and then the middlewares, so both write what they have."""
        for proc in procs:
            if proc.name.startswith("loadgen"):
                proc.stop(grace_s=5.0)
        for proc in procs:
            proc.stop(grace_s=10.0)

    def _add_row(self, run_dir: Path) -> None:
        sweep = list(self.spec.sweep)
        error = add_summary_row(self.rows, run_dir, sweep, self.results.summary_file)
        if error is not None:
            self.console.log(f"[yellow]{run_dir.name}: no summary row ({error})")

    # --- the experiment -----------------------------------------------------------------------

    def run(self) -> Status:
        points = self.spec.points()
        runs = [(p, r) for p in points for r in range(self.spec.run.repetitions)]
        status = Status(experiment=self.spec.name, target="local", runs_total=len(runs))
        status.save(self.results.status_file)
        progress = RunProgress(self.console, runs_total=len(runs), run_s=self.spec.run.duration_s)
        try:
            with progress, _sigterm_as_interrupt():
                for point, repetition in runs:
                    progress.start_run(point, repetition, self.spec.run.repetitions)
                    record = self.run_one(point, repetition)
                    status.record(record)
                    status.save(self.results.status_file)
                    progress.finish_run(record, self._row_of(point.index, repetition))
                    if record.status == "failed":
                        status.finish("failed", f"{point.label()} r{repetition}: {record.message}")
                        break
                else:
                    status.finish("complete")
        except KeyboardInterrupt:
            status.finish("interrupted", "stopped by Ctrl-C or SIGTERM; partial results kept")
            self._record_interrupted(status)
        finally:
            with shielded():
                if self.group is not None:
                    self.group.procs.stop_all()
                    self.group = None
            if status.state == "running":
                status.finish("failed", "stopped by an unexpected error")
            status.save(self.results.status_file)
        return status

    def _record_interrupted(self, status: Status) -> None:
        for run_dir in self.results.run_dirs():
            point_file = run_dir / "point.json"
            if not point_file.is_file():
                continue
            point, repetition = (int(x[1:]) for x in run_dir.name.split("-"))
            if all((r.point, r.repetition) != (point, repetition) for r in status.runs):
                status.record(RunRecord(point, repetition, "partial", "interrupted"))

    def _row_of(self, point: int, repetition: int) -> dict[str, Any] | None:
        for row in self.rows:
            if (row["point"], row["repetition"]) == (point, repetition):
                return row
        return None


def loadgen_argv_for(
    tools: Toolchain, spec: Spec, host: str, port: int, run_dir: Path, index: int
) -> list[str]:
    return loadgen_argv(
        tools.java,
        tools.loadgen_jar,
        spec,
        host,
        port,
        run_dir / f"loadgen-{index}.json",
        run_dir / f"loadgen-{index}-hdr",
    )


@contextmanager
def shielded() -> Iterator[None]:
    """Ignore Ctrl-C and SIGTERM while children are being stopped (so none is left behind)."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt while the experiment runs (also when the
    parent shell started us with SIGINT ignored), so the children are stopped on the way out."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _cpu_processes(procs: ProcessSet, servers: list[Server]) -> list[tuple[str, str, int]]:
    """(role, name, pid) of every process of a run, for the CPU sampler."""
    found = [(s.backend, f"{s.backend}-{i}", s.proc.pid) for i, s in enumerate(servers)]
    found = [("server", name, pid) for _, name, pid in found]
    for proc in list(procs):
        role = proc.name.split("-")[0]
        if role in ("loadgen", "middleware"):
            found.append((role, proc.name, proc.pid))
    return found


def prepare_results(
    spec: Spec,
    spec_path: Path,
    base: Path,
    tools: Toolchain,
    settings: dict[str, Any] | None = None,
) -> ResultsDir:
    results = ResultsDir.create(base, spec.name)
    shutil.copyfile(spec_path, results.spec_file)
    metadata = collect_metadata(tools.root, tools.java, tools.jars(), settings)
    metadata["target"] = "local"
    metadata["experiment"] = spec.name
    metadata["points"] = [{"point": p.index, "values": p.values} for p in spec.points()]
    write_json(results.metadata_file, metadata)
    return results


def run(spec: Spec, spec_path: Path, args: argparse.Namespace) -> tuple[ResultsDir, Status]:
    """Entry point of `cachelab run --target local`."""
    console = Console() if sys.stdout.isatty() else Console(width=160)
    root = repo_root()
    tools = Toolchain.discover(root, need_middleware=spec.topology.middlewares > 0)
    base = Path(args.results) if getattr(args, "results", None) else root / "results"
    bandwidth = getattr(args, "bandwidth", None) or "off"
    settings = {
        "target": "local",
        "bandwidth": bandwidth,
        "monitor": {"enabled": bool(getattr(args, "monitor", False))},
    }
    results = prepare_results(spec, spec_path, base, tools, settings)
    console.print(f"results: [bold]{results.path}[/]")
    warning = load_warning(os.getloadavg()[0], os.cpu_count(), "at the start")
    if warning:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    runner = LocalRunner(spec, spec_path, results, tools, console)
    runner.bandwidth = bandwidth
    if runner.bandwidth != "off":
        role_rates(runner.bandwidth, spec.topology.hosts)  # the profile sizes every role
        LoopbackShaper().check()
        console.print(f"bandwidth: {runner.bandwidth} shaped on lo while each run measures")
    if getattr(args, "monitor", False):
        runner.monitor = start_monitor(spec, results.path / "prometheus", console)
        update_metadata(
            results.metadata_file,
            {"settings": {**settings, "monitor": dataclasses.asdict(runner.monitor.settings)}},
        )
    try:
        status = runner.run()
    finally:
        if runner.monitor is not None:
            runner.monitor.stop()
        finish_metadata(results.metadata_file)
    return results, status


def start_monitor(spec: Spec, workdir: Path, console: Console) -> LocalMonitor:
    """`--monitor`: Prometheus and exporters for the whole experiment (docs/observability.md)."""
    hosts = spec.topology.hosts
    settings = MonitorSettings(pools=(hosts.client, hosts.middleware, hosts.server))
    monitor = LocalMonitor(workdir, settings, port_allocator=lambda: free_port(HOST))
    monitor.start()
    console.print(f"monitor: Prometheus at [bold]{monitor.client().base_url}[/], data in {workdir}")
    for note in monitor.skipped:
        console.print(f"monitor: no {note}", highlight=False)
    return monitor
