#!/usr/bin/env bash
# Real runs for benchmarks/bench_whatif.py: single-GPU DDP profiles of real models, each with its
# unprofiled step times and the profiler cost calibration in run.json. Usage (device, repo root):
#   OUT=/some/dir PART=a bash benchmarks/gpu/whatif_runs.sh     # PART a: eager runs, b: inductor runs, c: runs of shapes none of a/b has (held out: checked after the model was set)
#   PART d: shapes none of a/b/c has, recorded after the per-cut bound was fitted (held out from it)
#   PART e: programs none of a-d has, recorded after every figure of the model was set (held out)
#   DEADLINE=S: start no run after S seconds (the runs done so far are still packed)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; PART=${PART:-a}; mkdir -p "$OUT/runs_$PART"
TK="python3 -m tracekit profile --nproc ${NPROC:-1} --warmup 5 --steps 20 --profile-steps 3"
declare -a RUNS
if [ "$PART" = a ]; then RUNS=(
  "gpt2-eager|--model gpt2 --seq-len 512 --batch-size 8"
  "vit-eager|--model vit_b_16 --batch-size 32"
  "resnet50-eager|--model resnet50 --batch-size 32"
  "smallmlp-eager|--model toy --width 256 --depth 48 --batch-size 64"
  "bigmlp-eager|--model toy --width 4096 --depth 16 --batch-size 256"
  "transformer-bf16-eager|--model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 16 --amp bf16"
); elif [ "$PART" = c ]; then RUNS=(
  "resnet18-eager|--model resnet18 --batch-size 64"
  "gpt2-small-batch-eager|--model gpt2 --seq-len 256 --batch-size 2"
  "vit-bf16-eager|--model vit_b_16 --batch-size 16 --amp bf16"
  "transformer-fp32-eager|--model transformer --width 512 --depth 6 --seq-len 256 --batch-size 8"
  "midmlp-eager|--model toy --width 1024 --depth 24 --batch-size 128"
  "gpt2-inductor-fp32|--model gpt2 --seq-len 256 --batch-size 4 --dynamo inductor"
  "resnet18-inductor|--model resnet18 --batch-size 64 --dynamo inductor"
); elif [ "$PART" = d ]; then RUNS=(
  "mobilenet-eager|--model mobilenet_v3_large --batch-size 64"
  "toy-512x32-eager|--model toy --width 512 --depth 32 --batch-size 128"
  "gpt2-bf16-eager|--model gpt2 --seq-len 512 --batch-size 4 --amp bf16"
  "transformer-768x12-eager|--model transformer --width 768 --depth 12 --seq-len 256 --batch-size 8"
  "resnet34-bf16-eager|--model resnet34 --batch-size 64 --amp bf16"
  "convnext-eager|--model convnext_tiny --batch-size 32"
  "midmlp-inductor|--model toy --width 1024 --depth 24 --batch-size 128 --dynamo inductor"
  "transformer-inductor-bf16|--model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 8 --amp bf16 --dynamo inductor"
  "efficientnet-eager|--model efficientnet_b0 --batch-size 64"
); elif [ "$PART" = e ]; then RUNS=(
  "densenet121-eager|--model densenet121 --batch-size 32"
  "swin-t-eager|--model swin_t --batch-size 32"
  "regnet-eager|--model regnet_y_400mf --batch-size 64"
  "gpt2-seq128-eager|--model gpt2 --seq-len 128 --batch-size 16"
  "transformer-512x4-bf16-eager|--model transformer --width 512 --depth 4 --seq-len 128 --batch-size 32 --amp bf16"
  "resnet18-bf16-inductor|--model resnet18 --batch-size 128 --amp bf16 --dynamo inductor"
  "widemlp-eager|--model toy --width 2048 --depth 8 --batch-size 512"
); else RUNS=(
  "gpt2-inductor-bf16|--model gpt2 --seq-len 512 --batch-size 8 --amp bf16 --dynamo inductor"
  "vit-inductor-bf16|--model vit_b_16 --batch-size 32 --amp bf16 --dynamo inductor"
  "resnet50-inductor|--model resnet50 --batch-size 32 --dynamo inductor"
  "smallmlp-inductor|--model toy --width 256 --depth 48 --batch-size 64 --dynamo inductor"
); fi
{
  python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
  t0=$(date +%s)
  for spec in "${RUNS[@]}"; do
    name=${spec%%|*}; opts=${spec#*|}
    if [ -n "${DEADLINE:-}" ] && [ $(( $(date +%s) - t0 )) -gt "$DEADLINE" ]; then echo "### $name: skipped (deadline)"; continue; fi
    echo "### $name: $opts"; start=$(date +%s)
    $TK $opts --out "$OUT/runs_$PART/$name" 2>&1 | grep -v "^USDT" | tail -4
    echo "took $(( $(date +%s) - start )) s"
  done
} 2>&1 | tee "$OUT/log_$PART.txt"
tar czf "$OUT/runs_$PART.tar.gz" -C "$OUT" "runs_$PART" && rm -rf "$OUT/runs_$PART"
