# What every GPU batch script sets up (sourced): the NCCL settings these hosts need, the checkout on
# PYTHONPATH, the shapes (gpu_shapes.sh), `left NAME` (false, and says so, once DEADLINE seconds have passed
# since T0) and `host_facts` (the GPUs, torch and CPUs). Sourced by gpu_contention_check.sh and gpu_phase_check.sh.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
source "$(dirname "${BASH_SOURCE[0]}")/gpu_shapes.sh"  # SHAPES
T0=$(date +%s)
TR="python3 -m torch.distributed.run --standalone"
left() { local t=$(( $(date +%s) - T0 )); if [ $t -gt "${DEADLINE:-480}" ]; then echo "### skipped $1 (at $t s)"; return 1; fi
         echo "### $1 (at $t s)"; }
host_facts() {
  nvidia-smi -L; python3 -c "import torch, os; print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'cpus', os.cpu_count())"
}
