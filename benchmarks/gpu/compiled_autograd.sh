#!/usr/bin/env bash
# The compiled-autograd / replicate / tensor-parallel runs of sample_traces/README.md, in one batch.
# GPU (2-GPU host, repo root):  OUT=/some/dir bash benchmarks/gpu/compiled_autograd.sh
# CPU rehearsal (gloo, tiny):   OUT=/tmp/ca DEVICE=cpu bash benchmarks/gpu/compiled_autograd.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
DEVICE=${DEVICE:-cuda}
PY=${PYTHON:-python3}
TK="$PY -m tracekit"
if [ "$DEVICE" = cpu ]; then
  SIZE="--width 128 --depth 4 --batch-size 4"; STEPS="--warmup 2 --steps 2 --profile-wait 0 --profile-warmup 1 --profile-steps 1"
  TSIZE="--width 64 --depth 2 --seq-len 16 --heads 4 --batch-size 2"; BUCKET="--bucket-cap-mb 1 --inductor-ddp-bucket-mb 1"
else
  # 8 x Linear(2048, 2048) fp32: 134 MB of gradients per step, 25 MB DDP buckets
  SIZE="--width 2048 --depth 8 --batch-size 128"; STEPS="--warmup 4 --steps 10 --profile-wait 1 --profile-warmup 1 --profile-steps 2"
  TSIZE="--width 1024 --depth 4 --seq-len 256 --heads 16 --batch-size 8"; BUCKET="--bucket-cap-mb 25"
fi
run() {  # run NAME LIMIT_S ARGS...: one tracekit command with a time limit, logged
  name=$1; limit=$2; shift 2
  echo "=== $name: $*"; start=$(date +%s)
  timeout "$limit" "$@" 2>&1 | grep -v '^USDT' | tail -n 25
  echo "=== $name rc=${PIPESTATUS[0]} took $(( $(date +%s) - start ))s"
}
{
  $PY -c "import torch; print('torch', torch.__version__, 'gpus', torch.cuda.device_count())"
  # DDPOptimizer against the python reducer (each inductor fusion pass) and replicate(), same model
  run compare 330 $TK profile --nproc 2 --device "$DEVICE" --model toy $SIZE $BUCKET $STEPS \
      --compare inductor,replicate:inductor:python_reducer:coalesced,inductor:python_reducer:coalesced,inductor:python_reducer:concat,inductor:python_reducer:none,replicate:inductor \
      --out "$OUT/ca"
  run tp2_replicate 90 $TK profile --nproc 2 --device "$DEVICE" --tp 2 --replicate --model transformer $TSIZE $STEPS \
      --out "$OUT/ca/tp2-replicate-transformer"
  run nocompiled_fwd 80 $TK profile --nproc 2 --device "$DEVICE" --model toy $SIZE $BUCKET $STEPS --dynamo inductor \
      --optimize-ddp python_reducer_without_compiled_forward --inductor-ddp-fusion concat --out "$OUT/ca/inductor-python_reducer_without_compiled_forward-concat"
  for d in "$OUT"/ca/*/; do
    [ -f "$d/run.json" ] && $TK analyze "$d" > "$d/analyze.txt" 2>&1
  done
  du -sh "$OUT"/ca/* 2>/dev/null
} 2>&1 | tee "$OUT/log.txt"
tar czf "$OUT/ca.tar.gz" -C "$OUT" ca && rm -rf "$OUT/ca"
