#!/usr/bin/env bash
# Graph-break twins for `tracekit whatif --no-graph-breaks`: the same toy/transformer model
# compiled with inductor, with one torch._dynamo.graph_break() in forward and without it, at a CPU-bound
# and a GPU-bound size. Usage (device, repo root): OUT=dir bash benchmarks/gpu/graph_break_twins.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; PART=${PART:-gb}; mkdir -p "$OUT/runs_$PART"
TK="python3 -m tracekit profile --nproc 1 --warmup 5 --steps 20 --profile-steps 3 --dynamo inductor"
RUNS=(
  "toy-cpubound-break|--model toy --width 256 --depth 16 --batch-size 32 --graph-break-at 7"
  "toy-cpubound-none|--model toy --width 256 --depth 16 --batch-size 32"
  "toy-gpubound-break|--model toy --width 4096 --depth 16 --batch-size 512 --graph-break-at 7"
  "toy-gpubound-none|--model toy --width 4096 --depth 16 --batch-size 512"
)
{
  for spec in "${RUNS[@]}"; do
    name=${spec%%|*}; opts=${spec#*|}
    echo "### $name: $opts"; start=$(date +%s)
    $TK $opts --out "$OUT/runs_$PART/$name" 2>&1 | grep -v "^USDT" | tail -3
    echo "took $(( $(date +%s) - start )) s"
  done
} 2>&1 | tee "$OUT/log_$PART.txt"
tar czf "$OUT/runs_$PART.tar.gz" -C "$OUT" "runs_$PART" && rm -rf "$OUT/runs_$PART"
