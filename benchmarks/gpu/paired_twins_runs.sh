#!/usr/bin/env bash
# Graph-break twins: the paired truth (both twins in one process, alternating steps: benchmarks/gpu/paired_twins.py)
# and a profiled run of the twin with the break (what `tracekit whatif --no-graph-breaks` predicts from).
# OUT=dir bash benchmarks/gpu/paired_twins_runs.sh ; ONLY="toy-cpubound" picks shapes; ROUNDS=150.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; PART=${PART:-paired}; ROUNDS=${ROUNDS:-150}; mkdir -p "$OUT/runs_$PART"
TK="python3 -m tracekit profile --nproc 1 --warmup 8 --steps 30 --profile-steps 3 --dynamo inductor"
SHAPES=(
  "toy-cpubound|--model toy --width 256 --depth 16 --batch-size 32|7"
  "toy-mid|--model toy --width 384 --depth 24 --batch-size 24|11"
  "transformer-mid|--model transformer --width 384 --depth 8 --seq-len 64 --batch-size 4|3"
  "transformer-small|--model transformer --width 256 --depth 6 --seq-len 64 --batch-size 4|2"
  "toy-cpubound-deep|--model toy --width 512 --depth 32 --batch-size 16|15"
  "toy-gpubound|--model toy --width 4096 --depth 16 --batch-size 512|7"
  "toy-320|--model toy --width 320 --depth 20 --batch-size 16|9"
  "toy-768|--model toy --width 768 --depth 12 --batch-size 8|5"
  "transformer-320|--model transformer --width 320 --depth 10 --seq-len 64 --batch-size 2|4"
  "toy-448|--model toy --width 448 --depth 20 --batch-size 16|9"
  "transformer-256x8|--model transformer --width 256 --depth 8 --seq-len 64 --batch-size 4|3"
)
{
  uptime; nproc
  for spec in "${SHAPES[@]}"; do
    IFS='|' read -r name opts at <<< "$spec"
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
    start=$(date +%s)
    echo "### $name-break profile"
    timeout 240 $TK $opts --graph-break-at "$at" --out "$OUT/runs_$PART/$name-break" 2>&1 | grep -v "^USDT" | tail -1
    echo "took $(( $(date +%s) - start )) s"; start=$(date +%s)
    echo "### $name paired"; mkdir -p "$OUT/runs_$PART/$name-break"
    timeout 240 python3 benchmarks/gpu/paired_twins.py $opts --at "$at" --rounds "$ROUNDS" --json "$OUT/runs_$PART/$name-break/paired.jsonl" 2>&1 \
      | grep -v "^USDT" | tail -2
    echo "took $(( $(date +%s) - start )) s"
  done
  uptime
} 2>&1 | tee "$OUT/log_$PART.txt"
tar czf "$OUT/runs_$PART.tar.gz" -C "$OUT" "runs_$PART" && rm -rf "$OUT/runs_$PART"
