#!/usr/bin/env bash
# The held-out check of the contention model in bucket and hook scenarios (tracekit/replay/contention.py,
# `readjust`): GPU-bound DDP steps over NCCL on a 2-GPU host, each shape profiled at two bucket caps (what
# `tracekit whatif` predicts from, either way) and its variants timed in one job, steps alternating
# (benchmarks/gpu/paired_ddp_variants.py: the paired truth). Recorded after the model was set on the committed 4 x H200
# runs, so held out.
# Usage (device machine with 2 GPUs, repo root): OUT=/some/dir DEADLINE=480 bash benchmarks/gpu/contention_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; DEADLINE=${DEADLINE:-480}; ROUNDS=${ROUNDS:-40}; R="$OUT/contention"; mkdir -p "$R"
TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-steps 3 --timeout 120 --nproc 2"
SHAPES[toy2048big]="--model toy --width 2048 --depth 16 --batch-size 2048"
declare -A CAPS=([gpubound]="25 100" [tfmbig]="25 100" [toy2048big]="25 100")
declare -A VARIANTS=(
  [gpubound]="bucket-cap-mb=25 bucket-cap-mb=100 bucket-cap-mb=200 bucket-cap-mb=400 comm-hook=bf16"
  [tfmbig]="bucket-cap-mb=25 bucket-cap-mb=1 bucket-cap-mb=5 bucket-cap-mb=100 comm-hook=bf16"
  [toy2048big]="bucket-cap-mb=25 bucket-cap-mb=5 bucket-cap-mb=100 bucket-cap-mb=200 comm-hook=bf16")
{
  host_facts
  for shape in gpubound tfmbig toy2048big; do
    opts=${SHAPES[$shape]}
    for cap in ${CAPS[$shape]}; do
      left "profile $shape cap$cap" || break 2
      timeout 150 $TK $opts --bucket-cap-mb "$cap" --out "$R/$shape/cap$cap" 2>&1 | grep -v "^USDT" | tail -2
    done
    left "paired $shape" || break
    vs=(); for v in ${VARIANTS[$shape]}; do vs+=(--variant "$v"); done
    timeout 200 $TR --nproc-per-node 2 benchmarks/gpu/paired_ddp_variants.py --device cuda $opts --ranks 2 --rounds "$ROUNDS" \
        --warmup 5 "${vs[@]}" --json "$R/$shape/paired.jsonl" 2>&1 | grep -v "^USDT" | grep "paired change\|Error\|error" | head -8
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_contention.txt"
tar czf "$OUT/contention.tar.gz" -C "$OUT" contention && rm -rf "$R"
