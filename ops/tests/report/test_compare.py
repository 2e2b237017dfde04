"""`cachelab compare`: recorded results folders overlaid as one report."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from cachelab.cli import main
from cachelab.report import ReportError
from cachelab.report.compare import build_comparison

DATA = Path(__file__).resolve().parents[1] / "data"
QUICKSTART = DATA / "results-recorded-quickstart"
INTERRUPTED = DATA / "results-interrupted"
RECORDED_2K = DATA / "results-recorded-2k"


def test_two_folders_overlaid_with_labels(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    index = build_comparison([QUICKSTART, INTERRUPTED], out, ["quickstart", "pool"])
    text = index.read_text()
    images = set(re.findall(r'<img src="([^"]+)"', text))
    assert {"throughput_ops_per_s.png", "response_time_ms.png", "p99_ms.png"} <= images
    for image in images:
        assert (out / image).read_bytes()[:4] == b"\x89PNG"
    points = pd.read_csv(out / "points.csv")
    # the quickstart's two lines (workers 8 and 32) and the interrupted run's single point
    assert set(points.series) == {"quickstart: workers=8", "quickstart: workers=32", "pool"}
    assert len(points[points.series == "pool"]) == 1
    assert "quickstart" in text and "pool" in text


def test_bad_input_is_named(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="two or more"):
        build_comparison([QUICKSTART], tmp_path / "a")
    with pytest.raises(ReportError, match="3 labels for 2 folders"):
        build_comparison([QUICKSTART, INTERRUPTED], tmp_path / "b", ["a", "b", "c"])
    with pytest.raises(ReportError, match="labels must differ"):
        build_comparison([QUICKSTART, INTERRUPTED], tmp_path / "c", ["a", "a"])
    with pytest.raises(ReportError, match="different x columns"):
        build_comparison([QUICKSTART, RECORDED_2K], tmp_path / "d")
    with pytest.raises(ReportError, match="not a directory"):
        build_comparison([QUICKSTART, tmp_path / "nope"], tmp_path / "e")


def test_cli_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    code = main(["compare", str(QUICKSTART), str(INTERRUPTED), "--label", "qs", "--out", str(out)])
    assert code == 0 and (out / "index.html").is_file()
    out_text = capsys.readouterr().out
    assert f"note: {INTERRUPTED}: the experiment is interrupted (2/10 runs)" in out_text
    assert f"note: {QUICKSTART}" not in out_text
    assert main(["compare", str(QUICKSTART), str(tmp_path)]) == 2
    assert "no summary.csv" in capsys.readouterr().out
    assert main(["compare", str(QUICKSTART), str(tmp_path / "nope")]) == 2
    assert f"error: {tmp_path / 'nope'}: no such folder" in capsys.readouterr().out
    args = ["compare", str(QUICKSTART), str(INTERRUPTED)]
    assert main([*args, "--out", "/proc/nope"]) == 2
    assert "error: --out /proc/nope: cannot write there (" in capsys.readouterr().out
    assert main([*args, "--out", str(tmp_path / "bad-x" / "out"), "--x", "nope"]) == 2
    assert "x column 'nope' not in summary.csv" in capsys.readouterr().out
    assert not (tmp_path / "bad-x").exists()  # nothing left behind
