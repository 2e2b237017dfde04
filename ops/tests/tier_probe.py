"""pytest plugin (`-p tier_probe`): prints every collected test with its markers, one line each,
for the check that the Makefile's test tiers do not overlap (test_doc_claims.py)."""

from __future__ import annotations

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        markers = sorted({mark.name for mark in item.iter_markers()})
        print(f"TIER-PROBE {item.nodeid} {','.join(markers)}")
