"""Middleware variants: the BENCH_MIDDLEWARE and BENCH_MEMCASLAP_MIDDLEWARE knobs' syntax
(`workers:batch` or `workers:batch:loops`), the target names and the middleware's options."""

from __future__ import annotations

import re
from dataclasses import dataclass

VARIANT_FORM = (
    "comma-separated workers:batch or workers:batch:loops (e.g. 8:1,2:16,1:16:2;"
    " workers and batch at least 1, loops at least 0)"
)


class VariantError(ValueError):
    """A BENCH_* middleware variant list that does not parse (the message names the knob)."""


@dataclass(frozen=True)
class Variant:
    """One middleware variant: `-t workers --worker-batch batch`, and `--event-loops loops` if
    loops > 0 (net threads serving their clients' single-server requests themselves)."""

    workers: int
    batch: int
    loops: int = 0

    def name(self, label: str = "cachelab") -> str:
        """The target's name: `<label>-t<W>-b<B>`, with `-e<L>` for event loops."""
        name = f"{label}-t{self.workers}-b{self.batch}"
        return f"{name}-e{self.loops}" if self.loops else name

    def flags(self) -> list[str]:
        """The middleware's options for this variant."""
        flags = ["-t", str(self.workers), "--worker-batch", str(self.batch)]
        return flags + (["--event-loops", str(self.loops)] if self.loops else [])


_TARGET_NAME = re.compile(r"(?P<label>[a-z]+)-t(?P<w>\d+)-b(?P<b>\d+)(?:-e(?P<e>\d+))?")


def variant_of(target: str) -> Variant:
    """The variant a target name (`cachelab-t<W>-b<B>[-e<L>]`, or `base-...`) stands for."""
    match = _TARGET_NAME.fullmatch(target)
    if match is None:
        raise ValueError(f"not a middleware target name: {target!r}")
    return Variant(int(match["w"]), int(match["b"]), int(match["e"] or 0))


def parse_variants(knob: str, text: str) -> list[Variant]:
    """The variants of `text`, the value of the environment variable `knob` (VariantError, naming
    the knob and the expected form, if one is malformed)."""
    variants = []
    for item in text.split(","):
        fields = item.strip().split(":")
        numbers = 2 <= len(fields) <= 3 and all(f.isascii() and f.isdigit() for f in fields)
        if not numbers or int(fields[0]) < 1 or int(fields[1]) < 1:
            raise VariantError(f"{knob}={text!r}: bad variant {item!r}; expected {VARIANT_FORM}")
        variants.append(Variant(*(int(f) for f in fields)))
    return variants
