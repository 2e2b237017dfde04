"""Result blocks in pod logs: the loadgen JSON that the Jobs print between markers

    === cachelab-result-begin job=<job> machine=<i> instance=<j> ===
    { ... memtier JSON ... }
    === cachelab-result-end job=<job> machine=<i> instance=<j> ===

(manifests/base/scripts/common.sh, `emit`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_BEGIN = re.compile(r"^=== cachelab-result-begin job=(\S+) machine=(\S+) instance=(\S+) ===$")
_END = "=== cachelab-result-end job={} machine={} instance={} ==="


class CollectError(ValueError):
    """A log whose result blocks are broken (unterminated, or not JSON)."""


class UnterminatedBlock(CollectError):
    """A log that ends inside a result block: cut, or not yet all written."""


@dataclass(frozen=True)
class ResultBlock:
    """One loadgen instance's JSON output, as printed in a pod log."""

    job: str
    machine: str
    instance: str
    text: str

    def data(self) -> dict[str, Any]:
        try:
            value = json.loads(self.text)
        except json.JSONDecodeError as error:
            raise CollectError(
                f"job={self.job} machine={self.machine} instance={self.instance}: "
                f"not JSON ({error.msg} at line {error.lineno})"
            ) from None
        if not isinstance(value, dict):
            raise CollectError(f"instance={self.instance}: JSON is not an object")
        return value


def result_blocks(log: str) -> list[ResultBlock]:
    """Every result block of a log, in order. Lines outside blocks are ignored."""
    blocks: list[ResultBlock] = []
    lines = log.splitlines()
    i = 0
    while i < len(lines):
        match = _BEGIN.match(lines[i].strip())
        i += 1
        if not match:
            continue
        end = _END.format(*match.groups())
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != end:
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise UnterminatedBlock(
                f"unterminated result block: {match.group(0)} has no end marker"
            )
        i += 1
        job, machine, instance = match.groups()
        blocks.append(ResultBlock(job, machine, instance, "\n".join(body).strip()))
    return blocks


def log_without_blocks(log: str) -> str:
    """The log with the result blocks left out (what loadgen-<i>.log keeps)."""
    out: list[str] = []
    inside: str | None = None
    for line in log.splitlines():
        stripped = line.strip()
        if inside is None:
            match = _BEGIN.match(stripped)
            if match:
                inside = _END.format(*match.groups())
                out.append(f"[result block {stripped[len('=== cachelab-result-begin ') : -4]}]")
                continue
            out.append(line)
        elif stripped == inside:
            inside = None
    return "\n".join(out) + ("\n" if out else "")
