"""Faults as experiment steps: a spec's `faults` carried out while a run measures
(cachelab.faults.injector), on a local run's processes (cachelab.local.faults), and what they did
to the clients per second, with the time to detect and to recover (cachelab.faults.recovery)."""

from cachelab.faults.injector import FAULTS_FILE, FaultEvent, FaultInjector, FaultTargets
from cachelab.faults.recovery import Recovery, fault_columns, read_timeline, run_recoveries

__all__ = [
    "FAULTS_FILE",
    "FaultEvent",
    "FaultInjector",
    "FaultTargets",
    "Recovery",
    "fault_columns",
    "read_timeline",
    "run_recoveries",
]
