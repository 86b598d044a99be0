"""``tracekit report`` / ``analyze --html``: the page is self-contained, complete and inert for hostile names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import generators
from tests.explain_builders import manifest_for, write_run
from tests.tracebuilder import TraceBuilder
from tracekit.cli import main

#: a kernel name that tries to end the figure's <script>, and one with an ANSI colour escape
SCRIPT_NAME = "</script><script>window.__pwned=1</script>"
ANSI_NAME = "\x1b[31mred_kernel\x1b[0m"
TAG_NAME = '<img src=x onerror="window.__pwned=2">'


def hostile_run(folder: Path) -> Path:
    """Two ranks whose kernel, collective and process-group names are markup and escape codes."""
    folder.mkdir(parents=True, exist_ok=True)
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.step(1, 0, 1000)
        tb.kernel(SCRIPT_NAME, 10, 30, launch_at_us=5)
        tb.kernel(ANSI_NAME, 50, 30, launch_at_us=6)
        tb.collective(TAG_NAME, 60, 40, 8, 1000, pg=TAG_NAME, kernel_name=SCRIPT_NAME + "nccl")
        tb.write(folder / f"rank{r}.trace.json")
    return folder


def run_cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def scripts_of(page: str) -> list[str]:
    return re.findall(r"<script\b[^>]*>", page)


def test_report_is_self_contained(tmp_path: Path) -> None:
    run = write_run(tmp_path / "split", "split", manifest=manifest_for("split"))
    out = tmp_path / "r.html"
    code, text = run_cli("report", str(run), "-o", str(out))
    assert code == 0, text
    page = out.read_text(encoding="utf-8")
    # plotly.js inline, nothing fetched at view time
    assert "plotly.js" in page[:6_000_000] and not re.search(r"<(script|link)[^>]+(src|href)=", page)
    assert 'id="timeline-0"' in page and 'id="breakdown-0"' in page and 'id="buckets-0"' in page
    assert "rank 0" in page and "rank 1" in page
    assert page.count("<table class=\"sortable\">") >= 5


def test_hostile_names_render_inert(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, text = run_cli("report", str(hostile_run(tmp_path / "run")), "-o", str(out))
    assert code == 0, text
    page = out.read_text(encoding="utf-8")
    # no script element beyond ours: plotly.js, one per figure (timeline, breakdown; no buckets), the page's own
    assert len(scripts_of(page)) == 1 + 2 + 1, scripts_of(page)
    assert "window.__pwned=1</script>" not in page and "<img src=x" not in page
    assert "\x1b" not in page  # ANSI escapes are shown as text, never emitted
    # the names are still there, as visible text
    assert "&lt;img src=x onerror=&#34;window.__pwned=2&#34;&gt;" in page  # table cell (pg / collective name)
    assert "\\\\x1b[31mred_kernel" in page  # plotly hover text (JSON-escaped backslash)
    assert "longest: &lt;\\u002fscript&gt;&lt;script&gt;window.__pwned=1" in page  # plotly hover text


def test_two_runs_side_by_side(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", "split", manifest=manifest_for("split"))
    b = write_run(tmp_path / "b", "nosplit", manifest=manifest_for("nosplit"))
    out = tmp_path / "cmp.html"
    code, text = run_cli("report", str(a), str(b), "--label", "split", "--label", "no split", "-o", str(out))
    assert code == 0, text
    page = out.read_text(encoding="utf-8")
    assert "repeat(2, minmax(0, 1fr))" in page
    assert 'id="timeline-0"' in page and 'id="timeline-1"' in page
    assert "tracekit report: split vs no split" in page
    # nosplit: every allreduce starts after backward, and the finding links to the buckets on the timeline
    assert "allreduce_after_backward" in page
    assert re.search(r'<a class="focus" href="#timeline-1"[^>]*>show on the timeline \(rank \d, buckets\)', page)


def test_analyze_html(tmp_path: Path) -> None:
    out = tmp_path / "a.html"
    code, text = run_cli("analyze", str(write_run(tmp_path / "e", "eager")), "--html", str(out))
    assert code == 0, text
    assert "Per-rank breakdown" in text  # the text report still goes to stdout
    assert 'id="timeline-0"' in out.read_text(encoding="utf-8")


def test_report_bad_input_is_one_line(tmp_path: Path) -> None:
    run = write_run(tmp_path / "e", "eager")
    code, text = run_cli("report", str(run), "--step", "9", "-o", str(tmp_path / "x.html"))
    assert code == 2 and text.strip().splitlines() == ["error: --step 9: no such profiled step (the traces have 1, 2)"]
    code, text = run_cli("report", str(tmp_path / "missing"), "-o", str(tmp_path / "x.html"))
    assert code == 2 and text.startswith("error: ") and "Traceback" not in text
    code, text = run_cli("report", str(run), str(run), str(run))
    assert code == 2 and "one or two runs" in text
    assert not (tmp_path / "x.html").exists()


def test_cpu_only_run_has_no_device_timeline(tmp_path: Path) -> None:
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2, backend="gloo")
        tb.step(1, 0, 1000)
        tb.collective("allreduce", 100, 50, 90, 1000)
        tb.annotation("gloo:all_reduce", 100, 50)
        tb.write(tmp_path / f"rank{r}.trace.json")
    out = tmp_path / "cpu.html"
    code, text = run_cli("report", str(tmp_path), "-o", str(out))
    assert code == 0, text
    page = out.read_text(encoding="utf-8")
    assert "No GPU activity in these traces (CPU-only run)" in page and 'id="timeline-0"' not in page
    assert "device-side metrics" in page  # the analysis note is shown
    # each section's note, as the text report prints it under the table (the page dropped them)
    txt = run_cli("analyze", str(tmp_path))[1]
    notes = [ln[len("note: "):] for ln in txt.splitlines() if ln.startswith("note: empty in every row")]
    assert notes and all(f'<p class="note">note: {n}</p>' in page for n in notes)


def test_crowded_lanes_are_drawn_simplified(tmp_path: Path) -> None:
    from tracekit.report import html

    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.step(1, 0, 100_000)
        for i in range(html.MAX_BARS + 500):  # disjoint 1 µs kernels, 1 µs apart
            tb.kernel("k", 10 + 2 * i, 1, launch_at_us=5 + 0.001 * i)
        tb.write(tmp_path / f"rank{r}.trace.json")
    out = tmp_path / "big.html"
    code, text = run_cli("report", str(tmp_path), "-o", str(out))
    assert code == 0, text
    page = out.read_text(encoding="utf-8")
    n = html.MAX_BARS + 500
    assert f"rank 0, compute: {n} bars drawn as {html.MAX_BARS}" in page
    assert f"rank 1, idle: {n - 1} bars drawn as {html.MAX_BARS}" in page


def test_html_renderer_consumes_the_registry(tmp_path: Path) -> None:
    from tracekit.analyses import registry
    from tracekit.runner.pipeline import load_and_analyze
    from tracekit.errors import ConfigError
    from tracekit.report.html import HTMLRenderer
    from tracekit.report.render import Renderer

    traces, res = load_and_analyze([str(write_run(tmp_path / "s", "split", manifest=manifest_for("split")))])
    page = HTMLRenderer(traces, label="s").render(res)
    assert isinstance(HTMLRenderer(), Renderer) and HTMLRenderer.extension == "html"
    # every non-empty table of the result but findings (own section) has a block, in the result's order
    ids = re.findall(r'<h3 id="table-0-([a-z_]+)">', page)
    assert ids == [n for n in res.tables if n != "findings" and len(res.tables[n])]
    assert res.tables["graph_regions"].empty  # no run.json graphs section: an empty table, no block
    # header tooltips are the registry's column definitions
    col = next(c for c in registry.tables()["ranks"].columns if c.name == "comm_total_us")
    assert f'<th title="{col.doc} [{registry.UNITS[col.unit]}]">comm_total_us</th>' in page
    # without traces: everything but the timeline
    bare = HTMLRenderer(label="s").render(res)
    assert 'id="timeline-0"' not in bare and 'id="breakdown-0"' in bare and "needs the loaded traces" in bare
    # one table only, and an unknown one is a one-line error
    only = HTMLRenderer(traces, table="buckets").render(res)
    assert re.findall(r'<h3 id="table-0-([a-z_]+)">', only) == ["buckets"]
    with pytest.raises(ConfigError, match="nope"):
        HTMLRenderer(traces, table="nope").render(res)


def test_many_ranks_draw_the_shown_ranks_and_tables_keep_all(tmp_path: Path) -> None:
    # 40 copies of a real GPU window (the many-ranks benchmark's input): more than TEXT_MAX_RANKS, so the
    # engine path runs (events stay in the workers) and the page decodes only the ranks it draws
    generators.build(tmp_path / "many", 40, 40_000)
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["analyze", str(tmp_path / "many"), "-o", str(tmp_path / "r.txt"),
                                  "--html", str(out)])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert "the timeline and the charts show 16 of 40 ranks" in page
    # one timeline subplot per drawn rank, titled "rank N": ranks 0-15 only
    lanes = {int(x) for x in re.findall(r'"title":\{"text":"rank (\d+)"\}', page)}
    assert lanes == set(range(16))
    text = (tmp_path / "r.txt").read_text()
    assert "rows of 16 of 40 ranks shown" in text
    # the tables' summaries are the text report's: the shown ranks' rows, its note, the spread over all 40
    ranks_part = page[page.index('id="table-0-ranks"'):page.index('<details', page.index('id="table-0-ranks"'))]
    shown_rows = re.findall(r"<tr><td data-v=\"(\d+)\">", ranks_part)
    assert [int(x) for x in shown_rows[:16]] == list(range(16))
    assert "note: rows of 16 of 40 ranks shown" in ranks_part
    assert "spread over all 40 ranks" in ranks_part
    assert page.count("note: rows of 16 of 40 ranks shown") == text.count("note: rows of 16 of 40 ranks shown")
    # ... and the collapsed full table below keeps every rank
    full = page[page.index("full table <code>ranks</code>"):]
    full = full[:full.index("</details>")]
    assert "40 rows" in full and len(re.findall(r"<tr><td", full)) == 40
