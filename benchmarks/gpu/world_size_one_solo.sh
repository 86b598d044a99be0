#!/usr/bin/env bash
# Why one rank runs a CPU-bound DDP step faster than two (docs/whatif-evidence.md, "World size 1"): per shape, one job
# times 2 ranks, 1 rank (the other idle) and 1 rank beside an independent 1-rank copy on the other GPU
# (`solo=1`: both train at once, no communication between them), steps alternating
# (benchmarks/gpu/paired_ddp_variants.py). If the solo rank is as fast as the lone one, the second process costs
# nothing and the 2-rank step's extra time comes from the communication; if it is as slow as 2 ranks, from
# sharing the host.
# Usage (device machine with 2 GPUs, repo root): OUT=/some/dir NAMES="toy2048x16 tfm1024" bash benchmarks/gpu/world_size_one_solo.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; NAMES=${NAMES:-"toy2048x16 tfm1024 toy4096"}; ROUNDS=${ROUNDS:-60}; mkdir -p "$OUT/solo"
{
  nvidia-smi -L; python3 -c "import torch, os; print('torch', torch.__version__, 'cpus', os.cpu_count())"
  for shape in $NAMES; do
    echo "### $shape"
    timeout 200 python3 -m torch.distributed.run --standalone --nproc-per-node 2 benchmarks/gpu/paired_ddp_variants.py \
        --device cuda ${SHAPES[$shape]} --ranks 2 --rounds "$ROUNDS" --warmup 5 --variant bucket-cap-mb=25 \
        --variant world-size=1 --variant world-size=1,solo=1 --json "$OUT/solo/$shape.json" 2>&1 \
        | grep -v "^USDT" | grep "paired change\|Error\|error" | head -5
  done
} 2>&1 | tee "$OUT/log_solo.txt"
tar czf "$OUT/solo.tar.gz" -C "$OUT" solo && rm -rf "$OUT/solo"
