#!/usr/bin/env bash
# The held-out check of `tracekit whatif --world-size 1` from a 2-rank NCCL run (tracekit/replay/enqueue.py sheds
# NCCL's kernel launches; network.scale drops the transfers): per shape, the 2-rank run profiled (cap 25 MB) and
# the paired truth, world size 2 against 1 timed in one job, steps alternating (benchmarks/gpu/paired_ddp_variants.py).
# Traces come back in ws1.tar.gz, so the prediction is made where the model is, after the runs.
# Usage (device machine with 2 GPUs, repo root): OUT=/some/dir NAMES="toy4096 tfm1024" DEADLINE=480 bash benchmarks/gpu/world_size_one_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; NAMES=${NAMES:-"toy4096 tfm1024 gpt2bf16 toy2048x16 tfm768x12"}; DEADLINE=${DEADLINE:-480}
ROUNDS=${ROUNDS:-40}; R="$OUT/ws1"; mkdir -p "$R"; T0=$(date +%s)
TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-steps 3 --timeout 120 --bucket-cap-mb 25 --nproc 2"
left() { local t=$(( $(date +%s) - T0 )); if [ $t -gt "$DEADLINE" ]; then echo "### skipped $1 (at $t s)"; return 1; fi
         echo "### $1 (at $t s)"; }
{
  nvidia-smi -L; python3 -c "import torch, os; print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'cpus', os.cpu_count())"
  for shape in $NAMES; do
    o=${SHAPES[$shape]}
    left "profile $shape" || break
    timeout 150 $TK $o --out "$R/$shape/cap25" 2>&1 | grep -v "^USDT" | tail -1
    left "paired $shape" || break
    timeout 150 python3 -m torch.distributed.run --standalone --nproc-per-node 2 benchmarks/gpu/paired_ddp_variants.py \
        --device cuda $o --ranks 2 --rounds "$ROUNDS" --warmup 5 --variant bucket-cap-mb=25 --variant world-size=1 \
        --json "$R/$shape/cap25/paired.jsonl" 2>&1 | grep -v "^USDT" | grep "paired change\|Error\|error" | head -5
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_ws1.txt"
tar czf "$OUT/ws1.tar.gz" -C "$OUT" ws1 && rm -rf "$R"
