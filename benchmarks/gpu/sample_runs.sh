#!/usr/bin/env bash
# The GPU runs recorded in docs/gpu-results.md / sample_traces/README.md, in one batch for a 2-GPU host.
# Usage (device machine, repo root): OUT=/some/dir NPROC=2 bash benchmarks/gpu/sample_runs.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
TK="python3 -m tracekit"
NPROC=${NPROC:-2}
WS=1; n=2; while [ $n -le $NPROC ]; do WS="$WS,$n"; n=$((n*2)); done
MODEL="--model toy --width 4096 --depth 16 --batch-size 256 --bucket-cap-mb 25"
{
  python3 -c "import torch; print('torch', torch.__version__, 'gpus', torch.cuda.device_count())"
  echo "### compare"
  time $TK profile --nproc $NPROC $MODEL --warmup 5 --steps 20 --compare eager,inductor,inductor:no_optimization --out "$OUT/cmp"
  echo "### analyze timing ($NPROC ranks)"
  time $TK analyze "$OUT/cmp/inductor" --per-step > "$OUT/analyze_inductor.txt"
  $TK analyze "$OUT/cmp/inductor-no_optimization" > "$OUT/analyze_nosplit.txt"
  $TK diff "$OUT/cmp/inductor" "$OUT/cmp/inductor-no_optimization" > "$OUT/diff.txt"
  echo "### bench ddp"
  time $TK bench ddp --device cuda --model toy --width 4096 --depth 16 --batch-size 256 --world-sizes $WS \
     --warmup 5 --iters 20 --json "$OUT/bench_toy.json"
  time $TK bench ddp --device cuda --model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 16 \
     --world-sizes $WS --warmup 5 --iters 20 --json "$OUT/bench_transformer.json"
  echo "### gpu tests"
  python3 -m pytest -q -m gpu -p no:cacheprovider tests/ 2>&1 | tail -15
} 2>&1 | tee "$OUT/log.txt"
tar czf "$OUT/cmp.tar.gz" -C "$OUT" cmp && rm -rf "$OUT/cmp"
