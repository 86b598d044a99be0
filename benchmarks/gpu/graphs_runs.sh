#!/usr/bin/env bash
# The graph pages on a GPU host: one `--ddp --dynamo inductor --torchviz` run of a real model (torchvision resnet50)
# and of the toy MLP with a graph break, their HTML reports and (where chromium is installed) a screenshot
# of each report's "Compiled graphs" section (benchmarks/gpu/graphs_screenshot.py).
#
# Usage (device machine, repo root): OUT=/some/dir NPROC=1 bash benchmarks/gpu/graphs_runs.sh
# torchviz is pure Python; the device cannot reach PyPI, so carry the wheels: on the dev machine
#   pip download --no-deps -d .whl torchviz==0.0.3 graphviz    (.whl/ is git-ignored; carry it: carry=[".whl"])
# and this script installs them from there (--no-index). Graphviz's `dot` is usually absent on the device:
# the run then writes autograd.dot with a note; render it afterwards with `dot -Tsvg autograd.dot -o autograd.svg`.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
NPROC=${NPROC:-1}
TK="${PYTHON:-python3} -m tracekit"
# DRY=1: the same steps on CPU with tiny models (checks the script, not the GPU)
if [ "${DRY:-0}" = 1 ]; then
  DEV="--device cpu --nproc 2"; BIG="--model transformer --width 128 --depth 4 --seq-len 32 --batch-size 2 --dynamo aot_eager"
  TOY="--model toy --width 512 --depth 4 --batch-size 4 --bucket-cap-mb 1 --graph-break-at 1 --dynamo aot_eager"
  STEPS="--warmup 2 --steps 2 --profile-wait 0 --profile-warmup 1 --profile-steps 1"
else
  DEV="--device cuda --nproc $NPROC"; BIG="--model resnet50 --batch-size 64 --dynamo inductor"
  TOY="--model toy --width 4096 --depth 16 --batch-size 256 --bucket-cap-mb 25 --graph-break-at 7 --dynamo inductor"
  STEPS="--warmup 5 --steps 10 --profile-steps 2"
fi
{
  ${PYTHON:-python3} -c "import torch; print('torch', torch.__version__, 'gpus', torch.cuda.device_count())"
  if ! ${PYTHON:-python3} -c "import torchviz" 2>/dev/null; then
    WHEELS=${VIZ_WHEELS:-.whl}
    [ -d "$WHEELS" ] && ${PYTHON:-python3} -m pip install -q --no-index --find-links "$WHEELS" torchviz graphviz
  fi
  ${PYTHON:-python3} -c "import torchviz; print('torchviz ok')" || echo "torchviz missing: --torchviz will be refused"
  echo "### resnet50, DDPOptimizer (25 MiB buckets), inductor, torchviz"
  time $TK profile $DEV $BIG $STEPS --torchviz --out "$OUT/resnet50"
  echo "### toy MLP 4096 x 16 with a graph break after block 7, 25 MiB buckets"
  time $TK profile $DEV $TOY $STEPS --torchviz --out "$OUT/toy_break"
  for r in resnet50 toy_break; do
    [ -f "$OUT/$r/run.json" ] || continue
    $TK analyze "$OUT/$r" --table graph_regions > "$OUT/${r}_graph_regions.txt"
    $TK report "$OUT/$r" -o "$OUT/$r/report.html"
    ls "$OUT/$r/graphs" | head -50 > "$OUT/${r}_graph_files.txt"
    # headless Chromium + selenium where installed (else run it on the fetched report)
    ${PYTHON:-python3} benchmarks/gpu/graphs_screenshot.py "$OUT/$r/report.html" "$OUT/${r}_report.png" 2>/dev/null \
      || echo "no screenshot of $r (selenium/chromium missing): run benchmarks/gpu/graphs_screenshot.py on the report"
  done
} 2>&1 | tee "$OUT/log.txt"
for r in resnet50 toy_break; do
  [ -d "$OUT/$r" ] && tar czf "$OUT/$r.tar.gz" -C "$OUT" "$r" && rm -rf "$OUT/$r"
done
