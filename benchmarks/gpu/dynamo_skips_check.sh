#!/usr/bin/env bash
# The dynamo-skip and compile checks that need a GPU (1 GPU is enough). Usage (device machine, repo root):
#   OUT=/some/dir bash benchmarks/gpu/dynamo_skips_check.sh
# What to look for in $OUT/log.txt:
#   - seq_inductor: run.json compile.per_rank[0].graph_count 0 and dynamo_skips naming
#     torch/nn/modules/container.py forward with a fix; the report's compile_skipped quotes it ("Fix: ...").
#   - wrapped_inductor: graph_count >= 1, dynamo_skips [] and no compile_skipped finding.
#   - ws1: manifest_check rows allreduces_per_step / allreduce_bytes / ddp_optimizer_vs_reducer are
#     "not applicable" (world size 1: NCCL launches no allreduce), not "mismatch".
#   - cudaonly: the profiler_distortion finding (when it fires) says "GPU activity only", never "no GPU activity".
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
TK="python3 -m tracekit"
COMMON="--nproc 1 --device cuda --warmup 3 --steps 10"
facts() {  # the compile facts of a run, one line each
  python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1] + "/run.json"))["compile"]["per_rank"][0]
print("graph_count", c.get("graph_count"), "skipped_frames", len(c.get("skipped_frames") or []))
for s in c.get("dynamo_skips") or []:
    print("  dynamo_skip", s["function"], s["file"].split("site-packages/")[-1], "|", s["reason"], "| fix:", s["fix"])
PY
}
{
  python3 -c "import torch; print('torch', torch.__version__, 'gpus', torch.cuda.device_count())"
  for f in sequential wrapped; do
    echo "### ${f}_inductor"
    $TK profile $COMMON --model tests.workloads.sequential:$f --dynamo inductor --out "$OUT/${f}_inductor"
    facts "$OUT/${f}_inductor"
    $TK analyze "$OUT/${f}_inductor" | sed -n '/^Findings/,/^Per-rank/p'
  done
  echo "### ws1 (world size 1, eager DDP, NCCL)"
  $TK profile $COMMON --model toy --width 1024 --depth 4 --batch-size 64 --out "$OUT/ws1"
  $TK analyze "$OUT/ws1" --table manifest_check
  echo "### cudaonly"
  $TK profile $COMMON --model toy --width 1024 --depth 4 --batch-size 64 --profile-activities cuda --out "$OUT/cudaonly"
  $TK analyze "$OUT/cudaonly" | sed -n '1,/^Per-rank/p'
  echo "### tests"
  python3 -m pytest -q -p no:cacheprovider tests/profile/test_dynamo_skips.py tests/analyses/test_manifest_check_world_size_one.py \
    tests/report/test_readable_figures.py 2>&1 | tail -5
} 2>&1 | tee "$OUT/log.txt"
