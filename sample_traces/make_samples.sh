#!/usr/bin/env bash
# Regenerates sample_traces/ on a 2-GPU machine: bash sample_traces/make_samples.sh OUTDIR
# Every run: 16 x Linear(4096, 4096) fp32 (~1 GiB of gradients), bucket_cap_mb=25,
# batch 256 per rank, 5 warm-up steps (compile), 20 timed steps, profile window 1+1+3.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${1:-sample_traces}
PY=${PYTHON:-python3}
COMMON="--nproc 2 --model toy --width 4096 --depth 16 --batch-size 256 --bucket-cap-mb 25 --warmup 5 --steps 20 --profile-wait 1 --profile-warmup 1 --profile-steps 3"
run() {
  name=$1; shift
  echo "=== $name: tracekit profile $COMMON $* --out $OUT/$name"
  start=$(date +%s)
  timeout 200 $PY -m tracekit profile $COMMON "$@" --out "$OUT/$name" 2>&1 | grep -v '^USDT' | tail -n 12
  echo "=== $name rc=${PIPESTATUS[0]} took $(( $(date +%s) - start ))s"
}
[ -z "${ONLY:-}" ] && run eager_ddp
[ -z "${ONLY:-}" ] && run inductor_ddp_optimizer --dynamo inductor --optimize-ddp ddp_optimizer
[ -z "${ONLY:-}" ] && run inductor_no_optimization --dynamo inductor --optimize-ddp no_optimization
[ -z "${ONLY:-}" ] && run inductor_graph_break --dynamo inductor --optimize-ddp ddp_optimizer --graph-break-at 7
run aot_eager_python_reducer --dynamo aot_eager --optimize-ddp python_reducer
if [ "${EXTRA:-0}" = 1 ]; then
  # Both fail on torch 2.11 (inductor-compiled compiled-autograd graph: aten::_local_scalar_dense error).
  run inductor_python_reducer --dynamo inductor --optimize-ddp python_reducer
  run inductor_python_reducer_no_compiled_fwd --dynamo inductor --optimize-ddp python_reducer_without_compiled_forward
  COMMON="--nproc 2 --warmup 5 --steps 20 --profile-wait 1 --profile-warmup 1 --profile-steps 3"
  run fsdp_transformer_inductor --fsdp --model transformer --width 2048 --depth 8 --seq-len 1024 --batch-size 8 --heads 16 --amp bf16 --dynamo inductor
fi
