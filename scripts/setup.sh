#!/usr/bin/env bash
# Create .venv (or reuse it) and install tracekit with its test dependencies.
# torch: an already-importable torch is kept (use TRACEKIT_PYTHON=/path/to/python
# with --system-site-packages semantics, or pre-install it in .venv); otherwise
# the CPU build torch==2.13.0 is installed, never a CUDA build picked by pip.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${TRACEKIT_PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv ${TRACEKIT_VENV_FLAGS:-} .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "setup: torch not found, installing the CPU build torch==2.13.0" >&2
  .venv/bin/python -m pip install -q "torch==2.13.0"
fi
.venv/bin/python -m pip install -q -e ".[test]"
# headless Chromium for the HTML report's browser test (Debian packages; the test skips without them;
# TRACEKIT_NO_BROWSER=1 skips this step)
if [ -z "${TRACEKIT_NO_BROWSER:-}" ] && ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium and chromium-driver (apt-get) for the browser test" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } \
      >/dev/null 2>&1 || echo "setup: could not install chromium; the browser test will be skipped" >&2
  else
    echo "setup: no chromium/chromedriver (install them as root: apt-get install chromium chromium-driver);" \
         "the browser test will be skipped" >&2
  fi
fi
.venv/bin/python -c "import torch, tracekit; print(f'setup: tracekit {tracekit.__version__}, torch {torch.__version__}')"
