"""The options of one `cachelab run`, typed: what the CLI parsed, handed to a runner.

Built once by the CLI's thread from its arguments (:meth:`RunOptions.from_args`); the runners
read it and never see ``argparse``. A field left ``None`` takes the runner's default (for the
Kubernetes fields, its environment variable, then the built-in default).
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RunOptions:
    """One run's options. Immutable; shared by the CLI and the runner on the CLI's thread."""

    spec_path: Path
    target: str = "local"
    results: Path | None = None
    bandwidth: str | None = None
    monitor: bool = False
    resume: Path | None = None
    report: bool = False
    only: tuple[str, ...] = ()
    # --target k8s
    release: str | None = None
    namespace: str | None = None
    loadgen: str | None = None
    values: tuple[Path, ...] = field(default_factory=tuple)
    faults_via: str | None = None

    def resume_command(self, results_dir: Path) -> str:
        """The command that finishes this run in `results_dir`, with the options it was started
        with (target, report, bandwidth, monitor, --only, the Kubernetes settings)."""
        words = ["cachelab", "run", str(self.spec_path), "--resume", str(results_dir)]
        if self.target != "local":
            words += ["--target", self.target]
        if self.report:
            words.append("--report")
        if self.bandwidth:
            words += ["--bandwidth", self.bandwidth]
        if self.monitor:
            words.append("--monitor")
        for term in self.only:
            words += ["--only", term]
        for flag, value in (
            ("--release", self.release),
            ("--namespace", self.namespace),
            ("--loadgen", self.loadgen),
            ("--faults-via", self.faults_via),
        ):
            if value:
                words += [flag, value]
        for path in self.values:
            words += ["--values", str(path)]
        return " ".join(shlex.quote(w) for w in words)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options of a parsed `cachelab run` command line."""
        values = getattr(args, "values", None) or ()
        return cls(
            spec_path=Path(args.spec),
            target=str(getattr(args, "target", None) or "local"),
            results=getattr(args, "results", None),
            bandwidth=getattr(args, "bandwidth", None),
            monitor=bool(getattr(args, "monitor", False)),
            resume=getattr(args, "resume", None),
            report=bool(getattr(args, "report", False)),
            only=tuple(getattr(args, "only", None) or ()),
            release=getattr(args, "release", None),
            namespace=getattr(args, "namespace", None),
            loadgen=getattr(args, "loadgen", None),
            values=tuple(Path(v) for v in values),
            faults_via=getattr(args, "faults_via", None),
        )
