"""The prediction from the links' RTTs in the report: drawn beside the measured curve (and a
seed's), its caption naming the RTTs and where they came from, absent without RTTs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from cachelab.analysis.links import LinkDelays
from cachelab.analysis.prediction import network_model, predict_curve
from cachelab.report import build_report
from cachelab.report.analyse import analyse_results
from cachelab.report.plots_analysis import plot_prediction_beside

from .sample import generator, sample_spec


def test_the_prediction_is_drawn_beside_the_measured_and_the_seed_curve() -> None:
    prediction = predict_curve(
        network_model(8, 0.1, LinkDelays.of("profile", client_mw=2.3, mw_server=2.0)), 32
    )
    ax = Figure().subplots()
    plot_prediction_beside(
        ax, prediction, [2, 8, 32], [900.0, 3000.0, 3900.0], [4, 16, 32], [1500, 3600, 3800]
    )
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:2] == ["measured", "seed"]
    assert "MVA from the RTTs (client_mw 2.3 ms (profile), mw_server 2 ms (profile))" in labels
    assert "bounds from the RTTs" in labels
    assert "knee N* = 16.8" in labels  # (2.1 + 2.3 ms) x 8 / 2.1 ms
    assert ax.get_ylim()[1] >= prediction.ceiling_ops_per_s
    with pytest.raises(ValueError, match="seed curve"):
        plot_prediction_beside(Figure().subplots(), prediction, [1], [1.0], [1, 2], [1.0])


def _spec_with_rtts() -> dict[str, object]:
    spec = sample_spec(name="rtt-sample")
    # the synthetic run's client side takes 0.12 ms and a worker 0.43 ms: RTTs inside them
    spec["network"] = {"profile": "off", "rtt_ms": {"client_mw": 0.1, "mw_server": 0.3}}
    return spec


@pytest.mark.report
def test_the_report_predicts_each_line_from_the_specs_rtts(tmp_path: Path) -> None:
    results = generator().write_results(tmp_path / "rtt", _spec_with_rtts())
    section = analyse_results(results).section
    assert section.predictions and section.predictions.keys() == section.curves.keys()
    for label, prediction in section.predictions.items():
        assert prediction.links.describe() == (
            "client_mw 0.1 ms (configured), mw_server 0.3 ms (configured)"
        )
        # the RTTs taken out of the calibration are the ones put back: the prediction is the
        # out-of-sample MVA curve and the line's model ceiling
        ns, xs, _ = section.curves[label]
        assert list(prediction.clients) == [int(n) for n in ns]
        assert prediction.throughput_ops_per_s == pytest.approx(xs, rel=1e-9)
        closed = section.oos_models[label]
        assert prediction.ceiling_ops_per_s == pytest.approx(
            closed.throughput_bound_ops_per_s(10**9), rel=1e-9
        )
    html = build_report(results).read_text()
    assert "rtt_prediction.png" in re.findall(r'<img src="([^"]+)"', html)
    caption = html.split('alt="Throughput predicted from the links')[1].split("</figcaption>")[0]
    assert "client_mw 0.1 ms (configured), mw_server 0.3 ms (configured)" in caption
    assert "configured = configured in the spec (network.rtt_ms)" in caption
    assert "workers / (RTT + the server" in caption


@pytest.mark.report
def test_a_profile_names_the_seed_section_its_rtts_come_from(tmp_path: Path) -> None:
    spec = sample_spec(name="profile-sample")
    spec["network"] = {"profile": "asl2017"}
    results = generator().write_results(tmp_path / "profile", spec)
    section = analyse_results(results).section
    assert section.predictions
    for prediction in section.predictions.values():
        # the synthetic run measured less than the profile's RTTs: all of its client side and
        # holding time count as RTT, and the prediction is the profile's numbers alone
        assert prediction.holding_ms == pytest.approx(2.0)
        assert prediction.client_rtt_ms == 2.3
        assert prediction.ceiling_ops_per_s == pytest.approx(
            1000.0 * prediction.workers / 2.0, rel=1e-9
        )
    from cachelab.report.analysis import prediction_caption

    caption = prediction_caption(section.predictions)
    assert "client_mw 2.3 ms (profile), mw_server 2 ms (profile)" in caption
    assert "ASL 2017 §3.1.1" in caption


def test_a_run_without_rtts_has_no_prediction() -> None:
    results = Path(__file__).resolve().parents[1] / "data" / "results-sample"
    assert analyse_results(results).section.predictions == {}
