#!/usr/bin/env bash
# The what-if scenarios against the same change made for real, on CPU/gloo, 2 ranks (no GPU needed):
# profile the toy model once per variant, predict every variant from the ONE baseline run (bucket cap 25 MiB),
# compare with each variant's own measured unprofiled step (benchmarks/bench_whatif.py --baseline).
#   bash benchmarks/whatif_scenarios.sh [OUT_DIR] [RESULTS.jsonl]
# WS4=1 adds a 4-rank run, predicted from the 2-rank baseline with --world-size 4 (a host with >= 4 free cores).
# PIN=0-7 runs every variant on those cores (taskset): the same cores for all, so a variant does not land on
# faster or slower ones than the baseline. STEPS=N times N steps (default 30).
# OMP_NUM_THREADS=1 for every run: 1 and 2 ranks then get the same per-rank compute (tracekit profile would
# otherwise give a lone rank both cores), which is what --world-size assumes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/whatif_scenarios}
results=${2:-benchmarks/results/whatif_scenarios_cpu_gloo.jsonl}
py=${PYTHON:-python}
common=(--device cpu --width 1024 --depth 8 --batch-size 64 --warmup 3 --steps "${STEPS:-30}" --profile-wait 0
        --profile-warmup 1 --profile-steps 3 --timeout 300)
pin=(); if [ -n "${PIN:-}" ]; then pin=(taskset -c "$PIN"); fi
run() { local name=$1; shift; OMP_NUM_THREADS=1 "${pin[@]}" $py -m tracekit profile --out "$out/$name" "${common[@]}" "$@" \
          > "$out/$name.log" 2>&1; }
mkdir -p "$out"
run cap25 --nproc 2 --bucket-cap-mb 25
run cap25_again --nproc 2 --bucket-cap-mb 25   # the same run twice: run-to-run noise of the measurement
run cap1 --nproc 2 --bucket-cap-mb 1
run cap5 --nproc 2 --bucket-cap-mb 5
run cap100 --nproc 2 --bucket-cap-mb 100
run first5 --nproc 2 --bucket-cap-mb 25 --first-bucket-cap-mb 5
run ws1 --nproc 1 --bucket-cap-mb 25
more=()
if [ "${WS4:-0}" = 1 ]; then run ws4 --nproc 4 --bucket-cap-mb 25; more=(--variant "$out/ws4:world-size=4"); fi
$py benchmarks/bench_whatif.py --baseline "$out/cap25" --variant "$out/cap25_again:bucket-cap-mb=25" \
    --variant "$out/cap1:bucket-cap-mb=1" --variant "$out/cap5:bucket-cap-mb=5" \
    --variant "$out/cap100:bucket-cap-mb=100" --variant "$out/first5:first-bucket-cap-mb=5" \
    --variant "$out/ws1:world-size=1" "${more[@]}" --out "$results"
