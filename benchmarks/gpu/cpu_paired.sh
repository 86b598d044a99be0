#!/usr/bin/env bash
# DDP bucket, first-bucket and world-size variants on a GPU host's idle CPUs (CPU/gloo), the truth timed in
# one job with the variants' steps alternating (benchmarks/gpu/paired_ddp_variants.py), the prediction from a
# profiled baseline run (cap 25 MiB, 2 ranks) on the same cores. Two sets back to back.
# Usage (device machine, repo root): OUT=/some/dir [PIN=0-7] [ROUNDS=30] [SETS="a b"] bash benchmarks/gpu/cpu_paired.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1
OUT=${OUT:-gpu_out}; mkdir -p "$OUT/runs"
pin=(); [ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
shape=(--width 1024 --depth 8 --batch-size 64)
{
  python3 -c "import torch, os; print('torch', torch.__version__, 'cpus', os.cpu_count())"; uptime
  for set in ${SETS:-a b}; do
    echo "### set $set baseline profile"; start=$(date +%s)
    "${pin[@]}" python3 -m tracekit profile --device cpu --nproc 2 --bucket-cap-mb 25 "${shape[@]}" --warmup 3 \
      --steps 30 --profile-wait 0 --profile-warmup 1 --profile-steps 3 --timeout 300 --out "$OUT/runs/$set/cap25" 2>&1 | tail -1
    echo "took $(( $(date +%s) - start )) s"; start=$(date +%s)
    echo "### set $set paired variants"
    "${pin[@]}" timeout 400 python3 -m torch.distributed.run --standalone --nproc-per-node 4 benchmarks/gpu/paired_ddp_variants.py \
      "${shape[@]}" --rounds "${ROUNDS:-30}" --variant bucket-cap-mb=25 --variant bucket-cap-mb=25 \
      --variant bucket-cap-mb=1 --variant bucket-cap-mb=5 --variant bucket-cap-mb=100 --variant first-bucket-cap-mb=5 \
      --variant world-size=1 --variant world-size=4 --json "$OUT/runs/$set/cap25/paired.jsonl" 2>&1 | grep -v "^W1\|OMP_NUM\|\*\*\*\*"
    echo "took $(( $(date +%s) - start )) s"
  done
  uptime
} 2>&1 | tee "$OUT/log.txt"
(cd "$OUT" && tar czf runs.tar.gz runs && rm -rf runs)
