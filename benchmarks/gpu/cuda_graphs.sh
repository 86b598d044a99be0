#!/usr/bin/env bash
# What `tracekit whatif --cuda-graphs` is checked against: each compiled model profiled with --compile-mode default
# (the prediction's input) and run with --compile-mode reduce-overhead (its run.json timings: the measured
# unprofiled step, the truth; its compile facts: which graphs were captured). One GPU, one rank.
# Usage (device machine, repo root): OUT=/some/dir bash benchmarks/gpu/cuda_graphs.sh
#   ONLY="a b" picks models (default: the six of ORDER); MODES="reduce-overhead" runs only that mode; KEEP=all keeps
#   every reduce-overhead trace (default: mlp512x16's and resnet18's); DEADLINE (s) skips models that would start
#   after it. The h_* models are a held-out set, not in ORDER: no default or figure of the replay's model is chosen
#   on them, so they check it on models it never saw (run them with ONLY="h_mlp1024x12 h_tfm256x6 ...").
# Then here, per model (after untarring OUT/<model>.tar.gz into runs/): the prediction from the default-mode run
# against the reduce-overhead run's measured unprofiled step, and whether the models rank as measured:
#   for m in runs/*/; do python benchmarks/bench_whatif.py --baseline $m/default \
#     --variant $m/reduce-overhead:cuda-graphs=1 --out /tmp/$(basename $m).jsonl; done
#   cat /tmp/*.jsonl > benchmarks/results/whatif_cuda_graphs.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
OUT=${OUT:-gpu_out}; mkdir -p "$OUT/runs" "$OUT/warm"
TK="python3 -m tracekit"
declare -A M=(
  [mlp512x16]="--model toy --width 512 --depth 16 --batch-size 32"
  [gpt2bf16]="--model gpt2 --seq-len 128 --batch-size 2 --amp bf16"
  [resnet18]="--model resnet18 --batch-size 16"
  [tfm512bf16]="--model transformer --width 512 --depth 4 --seq-len 128 --batch-size 4 --amp bf16"
  [mlp2048x8]="--model toy --width 2048 --depth 8 --batch-size 64"
  [gpubound]="--model toy --width 4096 --depth 16 --batch-size 512"
  [h_mlp1024x12]="--model toy --width 1024 --depth 12 --batch-size 16"
  [h_tfm256x6]="--model transformer --width 256 --depth 6 --seq-len 64 --batch-size 8 --amp bf16"
  [h_mobilenet]="--model mobilenet_v2 --batch-size 16"
  [h_gpt2s256]="--model gpt2 --seq-len 256 --batch-size 4 --amp bf16"
  [h_tfm1024x4]="--model transformer --width 1024 --depth 4 --seq-len 256 --batch-size 8 --amp bf16"
)
ORDER=${ONLY:-"mlp512x16 gpt2bf16 resnet18 tfm512bf16 gpubound mlp2048x8"}
MODES=${MODES:-"default reduce-overhead"}
COMMON="--nproc 1 --dynamo inductor"
{
  host_facts
  echo "### warm the compile caches (all configs at once, results thrown away)"
  for name in $ORDER; do for mode in $MODES; do
    TORCHINDUCTOR_COMPILE_THREADS=2 $TK profile $COMMON ${M[$name]} --compile-mode $mode --warmup 3 --steps 1 \
      --profile-steps 1 --out "$OUT/warm/$name-$mode" > "$OUT/warm/$name-$mode.log" 2>&1 &
  done; done
  wait
  rm -rf "$OUT/warm"
  for name in $ORDER; do
    left "$name" || break
    for mode in $MODES; do
      $TK profile $COMMON ${M[$name]} --compile-mode $mode --warmup 6 --steps 20 --profile-steps 3 \
        --out "$OUT/runs/$name/$mode" > "$OUT/runs/$name-$mode.log" 2>&1 || echo "FAILED $name $mode"
      grep -E "step p50|profiled steps|compile \(" "$OUT/runs/$name-$mode.log"
    done
  done
} 2>&1 | tee "$OUT/log.txt"
# the default-mode runs keep their traces (the prediction's input); of the reduce-overhead ones, two keep theirs
# (a captured graph's replay in the trace), the others their run.json and logs
[ "${KEEP:-}" = all ] || \
  find "$OUT/runs" -path "*reduce-overhead*" -name "*.trace.json*" ! -path "*mlp512x16*" ! -path "*resnet18*" -delete
for name in $ORDER; do  # one archive per model (the transfer back takes files of at most 16 MiB)
  [ -d "$OUT/runs/$name" ] && tar czf "$OUT/$name.tar.gz" -C "$OUT/runs" "$name" \
    $(cd "$OUT/runs" && ls "$name"-*.log 2>/dev/null)
done
rm -rf "$OUT/runs"
ls -la "$OUT"
