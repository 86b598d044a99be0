#!/usr/bin/env bash
# The profiler-distortion evidence on 2 GPUs, in one go: bash benchmarks/gpu/distortion_runs.sh OUTDIR
#   runs/h200x2_resnet50_inductor    tracekit profile --model resnet50 --dynamo inductor (2 profiled steps)
#   runs/h200x2_gpt2_inductor_bf16   tracekit profile --model gpt2 --amp bf16 --dynamo inductor
#   runs/h200x2_default_inductor     tracekit profile --dynamo inductor (the default workload)
#   runs/h200x2_resnet50_inductor_cudaonly   --profile-activities cuda (what analyze gets without the CPU side)
#   bench_distortion.jsonl / bench.md  benchmarks/bench_distortion.py (the issue's table + event overhead)
# Everything lands under OUTDIR (tar it afterwards). CPU dry run of the same steps with tiny models: DRY=1 bash benchmarks/gpu/distortion_runs.sh /tmp/dry
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${1:?usage: distortion_runs.sh OUTDIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT/runs"
if [ "${DRY:-0}" = 1 ]; then
  DEV="--device cpu"; R50="--model toy --width 256 --depth 4"; GPT="--model transformer --width 128 --depth 2"
  DEF="--dynamo aot_eager --width 512 --depth 4"; BENCH="--device cpu --variants toy:eager,toy:eager:builtin,toy:aot_eager --width 256 --depth 4 --steps 3 --reps 2 --profile-steps 2"
  CUDAONLY=""; T=120
else
  DEV="--device cuda"; R50="--model resnet50"; GPT="--model gpt2"; DEF="--dynamo inductor"; BENCH="--nproc 2"
  CUDAONLY=1; T=200
fi
run() {
  name=$1; shift
  echo "=== $name: tracekit profile $* (t=$(date +%s))"
  timeout $T $PY -m tracekit profile --nproc 2 $DEV --out "$OUT/runs/$name" "$@" > "$OUT/runs/$name.log" 2>&1
  echo "=== $name rc=$? (t=$(date +%s))"; grep -v '^USDT' "$OUT/runs/$name.log" | tail -n 4
}
nvidia-smi -L 2>/dev/null
$PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
run h200x2_resnet50_inductor $R50 $( [ "${DRY:-0}" = 1 ] && echo --dynamo aot_eager || echo --dynamo inductor ) --warmup 5 --steps 20 --profile-steps 2
run h200x2_gpt2_inductor_bf16 $GPT --amp bf16 $( [ "${DRY:-0}" = 1 ] && echo --dynamo aot_eager || echo --dynamo inductor ) --warmup 5 --steps 20 --profile-steps 2
run h200x2_default_inductor $DEF
echo "=== bench (t=$(date +%s))"
timeout 330 $PY benchmarks/bench_distortion.py $BENCH --timeout 150 --out "$OUT/bench_distortion.jsonl" > "$OUT/bench.md" 2> "$OUT/bench.log"
echo "=== bench rc=$? (t=$(date +%s))"; cat "$OUT/bench.md"; grep -v '^USDT\|^W1\|OMP\|^\*\*\*' "$OUT/bench.log" | tail -n 15
[ -n "$CUDAONLY" ] && run h200x2_resnet50_inductor_cudaonly $R50 --dynamo inductor --warmup 5 --steps 20 --profile-steps 2 --profile-activities cuda
du -sh "$OUT"/runs/* 2>/dev/null
