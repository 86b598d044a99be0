#!/usr/bin/env bash
# Regenerate docs/report_inductor_graph_break.png, the picture of `tracekit report` in README.md and the docs:
# the HTML report of a committed sample run, rendered by headless Chromium (Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m tracekit report sample_traces/inductor_graph_break -o "$tmp/report.html"
chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1800 \
  --virtual-time-budget=10000 --screenshot=docs/report_inductor_graph_break.png "file://$tmp/report.html" 2>/dev/null
echo "wrote docs/report_inductor_graph_break.png"
