#!/usr/bin/env bash
# Graph-break twins, CPU-bound shapes repeated in alternating order (break, none, break, none, ...), so the
# run-to-run variation of the truth is measured too: OUT=dir bash benchmarks/gpu/graph_break_twins_alternating.sh
# PIN=0-3 runs every profile on those cores (taskset); ONLY="toy-cpubound transformer-small" picks shapes.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; PART=${PART:-gb3}; REPS=${REPS:-3}; mkdir -p "$OUT/runs_$PART"
PINNED=""; [ -n "${PIN:-}" ] && PINNED="taskset -c $PIN"
TK="$PINNED python3 -m tracekit profile --nproc 1 --warmup 8 --steps 30 --profile-steps 3 --dynamo inductor"
SHAPES=(
  "toy-cpubound|--model toy --width 256 --depth 16 --batch-size 32|7"
  "toy-cpubound-deep|--model toy --width 512 --depth 32 --batch-size 16|15"
  "transformer-small|--model transformer --width 256 --depth 6 --seq-len 64 --batch-size 4|2"
)
{
  uptime
  for rep in $(seq 1 "$REPS"); do
    for spec in "${SHAPES[@]}"; do
      IFS='|' read -r name opts at <<< "$spec"
      if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
      for v in break none; do
        extra=""; [ "$v" = break ] && extra="--graph-break-at $at"
        echo "### $name-$v-r$rep"; start=$(date +%s)
        $TK $opts $extra --out "$OUT/runs_$PART/$name-$v-r$rep" 2>&1 | grep -v "^USDT" | tail -1
        echo "took $(( $(date +%s) - start )) s"
      done
    done
  done
} 2>&1 | tee "$OUT/log_$PART.txt"
tar czf "$OUT/runs_$PART.tar.gz" -C "$OUT" "runs_$PART" && rm -rf "$OUT/runs_$PART"
