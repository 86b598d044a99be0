#!/usr/bin/env bash
# CUPTI's cost per CUDA operation by kind, and on real models (benchmarks/gpu/cupti_cost_by_kind.py), one GPU.
# Usage (device machine, repo root): OUT=/some/dir DEADLINE=400 bash benchmarks/gpu/cupti_kinds.sh
# KINDS / NAMES pick micro kinds / model shapes (benchmarks/gpu/common.sh); ROUNDS repeats the whole list.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; DEADLINE=${DEADLINE:-400}; R="$OUT/kinds"; mkdir -p "$R"
SHAPES[smallmlp]="--model toy --width 256 --depth 48 --batch-size 64"
SHAPES[toy1024]="--model toy --width 1024 --depth 24 --batch-size 64"
{
  host_facts
  for round in $(seq 1 ${ROUNDS:-2}); do
    for kind in ${KINDS:-add add_launch_only empty cast mm32 mm16 mm32_big linear_ac softmax layernorm sdpa triton}; do
      left "kind $kind $round" || break 2
      timeout 90 python3 benchmarks/gpu/cupti_cost_by_kind.py --kind $kind --json "$R/k_${kind}_$round.json" 2>&1 | grep -v "^USDT" | tail -2
    done
    for shape in ${NAMES:-toy4096 smallmlp toy1024 tfm1024 tfm768x12 gpt2bf16 gpubound}; do
      left "model $shape $round" || break 2
      timeout 120 $TR --nproc-per-node 1 benchmarks/gpu/cupti_cost_by_kind.py ${SHAPES[$shape]} --json "$R/m_${shape}_$round.json" 2>&1 | grep -v "^USDT" | grep -v Warning | tail -2
    done
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_kinds.txt"
tar czf "$OUT/kinds.tar.gz" -C "$OUT" kinds && rm -rf "$R"
