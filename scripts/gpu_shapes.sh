# The models the GPU scripts run, by name: `tracekit profile` / scripts/paired_ddp_variants.py options.
# Sourced by scripts/gpu_grow_check.sh, gpu_bucket_layouts.sh, gpu_ws1_check.sh, gpu_ws1_solo.sh and gpu_common.sh.
declare -A SHAPES=(
  [toy4096]="--model toy --width 4096 --depth 8 --batch-size 64"
  [toy2048x16]="--model toy --width 2048 --depth 16 --batch-size 64"
  [gpubound]="--model toy --width 4096 --depth 16 --batch-size 512"
  [tfm1024]="--model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 8 --amp bf16"
  [tfm768x12]="--model transformer --width 768 --depth 12 --seq-len 512 --batch-size 8 --amp bf16"
  [tfmbig]="--model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 64 --amp bf16"
  [gpt2bf16]="--model gpt2 --seq-len 512 --batch-size 4 --amp bf16"
)
