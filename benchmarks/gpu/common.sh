# What every GPU experiment batch of benchmarks/gpu/ sets up (sourced, from the repo root): the NCCL settings these
# hosts need (NVLink multicast off), the checkout on PYTHONPATH, the model shapes by name (SHAPES),
# `TR` (torchrun, standalone), `left NAME` (false, and says so, once DEADLINE seconds have passed since T0) and
# `host_facts` (the GPUs, torch and CPUs). A batch may set its own DEADLINE, `left` or T0 after sourcing.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# The models the batches run, by name: `tracekit profile` / benchmarks/gpu/paired_ddp_variants.py options.
declare -A SHAPES=(
  [toy4096]="--model toy --width 4096 --depth 8 --batch-size 64"
  [toy2048x16]="--model toy --width 2048 --depth 16 --batch-size 64"
  [gpubound]="--model toy --width 4096 --depth 16 --batch-size 512"
  [tfm1024]="--model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 8 --amp bf16"
  [tfm768x12]="--model transformer --width 768 --depth 12 --seq-len 512 --batch-size 8 --amp bf16"
  [tfmbig]="--model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 64 --amp bf16"
  [gpt2bf16]="--model gpt2 --seq-len 512 --batch-size 4 --amp bf16"
)
T0=$(date +%s)
TR="python3 -m torch.distributed.run --standalone"
left() { local t=$(( $(date +%s) - T0 )); if [ $t -gt "${DEADLINE:-480}" ]; then echo "### skipped $1 (at $t s)"; return 1; fi
         echo "### $1 (at $t s)"; }
host_facts() {
  nvidia-smi -L; python3 -c "import torch, os; print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'cpus', os.cpu_count())"
}
