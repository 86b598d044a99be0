"""How the HTML report carries plotly.js: the lean basic bundle inline (offline), the full bundle when the
basic one cannot draw the figures, or plotly's CDN (--plotly cdn); and no empty chart on a CPU-only run."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.report.test_html import run_cli
from tracekit.errors import ConfigError
from tracekit.report import plotlyjs
from tracekit.report.html import bucket_figure

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
FULL_BUNDLE_MB = len(__import__("plotly.offline", fromlist=["get_plotlyjs"]).get_plotlyjs()) / 1e6


def test_basic_bundle_is_plotlys_basic_dist_and_fits_only_its_trace_types() -> None:
    head = gzip.decompress(plotlyjs.BASIC_BUNDLE.read_bytes())[:200].decode()
    assert f"plotly.js (basic - minified) v{plotlyjs.BASIC_VERSION}" in head
    assert plotlyjs.basic_fits({"bar"}, "4.0.0") and plotlyjs.basic_fits({"bar", "scatter"}, "4.9.1")
    assert not plotlyjs.basic_fits({"bar", "heatmap"}, "4.1.1")  # a trace type the basic bundle lacks
    assert not plotlyjs.basic_fits({"bar"}, "3.0.1")  # figure JSON of another major version
    with pytest.raises(ConfigError, match="--plotly 'svg'"):
        plotlyjs.plotly_script("svg")


def test_inline_report_is_lean_and_self_contained(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, text = run_cli("report", str(SAMPLES / "examples/inductor_graph_break"), "-o", str(out))
    assert code == 0, text
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link)[^>]+(src|href)=", page)  # nothing fetched at view time
    size_mb = len(page.encode()) / 1e6
    if plotlyjs.basic_fits({"bar"}):
        assert f"plotly.js basic {plotlyjs.BASIC_VERSION}" in page
        # 260 KB of traces: was 5.5 MB with the full bundle inlined (4.8 MB of it plotly.js)
        assert size_mb < 2.0 and size_mb < FULL_BUNDLE_MB / 2, size_mb
    else:  # another plotly.js major version: the installed full bundle, said so in the page
        assert "(full bundle)" in page


def test_cdn_report_is_small_and_loads_plotly_of_the_installed_version(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, text = run_cli("report", str(SAMPLES / "examples/inductor_graph_break"), "-o", str(out), "--plotly", "cdn")
    assert code == 0, text
    page = out.read_text(encoding="utf-8")
    tags = re.findall(r"<script[^>]+src=\"([^\"]+)\"", page)
    assert len(tags) == 1 and plotlyjs.installed_version() in tags[0]
    assert "plotly.js basic" not in page and len(page.encode()) < 1_000_000
    code, text = run_cli("report", str(SAMPLES / "examples/inductor_graph_break"), "-o", str(out), "--plotly", "svg")
    assert code == 2 and "'svg' is not one of 'inline', 'cdn'" in text


def test_cpu_bucket_chart_has_no_empty_parts() -> None:
    cpu = pd.DataFrame({"rank": [0, 0, 1], "bucket": [0, 1, 0], "dur_us": [900.0, 800.0, 700.0],
                        "exposed_us": [None] * 3, "busbw_gbps": [None] * 3})
    fig = bucket_figure(cpu)
    names = [t.name for t in fig.data]
    assert names == ["rank 0 duration", "rank 1 duration"]  # no legend entry without bars
    assert "yaxis2" not in fig.layout  # no empty bandwidth chart
    assert "exposed part unknown" in fig.layout.annotations[0].text
    gpu = cpu.assign(exposed_us=[10.0, 0.0, 5.0], busbw_gbps=[100.0, 90.0, 80.0])
    fig = bucket_figure(gpu)
    assert len(fig.data) == 6 and "yaxis2" in fig.layout
