#!/usr/bin/env bash
# Compiled runs calibrated with the compiled probe (tracekit/profile/calibrate.py): inductor profiles whose
# run.json keeps both probes' figures, for benchmarks/bench_whatif.py (error with the compiled probe, and
# error_pct_probe_eager with the eager one, on the same traces). Usage (device, repo root):
#   OUT=/some/dir bash benchmarks/gpu/compiled_probe.sh        # BUDGET_S=480: no new run starts after that
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; PART=${PART:-compiled_probe}; BUDGET_S=${BUDGET_S:-480}; mkdir -p "$OUT/runs_$PART"
TK="python3 -m tracekit profile --nproc 1 --warmup 8 --steps 30 --profile-steps 3 --dynamo inductor"
RUNS=(
  "toy-cpubound-break|--model toy --width 256 --depth 16 --batch-size 32 --graph-break-at 7"
  "toy-mid-break|--model toy --width 384 --depth 24 --batch-size 24 --graph-break-at 11"
  "transformer-mid-break|--model transformer --width 384 --depth 8 --seq-len 64 --batch-size 4 --graph-break-at 3"
  "smallmlp-inductor|--model toy --width 256 --depth 48 --batch-size 64"
  "toy-320-break|--model toy --width 320 --depth 20 --batch-size 16 --graph-break-at 9"
  "transformer-320-break|--model transformer --width 320 --depth 10 --seq-len 64 --batch-size 2 --graph-break-at 4"
  "resnet18-inductor|--model resnet18 --batch-size 64"
  "toy-gpubound-break|--model toy --width 4096 --depth 16 --batch-size 512 --graph-break-at 7"
)
t0=$(date +%s)
{
  uptime; nproc; python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
  for spec in "${RUNS[@]}"; do
    name=${spec%%|*}; opts=${spec#*|}
    if [ $(( $(date +%s) - t0 )) -gt "$BUDGET_S" ]; then echo "### $name: skipped (budget)"; continue; fi
    echo "### $name: $opts"; start=$(date +%s)
    timeout 150 $TK $opts --out "$OUT/runs_$PART/$name" 2>&1 | grep -v "^USDT" | tail -2
    python3 -c "import json,sys; pc=json.load(open(sys.argv[1]))['profiler_cost']; print(pc['probe'], pc['probes'])" \
      "$OUT/runs_$PART/$name/run.json" 2>&1 | tail -1
    echo "took $(( $(date +%s) - start )) s"
  done
  uptime
} 2>&1 | tee "$OUT/log_$PART.txt"
tar czf "$OUT/runs_$PART.tar.gz" -C "$OUT" "runs_$PART" && rm -rf "$OUT/runs_$PART"
