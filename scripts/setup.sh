#!/usr/bin/env bash
# Create .venv (or reuse it) and install tracekit with its test dependencies, inside .venv only.
#
#   bash scripts/setup.sh                 # .venv + tracekit[test]; nothing outside the project changes
#   bash scripts/setup.sh --with-browser  # also apt-get install chromium chromium-driver (root, Debian),
#                                         # for the HTML report's browser test (skipped without them)
#
# torch: an importable torch in .venv is kept. Otherwise torch==$TORCH_VERSION is installed from the
# configured package index: on Linux x86_64 the public PyPI wheel is the CUDA build (it pulls ~3 GB of
# nvidia-* packages). For a CPU-only machine, take the CPU wheel from PyTorch's index:
#   TRACEKIT_TORCH_INDEX=https://download.pytorch.org/whl/cpu bash scripts/setup.sh
# To reuse a torch you already have (a CUDA build, say): TRACEKIT_VENV_FLAGS=--system-site-packages.
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_BROWSER=0
for arg in "$@"; do
  case "$arg" in
    --with-browser) WITH_BROWSER=1 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done
PY=${TRACEKIT_PYTHON:-python3}
TORCH_VERSION=${TRACEKIT_TORCH_VERSION:-2.13.0}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv ${TRACEKIT_VENV_FLAGS:-} .venv
fi
# pip's own upgrade notice is noise here; keep the venv's pip unless it is too old for pyproject installs
.venv/bin/python -m pip install -q --disable-pip-version-check "pip>=23"
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  if [ -n "${TRACEKIT_TORCH_INDEX:-}" ]; then
    echo "setup: installing torch==$TORCH_VERSION from $TRACEKIT_TORCH_INDEX" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check --index-url "$TRACEKIT_TORCH_INDEX" "torch==$TORCH_VERSION"
  else
    echo "setup: installing torch==$TORCH_VERSION from the configured index (on Linux x86_64 PyPI's wheel is" \
         "the CUDA build, several GB; CPU-only: TRACEKIT_TORCH_INDEX=https://download.pytorch.org/whl/cpu)" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check "torch==$TORCH_VERSION"
  fi
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
if [ "$WITH_BROWSER" = 1 ]; then
  if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "setup: chromium and chromedriver already installed" >&2
  elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: --with-browser: apt-get install chromium chromium-driver (system packages)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "setup: --with-browser needs root and apt-get (or install chromium and chromedriver yourself)" >&2
    exit 2
  fi
elif ! { command -v chromium || command -v chromium-browser; } >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  echo "setup: no chromium/chromedriver: the HTML report's browser test will be skipped" \
       "(bash scripts/setup.sh --with-browser installs them, as root on Debian)" >&2
fi
.venv/bin/python -c "import torch, tracekit; print(f'setup: tracekit {tracekit.__version__}, torch {torch.__version__} ({\"CUDA \" + torch.version.cuda if torch.version.cuda else \"CPU build\"})')"
