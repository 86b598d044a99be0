#!/usr/bin/env bash
# The held-out check of `tracekit whatif --world-size N` from a 1-rank run (tracekit/replay/grow.py): per shape,
# one rank profiled (cap 25 MB) and the paired truth, world size 1 against 2 timed in one job, steps alternating
# (benchmarks/gpu/paired_ddp_variants.py); plus the host's allreduce bus bandwidth (benchmarks/gpu/nccl_busbw.py).
# Usage (device machine with 2 GPUs, repo root): OUT=/some/dir DEADLINE=420 bash benchmarks/gpu/grow_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; DEADLINE=${DEADLINE:-420}; ROUNDS=${ROUNDS:-40}; R="$OUT/grow"; mkdir -p "$R"; T0=$(date +%s)
TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-steps 3 --timeout 120 --bucket-cap-mb 25"
TR="python3 -m torch.distributed.run --standalone"
left() { local t=$(( $(date +%s) - T0 )); if [ $t -gt "$DEADLINE" ]; then echo "### skipped $1 (at $t s)"; return 1; fi
         echo "### $1 (at $t s)"; }
{
  nvidia-smi -L; python3 -c "import torch, os; print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'cpus', os.cpu_count())"
  left busbw && timeout 90 $TR --nproc-per-node 2 benchmarks/gpu/nccl_busbw.py --label default --json "$OUT/busbw.jsonl" 2>&1 | grep busbw
  for shape in toy4096 gpubound tfm1024 tfmbig gpt2bf16; do
    opts=${SHAPES[$shape]}
    left "profile $shape ws1" || break
    timeout 150 $TK $opts --nproc 1 --out "$R/$shape/ws1" 2>&1 | grep -v "^USDT" | tail -2
    left "paired $shape" || break
    timeout 150 $TR --nproc-per-node 2 benchmarks/gpu/paired_ddp_variants.py --device cuda $opts --ranks 2 --rounds "$ROUNDS" \
        --warmup 5 --variant world-size=1 --variant world-size=2 --json "$R/$shape/ws1/paired.jsonl" 2>&1 \
        | grep -v "^USDT" | grep "paired change\|Error\|error" | head -5
  done
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_grow.txt"
tar czf "$OUT/grow.tar.gz" -C "$OUT" grow && rm -rf "$R"
