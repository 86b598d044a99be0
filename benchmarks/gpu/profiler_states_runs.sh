#!/usr/bin/env bash
# The run's own step under three profiler states on one GPU (benchmarks/gpu/profiler_states.py): plain, CUPTI only (the
# profiler's warm-up), CPU only, both (a window); per shape. Usage (device machine, repo root):
#   OUT=/some/dir DEADLINE=400 bash benchmarks/gpu/profiler_states_runs.sh
# PIN=4-11 runs each job under `taskset -c 4-11` with OMP_NUM_THREADS=4; ARGS adds profiler_states.py options
# (the pinned set: PIN=4-11 ROUNDS=12 ARGS="--plain 4 --warm 2 --active 2")
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; DEADLINE=${DEADLINE:-400}; R="$OUT/states"; mkdir -p "$R"
SHAPES[smallmlp]="--model toy --width 256 --depth 48 --batch-size 64"
SHAPES[toy1024]="--model toy --width 1024 --depth 24 --batch-size 64"
{
  host_facts
  for shape in ${NAMES:-toy4096 smallmlp tfm1024 gpt2bf16 toy1024 tfm768x12 gpubound}; do
    left "states $shape" || break
    ${PIN:+env OMP_NUM_THREADS=4 taskset -c $PIN} timeout 150 $TR --nproc-per-node 1 benchmarks/gpu/profiler_states.py \
        --device cuda ${SHAPES[$shape]} --rounds ${ROUNDS:-5} ${ARGS:-} --json "$R/$shape.json" 2>&1 | grep -v "^USDT" | grep "plain\|Error\|error" | head -8
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_states.txt"
tar czf "$OUT/states.tar.gz" -C "$OUT" states && rm -rf "$R"
