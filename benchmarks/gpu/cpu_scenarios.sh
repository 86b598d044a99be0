#!/usr/bin/env bash
# The CPU/gloo what-if scenarios (benchmarks/whatif_scenarios.sh) on a GPU host's idle CPUs: 16 cores, no
# neighbours, so the measured truth moves less than on the shared 2-core dev machine. Two sets (A, B) back to
# back, the same runs each: their difference is the truth's run-to-run noise.
# Usage (device machine, repo root): OUT=/some/dir [PIN=0-7] [STEPS=30] [SETS="a b"] bash benchmarks/gpu/cpu_scenarios.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
export CUDA_VISIBLE_DEVICES=""
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
{
  python3 -c "import torch, os; print('torch', torch.__version__, 'cpus', os.cpu_count())"; uptime
  lscpu | grep -E "Model name|NUMA|Socket|Thread"
  for set in ${SETS:-a b}; do
    echo "### set $set"; date
    WS4=1 PYTHON=python3 bash benchmarks/whatif_scenarios.sh "$OUT/runs_$set" "$OUT/whatif_scenarios_cpu16${PIN:+_pinned}_$set.jsonl"
  done
  uptime; date
} 2>&1 | tee "$OUT/log.txt"
(cd "$OUT" && tar czf runs.tar.gz runs_* && rm -rf runs_*/)
