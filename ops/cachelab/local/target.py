"""The local target: real processes on this machine (cachelab.local.runner) into a results
folder under --results (default <repo>/results). It checks the tools and the spec's faults,
builds toxiproxy-server when a point has round-trip times, shapes lo for a bandwidth profile and
starts the `--monitor` Prometheus for the whole experiment. Called from the CLI's thread only."""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.console import Console

from cachelab.local.faults import check_local_faults
from cachelab.local.latency import toxiproxy_binary
from cachelab.local.runner import LocalRunner, start_monitor
from cachelab.local.shaping import LoopbackShaper, role_rates
from cachelab.local.tools import Toolchain
from cachelab.monitor import LocalMonitor
from cachelab.options import RunOptions
from cachelab.paths import repo_root
from cachelab.results import ResultsDir, collect_metadata, update_metadata, write_json
from cachelab.spec import Spec, save_spec
from cachelab.target import Live, Target


class LocalTarget(Target):
    """`--target local`; a search's (`search=True`) runs neither shape nor monitor."""

    name = "local"

    def __init__(self, options: RunOptions, console: Console, search: bool = False) -> None:
        super().__init__(console)
        self.options = options
        self.search = search
        self.root = repo_root()
        self.bandwidth = options.bandwidth or "off"
        self.tools: Toolchain | None = None
        self.toxiproxy: str | None = None
        self.monitor: LocalMonitor | None = None

    def settings(self) -> dict[str, Any]:
        """metadata.json's `settings`."""
        if self.search:
            return {"target": "local", "search": True}
        return {
            "target": "local",
            "bandwidth": self.bandwidth,
            "monitor": {"enabled": self.options.monitor},
        }

    def check(self, spec: Spec) -> None:
        self.tools = Toolchain.discover(self.root, need_middleware=spec.topology.middlewares > 0)
        check_local_faults(spec, self.bandwidth)  # before a results folder is made
        if any(p.spec.links() for p in spec.points()):  # RTTs: toxiproxy-server, built once
            self.toxiproxy = toxiproxy_binary(
                self.root, lambda line: self.console.print(line, highlight=False)
            )

    def _toolchain(self) -> Toolchain:
        if self.tools is None:
            raise RuntimeError("LocalTarget.check comes first")
        return self.tools

    def create(self, spec: Spec) -> ResultsDir:
        tools = self._toolchain()
        base = self.options.results if self.options.results is not None else self.root / "results"
        results = ResultsDir.create(base, spec.name)
        save_spec(spec, self.options.spec_path, results.spec_file)
        metadata = collect_metadata(tools.root, tools.java, tools.jars(), self.settings())
        metadata["target"] = "local"
        metadata["experiment"] = spec.name
        metadata["points"] = [{"point": p.index, "values": p.values} for p in spec.points()]
        write_json(results.metadata_file, metadata)
        return results

    def executor(self, spec: Spec, results: ResultsDir, live: Live | None) -> LocalRunner:
        runner = LocalRunner(
            spec,
            self.options.spec_path,
            results,
            self._toolchain(),
            bandwidth=self.bandwidth,
            live=live,
            toxiproxy=self.toxiproxy,
        )
        if self.bandwidth != "off":
            role_rates(self.bandwidth, spec.topology.hosts)  # the profile sizes every role
            LoopbackShaper().check()
            self.console.print(
                f"bandwidth: {self.bandwidth} shaped on lo while each run measures",
                highlight=False,
            )
        if self.options.monitor:
            self.monitor = start_monitor(spec, results.path / "prometheus", self.console)
            runner.monitor = self.monitor
            monitor = {"monitor": dataclasses.asdict(self.monitor.settings)}
            update_metadata(results.metadata_file, {"settings": {**self.settings(), **monitor}})
        return runner

    def resume_hint(self, results: ResultsDir) -> str | None:
        return self.options.resume_command(results.path)

    def close(self, results: ResultsDir) -> None:
        try:
            if self.monitor is not None:
                self.monitor.stop()
                self.monitor = None
        finally:
            super().close(results)
