#!/usr/bin/env bash
# The what-if scenarios on GPUs over NCCL and the replay's baseline on multi-GPU runs,
# in one batch for a 4-GPU host: every DDP variant timed in one job, steps alternating (the paired truth,
# benchmarks/gpu/paired_ddp_variants.py), the baseline profiled once (what `tracekit whatif` predicts from), the
# variants profiled separately, a slower network (NCCL_MAX_NCHANNELS) and the all-reduce bus bandwidth
# under both settings (benchmarks/gpu/nccl_busbw.py: the independent K for --bandwidth-x).
# Usage (device machine, repo root): OUT=dir SHAPE=name OPTS="--model toy ..." [BUSBW=1] [DEADLINE=540]
#   [GPUS=4] bash benchmarks/gpu/nccl_scenarios.sh
# GPUS=2 (a 2-GPU host): the paired job runs on 2 processes, without the 4-rank variant.
# Runs in order of importance and skips what would start after DEADLINE seconds.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; SHAPE=${SHAPE:-toy}; OPTS=${OPTS:---model toy --width 4096 --depth 8 --batch-size 64}
SLOW=${SLOW:-NCCL_MAX_NCHANNELS=2}; ROUNDS=${ROUNDS:-40}; DEADLINE=${DEADLINE:-540}; GPUS=${GPUS:-4}
WS4=(--variant world-size=4); [ "$GPUS" -ge 4 ] || WS4=()
R="$OUT/runs_$SHAPE"; mkdir -p "$R"; T0=$(date +%s)
TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-steps 3 --timeout 120"
TR="python3 -m torch.distributed.run --standalone"
left() { local t=$(( $(date +%s) - T0 )); if [ $t -gt "$DEADLINE" ]; then echo "### skipped $1 (at $t s)"; return 1; fi
         echo "### $1 (at $t s)"; }
prof() { local name=$1 envs=(); shift; left "profile $name" || return 0
         while [[ $# -gt 0 && $1 == [A-Z]*=* ]]; do envs+=("$1"); shift; done
         timeout 150 env "${envs[@]}" $TK $OPTS "$@" --out "$R/$name" 2>&1 | grep -v "^USDT" | tail -2; }
{
  nvidia-smi -L; python3 -c "import torch, os; print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'cpus', os.cpu_count())"
  if [ "${BUSBW:-0}" = 1 ]; then
    left busbw && for n in 2 4; do
      timeout 90 $TR --nproc-per-node $n benchmarks/gpu/nccl_busbw.py --label default --json "$OUT/busbw.jsonl" 2>&1 | grep busbw
      timeout 90 env $SLOW $TR --nproc-per-node $n benchmarks/gpu/nccl_busbw.py --label "$SLOW" --json "$OUT/busbw.jsonl" 2>&1 | grep busbw
    done
  fi
  prof cap25 --nproc 2 --bucket-cap-mb 25
  left paired && timeout 200 $TR --nproc-per-node "$GPUS" benchmarks/gpu/paired_ddp_variants.py --device cuda $OPTS --ranks 2 \
      --rounds "$ROUNDS" --warmup 5 --variant bucket-cap-mb=25 --variant bucket-cap-mb=1 --variant bucket-cap-mb=5 \
      --variant bucket-cap-mb=100 --variant first-bucket-cap-mb=5 --variant comm-hook=bf16 --variant world-size=1 \
      "${WS4[@]}" --json "$R/cap25/paired.jsonl" 2>&1 | grep -v "^USDT" | grep "paired change\|Error\|error" | head -20
  prof slownet $SLOW --nproc 2 --bucket-cap-mb 25
  prof ws4 --nproc 4 --bucket-cap-mb 25
  prof bf16 --nproc 2 --bucket-cap-mb 25 --comm-hook bf16
  prof ws1 --nproc 1 --bucket-cap-mb 25
  prof cap1 --nproc 2 --bucket-cap-mb 1
  prof cap100 --nproc 2 --bucket-cap-mb 100
  prof cap25_again --nproc 2 --bucket-cap-mb 25
  prof first5 --nproc 2 --bucket-cap-mb 25 --first-bucket-cap-mb 5
  prof cap5 --nproc 2 --bucket-cap-mb 5
  echo "### done at $(( $(date +%s) - T0 )) s"
} 2>&1 | tee "$OUT/log_$SHAPE.txt"
tar czf "$OUT/runs_$SHAPE.tar.gz" -C "$OUT" "runs_$SHAPE" && rm -rf "$R"
