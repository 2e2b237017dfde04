"""`make report-shot`: headless Chromium captures the whole of a page taller than any window."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from cachelab.report.screenshot import WIDTH_PX, ScreenshotError, capture

pytestmark = pytest.mark.integration

PAGE_HEIGHT_PX = 20_000  # taller than the old fixed 12,000 px window


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_a_long_page_is_captured_to_its_last_pixel(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(
        "<!doctype html><html><body style='margin:0'>"
        f"<div style='height:{PAGE_HEIGHT_PX}px;background:linear-gradient(#fff,#036)'></div>"
        "</body></html>"
    )
    out = capture(page, tmp_path / "screenshot.png")
    width, height = png_size(out)
    assert width == WIDTH_PX
    assert height >= PAGE_HEIGHT_PX


def test_a_missing_browser_is_one_clear_error(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<html></html>")
    with pytest.raises(ScreenshotError, match="cannot start"):
        capture(page, tmp_path / "out.png", browser=str(tmp_path / "no-such-browser"))
