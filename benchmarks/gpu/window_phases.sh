#!/usr/bin/env bash
# Where the profiler's cost comes from, in the run's own step: each shape profiled on one GPU with a
# longer schedule (`--profile-wait 2 --profile-warmup 3`), so run.json's `window_step_s` holds steps with the
# profiler created but off (wait), with CUPTI's activity tracing on but nothing recorded (warm-up), and recorded
# (active), beside the unprofiled timed steps, and `cpu_only_step_s`: 4 steps after the window with the CPU recorded
# and CUPTI off. Traces and run.json come back for `tracekit whatif`.
# Usage (device machine, repo root): OUT=/some/dir DEADLINE=420 bash benchmarks/gpu/window_phases.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; DEADLINE=${DEADLINE:-420}; R="$OUT/window"; mkdir -p "$R"
TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-wait 2 --profile-warmup 3 --profile-steps 3 --profile-cpu-only-steps 4 --timeout 120"
SHAPES[smallmlp]="--model toy --width 256 --depth 48 --batch-size 64"
SHAPES[toy1024]="--model toy --width 1024 --depth 24 --batch-size 64"
{
  host_facts
  for shape in ${NAMES:-toy4096 smallmlp tfm1024 gpt2bf16 toy1024 tfm768x12}; do
    left "profile $shape" || break
    timeout 150 $TK ${SHAPES[$shape]} --out "$R/$shape" 2>&1 | grep -v "^USDT" | tail -2
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_window.txt"
tar czf "$OUT/window.tar.gz" -C "$OUT" window && rm -rf "$R"
