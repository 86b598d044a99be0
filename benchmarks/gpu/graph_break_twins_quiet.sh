#!/usr/bin/env bash
# Graph-break twins, second round (quiet H200, 50 timed steps): OUT=dir bash benchmarks/gpu/graph_break_twins_quiet.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; PART=${PART:-gb2}; mkdir -p "$OUT/runs_$PART"
TK="python3 -m tracekit profile --nproc 1 --warmup 8 --steps 50 --profile-steps 3 --dynamo inductor"
RUNS=(
  "toy-cpubound-break|--model toy --width 256 --depth 16 --batch-size 32 --graph-break-at 7"
  "toy-cpubound-none|--model toy --width 256 --depth 16 --batch-size 32"
  "toy-cpubound-deep-break|--model toy --width 512 --depth 32 --batch-size 16 --graph-break-at 15"
  "toy-cpubound-deep-none|--model toy --width 512 --depth 32 --batch-size 16"
  "toy-gpubound-break|--model toy --width 4096 --depth 16 --batch-size 512 --graph-break-at 7"
  "toy-gpubound-none|--model toy --width 4096 --depth 16 --batch-size 512"
  "transformer-small-break|--model transformer --width 256 --depth 6 --seq-len 64 --batch-size 4 --graph-break-at 2"
  "transformer-small-none|--model transformer --width 256 --depth 6 --seq-len 64 --batch-size 4"
)
{
  uptime; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
  for spec in "${RUNS[@]}"; do
    name=${spec%%|*}; opts=${spec#*|}
    echo "### $name: $opts"; start=$(date +%s)
    $TK $opts --out "$OUT/runs_$PART/$name" 2>&1 | grep -v "^USDT" | tail -3
    echo "took $(( $(date +%s) - start )) s"
  done
} 2>&1 | tee "$OUT/log_$PART.txt"
tar czf "$OUT/runs_$PART.tar.gz" -C "$OUT" "runs_$PART" && rm -rf "$OUT/runs_$PART"
