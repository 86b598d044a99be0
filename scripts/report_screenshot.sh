#!/usr/bin/env bash
# Regenerate the pictures of `tracekit report` in README.md and the docs, from the HTML report of a
# committed sample run rendered by headless Chromium (Debian's chromium; chromium-driver and selenium
# for the timeline picture):
#   docs/report_inductor_graph_break.png  the page
#   docs/img/report_timeline.png          the timeline of one step (2 ranks)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m tracekit report sample_traces/examples/inductor_graph_break -o "$tmp/report.html"
chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1800 \
  --virtual-time-budget=10000 --screenshot=docs/report_inductor_graph_break.png "file://$tmp/report.html" 2>/dev/null
echo "wrote docs/report_inductor_graph_break.png"
"$PY" - "$tmp/report.html" <<'PYEOF'
import sys
from pathlib import Path
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

opts = webdriver.ChromeOptions()
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,1200"):
    opts.add_argument(a)
drv = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=opts)
try:
    drv.get(Path(sys.argv[1]).resolve().as_uri())
    WebDriverWait(drv, 30).until(lambda d: d.execute_script(
        "return document.querySelectorAll('#timeline-0 .barlayer .point').length > 0"))
    el = drv.find_element("id", "timeline-0")
    drv.execute_script("arguments[0].scrollIntoView()", el)
    Path("docs/img/report_timeline.png").write_bytes(el.screenshot_as_png)
    print("wrote docs/img/report_timeline.png")
finally:
    drv.quit()
PYEOF
