#!/usr/bin/env bash
# The eager/compiled pair of docs/compiled.md on one GPU, with the provenance capture: a 2-block transformer
# (bf16 autocast, --record-shapes) profiled eager and with --dynamo inductor, then the generated Triton code of a
# tiny model's forward and backward (tests' parser data). Run from the repository root on a GPU host;
# writes into ${OUT:-gpu_provenance_out}: runs/transformer_eager, runs/transformer_inductor, runs/code.
# Then, on any machine: tracekit diff runs/transformer_eager runs/transformer_inductor --by module
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, host_facts
OUT=${OUT:-gpu_provenance_out}
R=$OUT/runs
mkdir -p "$R/code"
host_facts
COMMON=(--nproc 1 --device cuda --model transformer --width 512 --depth 2 --seq-len 256 --heads 8 --batch-size 8
        --amp bf16 --record-shapes --warmup 3 --steps 5 --profile-wait 1 --profile-warmup 1 --profile-steps 2
        --no-calibrate-profiler --no-bucket-timing)
T0=$(date +%s)
timeout 120 python3 -m tracekit profile "${COMMON[@]}" --out "$R/transformer_eager" 2>&1 | tail -4
echo "### eager done at $(( $(date +%s) - T0 )) s"
timeout 240 python3 -m tracekit profile "${COMMON[@]}" --dynamo inductor --out "$R/transformer_inductor" 2>&1 | tail -4
echo "### inductor done at $(( $(date +%s) - T0 )) s"
timeout 120 python3 benchmarks/gpu/provenance_code.py "$R/code" 2>&1 | tail -3
echo "### code dump done at $(( $(date +%s) - T0 )) s"
