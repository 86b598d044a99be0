#!/usr/bin/env bash
# Every bucket layout profiled, and timed together: for each shape, one DDP run profiled per bucket cap
# (1, 5, 25, 100 MB; `tracekit profile`, 2 ranks over NCCL) and one job that times the four layouts with steps
# alternating (benchmarks/gpu/paired_ddp_variants.py: the truth). `benchmarks/bench_whatif.py --cross SET` then
# predicts every layout from every profiled one and compares with the paired change.
# Shapes by name: benchmarks/gpu/common.sh.
# Usage (device machine, repo root): OUT=dir NAMES="tfm1024 gpt2bf16" [DEADLINE=540] bash benchmarks/gpu/bucket_layouts.sh
# Runs in order and skips what would start after DEADLINE seconds.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; NAMES=${NAMES:-tfm1024}; ROUNDS=${ROUNDS:-40}; DEADLINE=${DEADLINE:-540}
TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-steps 3 --timeout 120 --nproc 2"
T0=$(date +%s); mkdir -p "$OUT"
left() { local t=$(( $(date +%s) - T0 )); if [ $t -gt "$DEADLINE" ]; then echo "### skipped $1 (at $t s)"; return 1; fi
         echo "### $1 (at $t s)"; }
{
  nvidia-smi -L; python3 -c "import torch, os; print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'cpus', os.cpu_count())"
  for shape in $NAMES; do
    R="$OUT/layouts/$shape"; mkdir -p "$R"; o=${SHAPES[$shape]}
    for cap in 25 100 1 5; do
      left "$shape profile cap$cap" && timeout 150 $TK $o --bucket-cap-mb $cap --out "$R/cap$cap" 2>&1 | grep -v "^USDT" | tail -1
    done
    left "$shape paired" && timeout 200 python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
        benchmarks/gpu/paired_ddp_variants.py --device cuda $o --ranks 2 --rounds "$ROUNDS" --warmup 5 \
        --variant bucket-cap-mb=25 --variant bucket-cap-mb=1 --variant bucket-cap-mb=5 --variant bucket-cap-mb=100 \
        --json "$R/cap25/paired.jsonl" 2>&1 | grep -v "^USDT" | grep "paired change\|Error\|error" | head -8
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_layouts_${NAMES// /_}.txt"
tar czf "$OUT/layouts_${NAMES// /_}.tar.gz" -C "$OUT" layouts && rm -rf "$OUT/layouts"
