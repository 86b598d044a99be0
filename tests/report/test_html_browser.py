"""The HTML report in a real browser: headless Chromium (Debian's ``chromium`` + ``chromium-driver``,
installed by ``scripts/setup.sh --with-browser``, and by CI's ``.ci/run``) driven by selenium.

Skipped, with the reason, when the browser, its driver or selenium is missing. Nothing is
downloaded: the driver is given by path, so selenium's own driver manager never runs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.test_html import SCRIPT_NAME, TAG_NAME, hostile_run, run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
DRIVER = shutil.which("chromedriver")
#: plotly draws the title of y axis N as <text class="yNtitle">
YTITLES = "text[class^='y'][class$='title']"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("headless Chromium test needs Debian's chromium and chromium-driver packages, which are "
                    "absent (bash scripts/setup.sh --with-browser installs them, as root)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()


def open_page(drv: Any, page: Path) -> list[dict[str, Any]]:
    """Load the page, wait until the first timeline has drawn its rank lane titles (as many as the page
    says it has lanes; a timeout fails the test), return the console messages."""
    from selenium.webdriver.support.ui import WebDriverWait

    drv.get_log("browser")  # drop messages of earlier pages
    drv.get(page.resolve().as_uri())
    WebDriverWait(drv, 30).until(lambda d: d.execute_script(
        "const w = document.querySelector('.timeline'), YTITLES = arguments[0]; return w !== null && "
        "w.querySelectorAll('#timeline-0 ' + YTITLES).length === Number(w.dataset.lanes)", YTITLES))
    return drv.get_log("browser")


def lane_titles(drv: Any, fig: str) -> list[str]:
    """The drawn y-axis titles of a figure (plotly: ``text.ytitle``, ``text.y2title``, ...)."""
    return drv.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0] + ' ' + arguments[1])).map(e => e.textContent)",
        f"#{fig}", YTITLES)


def test_sample_report_in_chromium(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, text = run_cli("report", str(SAMPLES / "examples/inductor_graph_break"), "-o", str(out))
    assert code == 0, text
    logs = open_page(browser, out)
    assert [m for m in logs if m["level"] == "SEVERE"] == []
    assert lane_titles(browser, "timeline-0") == ["rank 0", "rank 1"]  # one lane group per rank, drawn
    # every lane group has its bars: the compute lane of each rank holds drawn SVG bars
    bars = browser.execute_script("return document.querySelectorAll('#timeline-0 .barlayer .point').length")
    assert bars > 100
    # the lean bundle draws it: a screenshot of the timeline is a real picture, not a blank box
    assert "plotly.js basic" in out.read_text(encoding="utf-8")[:2000] or "(full bundle)" in out.read_text()[:2000]
    el = browser.find_element("id", "timeline-0")
    browser.execute_script("arguments[0].scrollIntoView()", el)
    png = el.screenshot_as_png
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")  # PNG IHDR
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and width > 800 and height > 200, (width, height)
    assert len(png) > 20_000, len(png)  # bars, labels and axes: a blank box compresses to a few KB
    # a finding link zooms the timeline to its part and highlights it
    before = browser.execute_script("return document.getElementById('timeline-0').layout.xaxis.range.slice()")
    link = browser.find_element("css selector", "a.focus")
    x0, x1 = float(link.get_attribute("data-x0")), float(link.get_attribute("data-x1"))
    link.click()
    after = browser.execute_script("return document.getElementById('timeline-0').layout.xaxis.range.slice()")
    shapes = browser.execute_script(
        "return document.getElementById('timeline-0').layout.shapes.filter(s => s.name === 'focus').length")
    assert after != before and after[0] <= x0 and after[1] >= x1 and shapes == 1
    # tables sort on a header click (numeric, ascending then descending)
    col = browser.execute_script("""
        const t = document.querySelector('table.sortable'); const th = t.querySelectorAll('th');
        const i = Array.from(th).findIndex(h => h.textContent === 'wait_total_us'); th[i].click(); th[i].click();
        return Array.from(t.tBodies[0].rows).map(r => Number(r.cells[i].dataset.v));""")
    assert len(col) == 2 and col == sorted(col, reverse=True)


def test_hostile_names_inert_in_chromium(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "h.html"
    code, text = run_cli("report", str(hostile_run(tmp_path / "run")), "-o", str(out))
    assert code == 0, text
    logs = open_page(browser, out)
    assert [m for m in logs if m["level"] == "SEVERE"] == []
    assert browser.execute_script("return window.__pwned === undefined && !document.querySelector('img')")
    assert lane_titles(browser, "timeline-0") == ["rank 0", "rank 1"]
    # the kernel name shows as literal text in the hover label
    label = browser.execute_script("""
        const gd = document.getElementById('timeline-0');
        Plotly.Fx.hover(gd, [{curveNumber: 0, pointNumber: 0}]);
        return gd.querySelector('.hoverlayer').textContent;""")
    assert SCRIPT_NAME in label
    cells = browser.execute_script("return Array.from(document.querySelectorAll('table.sortable td'), e => e.textContent)")
    assert TAG_NAME in cells  # collective / process-group name, as text


def test_whatif_section_draws_in_chromium(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "w.html"
    code, text = run_cli("analyze", str(SAMPLES / "whatif/h100_graph_break" / "toy-cpubound-break"), "--whatif",
                         "--html", str(out), "-o", str(tmp_path / "o.txt"))
    assert code == 0, text
    logs = open_page(browser, out)
    assert [m for m in logs if m["level"] == "SEVERE"] == []
    # the scenario bar and the window-vs-predicted timeline are drawn SVG bars, not empty boxes
    bars = browser.execute_script(
        "return ['whatif-scenarios-0', 'whatif-timeline-0'].map("
        "id => document.querySelectorAll('#' + id + ' .barlayer .point').length)")
    # two scenarios: the graph break removed, and CUDA graphs on this launch-bound compiled step
    assert bars[0] == 2 and bars[1] > 10, bars
    el = browser.find_element("id", "whatif-timeline-0")
    browser.execute_script("arguments[0].scrollIntoView()", el)
    png = el.screenshot_as_png
    (tmp_path / "whatif.png").write_bytes(png)
    assert len(png) > 10_000, len(png)


def test_compute_charts_draw_in_chromium(browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.explain_builders import manifest_for, write_run
    from tests.report.test_compute_figures import MODULES, OPS, PEAKS
    from tracekit.report import html
    from tracekit.runner.pipeline import load_and_analyze

    traces, res = load_and_analyze([str(write_run(tmp_path / "s", "split", manifest=manifest_for("split")))])
    monkeypatch.setattr(html, "run_tables", lambda res, only=None: [])  # ops/modules are set by hand
    res.set_table("ops", OPS)
    res.set_table("modules", MODULES)
    res.meta["peaks"] = PEAKS
    out = tmp_path / "c.html"
    out.write_text(html.HTMLRenderer(traces, label="s").render(res), encoding="utf-8")
    logs = open_page(browser, out)
    assert [m for m in logs if m["level"] == "SEVERE"] == []
    # rank 0: two plotted ops (the view has no FLOPs), two roofs (the GEMM's bf16 peak, the add's FP32 one); five
    # modules, nested in three rows
    drawn = browser.execute_script(
        "return [document.querySelectorAll('#roofline-0 .scatterlayer .point').length, "
        "document.querySelectorAll('#roofline-0 .scatterlayer .js-line').length, "
        "document.querySelectorAll('#modules-0 .barlayer .point').length, "
        "document.getElementById('roofline-0')._fullLayout.xaxis.type]")
    assert drawn == [2, 2, 5, "log"], drawn
    png = browser.find_element("id", "roofline-0").screenshot_as_png
    assert len(png) > 10_000, len(png)
