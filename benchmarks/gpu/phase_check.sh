#!/usr/bin/env bash
# The replay's multi-rank lean, phase by phase: per CPU-bound shape a 2-rank and a 1-rank DDP run profiled (what
# `tracekit whatif` predicts from) and the unprofiled phases of 1 and 2 ranks timed in one job, steps alternating
# (benchmarks/gpu/phase_times.py). Usage (device machine with 2 GPUs, repo root):
#   OUT=/some/dir DEADLINE=480 bash benchmarks/gpu/phase_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; DEADLINE=${DEADLINE:-480}; ROUNDS=${ROUNDS:-40}; R="$OUT/phases"; mkdir -p "$R"
TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-steps 3 --timeout 120 --bucket-cap-mb 25"
{
  host_facts
  for shape in toy4096 tfm1024 gpt2bf16; do
    opts=${SHAPES[$shape]}
    for n in 2 1; do
      left "profile $shape ws$n" || break 2
      timeout 150 $TK $opts --nproc "$n" --out "$R/$shape/ws$n" 2>&1 | grep -v "^USDT" | tail -1
    done
    left "phases $shape" || break
    timeout 200 $TR --nproc-per-node 2 benchmarks/gpu/phase_times.py --device cuda $opts --rounds "$ROUNDS" \
        --variant world-size=1 --variant world-size=2 --json "$R/$shape/phases.json" 2>&1 | grep -v "^USDT" \
        | grep "rank\|Error\|error" | head -6
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_phases.txt"
tar czf "$OUT/phases.tar.gz" -C "$OUT" phases && rm -rf "$R"
