#!/usr/bin/env bash
# Graph-break twins whose break holds a host sync: an MLP with one data-dependent `.item()` check in forward
# (`tracekit profile --graph-break-kind item`: dynamo breaks the graph there AND the host waits for the GPU, a
# blocking device-to-host copy, before it launches the next graph) against the same MLP without it. Per shape:
#   SHAPE-break/paired.jsonl  the paired truth: both twins in one process, steps alternating (paired_twins.py)
#   SHAPE-break/              `tracekit profile` of the twin with the `.item()` break (what whatif predicts from)
#   SHAPE-none/               `tracekit profile` of the twin without it (separate run: a second look, not the truth)
# Shapes: mlp1024 (width 1024 x 8 at batch 1024) and toy-cpubound (launch-bound, width 256 x 16, batch 32). The
# essential steps (break profile + paired timing of every shape) run first, the -none profiles last; a step that would
# start after DEADLINE seconds (default 200: the whole batch ~4 min on an H100) is skipped and says so in the log.
#
# Usage (device, repo root): OUT=dir bash benchmarks/gpu/item_break_twins.sh
#   ONLY="mlp1024" picks shapes; ROUNDS=200 paired rounds; DEADLINE=200; SIZES_CPU=1 tiny sizes for a CPU dry run.
# Writes $OUT/log_item.txt and $OUT/runs_item.tar.gz (runs_item/<shape>-break, runs_item/<shape>-none, and
# runs_item/whatif_paired.jsonl: bench_whatif.py --paired on the fresh runs, a first look printed in the log).
#
# Afterwards (here): unpack into a sample folder (a, b, ... per recording; the issue asks for two, on different days)
#   mkdir -p sample_traces/whatif/h100_item_break/a && tar xzf OUT/runs_item.tar.gz --strip-components=1 \
#       -C sample_traces/whatif/h100_item_break/a && cp OUT/log_item.txt sample_traces/whatif/h100_item_break/a/log.txt
# compare the prediction with the paired truth (SHAPE-break/paired.jsonl: break_ms_median, none_ms_median,
# paired_delta_pct_median; the gap none - break is what removing the `.item()` check saves):
#   tracekit whatif sample_traces/whatif/h100_item_break/a/mlp1024-break --no-graph-breaks
#   tracekit analyze sample_traces/whatif/h100_item_break/a/mlp1024-break --table break_boundaries   # host_sync_us
# and write the result rows (one per shape, as the graph-break twin rows of whatif_scenarios_h100_paired_twins.jsonl),
# then name the file in docs/whatif-evidence.md and regenerate the index:
#   python benchmarks/bench_whatif.py --paired sample_traces/whatif/h100_item_break/*/*-break \
#       --out benchmarks/results/whatif_scenarios_h100_item_break.jsonl
#   python benchmarks/results_index.py --write
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; PART=${PART:-item}; ROUNDS=${ROUNDS:-200}; DEADLINE=${DEADLINE:-200}; mkdir -p "$OUT/runs_$PART"
TK="python3 -m tracekit profile --nproc 1 --warmup 5 --steps 20 --profile-steps 3 --dynamo inductor"
if [ -n "${SIZES_CPU:-}" ]; then  # a dry run on a CPU host: the same steps on tiny models
  ITEM_SHAPES=("mlp1024|--model toy --width 64 --depth 4 --batch-size 16|1"
               "toy-cpubound|--model toy --width 32 --depth 4 --batch-size 4|2")
else
  ITEM_SHAPES=("mlp1024|--model toy --width 1024 --depth 8 --batch-size 1024|3"
               "toy-cpubound|--model toy --width 256 --depth 16 --batch-size 32|7")
fi
picked() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
step() {  # step NAME CMD...: run CMD (at most 120 s) if there is time left, with its duration in the log
  local name=$1 start; shift; left "$name" || return 0; start=$(date +%s)
  timeout 120 "$@" 2>&1 | grep -v "^USDT" | tail -3
  echo "took $(( $(date +%s) - start )) s"
}
{
  uptime; host_facts
  for spec in "${ITEM_SHAPES[@]}"; do
    IFS='|' read -r name opts at <<< "$spec"; picked "$name" || continue
    step "$name-break profile" $TK $opts --graph-break-at "$at" --graph-break-kind item \
      --out "$OUT/runs_$PART/$name-break"
    mkdir -p "$OUT/runs_$PART/$name-break"
    step "$name paired (item break vs none)" python3 benchmarks/gpu/paired_twins.py $opts --at "$at" --break-kind item \
      --rounds "$ROUNDS" --json "$OUT/runs_$PART/$name-break/paired.jsonl"
  done
  for spec in "${ITEM_SHAPES[@]}"; do
    IFS='|' read -r name opts at <<< "$spec"; picked "$name" || continue
    step "$name-none profile" $TK $opts --out "$OUT/runs_$PART/$name-none"
  done
  # a first look at the prediction against the paired truth (the committed rows come from the unpacked sample, below)
  ls "$OUT/runs_$PART"/*-break/paired.jsonl > /dev/null 2>&1 && \
  DEADLINE=$(( DEADLINE + 30 )) step "whatif --no-graph-breaks vs paired" python3 benchmarks/bench_whatif.py \
    --paired "$OUT/runs_$PART"/*-break --out "$OUT/runs_$PART/whatif_paired.jsonl"
  cat "$OUT/runs_$PART/whatif_paired.jsonl" 2>/dev/null
  uptime
} 2>&1 | tee "$OUT/log_$PART.txt"
tar czf "$OUT/runs_$PART.tar.gz" -C "$OUT" "runs_$PART" && rm -rf "$OUT/runs_$PART"
