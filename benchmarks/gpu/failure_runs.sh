#!/usr/bin/env bash
# The NCCL side of failure diagnosis (docs/failures.md): does the flight-recorder path work where NCCL is real?
# Usage (device machine, repo root): OUT=/some/dir bash benchmarks/gpu/failure_runs.sh
#
# 1 GPU: (a) a rank that raises after NCCL collectives ran: its flight recorder is dumped with
#        torch's _dump_nccl_trace into fr/rank_0 and read back with torch's analyser
#        (run.json failure.flight_recorder.last_entered["0"].op starts with "nccl:");
#        (b) a clean run: status ok, progress "done", no flight-recorder dump.
# 2+ GPUs (optional, NPROC=2): (c) rank 1 SIGSTOPs itself in step 4 backward; rank 0's NCCL watchdog
#        times out and (TORCH_NCCL_DUMP_ON_TIMEOUT) dumps fr/rank_0 itself; the launcher must name rank 1.
# What to look for: log.txt lines starting with "CHECK" (PASS/FAIL), and $OUT/*/run.json.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # NCCL settings, PYTHONPATH, SHAPES, TR, left, host_facts
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
NPROC=${NPROC:-1}
TK="python3 -m tracekit"
SMALL="--device cuda --model toy --width 1024 --depth 4 --batch-size 32 --warmup 2 --steps 3 --profile-wait 0 --profile-warmup 1 --profile-steps 2"
check() {  # check NAME PYTHON-EXPR-over-m(run.json) ; prints CHECK PASS/FAIL
  python3 - "$1" "$2" <<'EOF'
import json, sys
name, expr = sys.argv[1], sys.argv[2]
try:
    m = json.load(open(f"{name}/run.json"))
    ok = bool(eval(expr, {"m": m}))
except Exception as e:  # noqa: BLE001
    ok, m = False, {"error": repr(e)}
print("CHECK", "PASS" if ok else "FAIL", name, expr)
if not ok:
    print(json.dumps(m.get("failure", m), indent=1)[:4000])
EOF
}
{
  python3 -c "import torch, torch.distributed as d; c=torch._C._distributed_c10d
print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'nccl', torch.cuda.nccl.version())
print('dump functions', [n for n in ('_dump_nccl_trace', '_dump_fr_trace') if hasattr(c, n)])
import importlib.util as u; print('fr analyser', u.find_spec('torch.distributed.flight_recorder') is not None)"

  echo "### (a) a rank raises after NCCL collectives"
  TRACEKIT_TEST_FAULT="rank=0,phase=write manifest,action=raise" $TK profile --nproc 1 $SMALL --out "$OUT/raise"; echo "exit $?"
  ls -la "$OUT/raise" "$OUT/raise/fr"
  check "$OUT/raise" 'm["status"] == "failed" and m["failure"]["culprits"][0]["how"] == "raised"'
  check "$OUT/raise" 'm["failure"]["flight_recorder"]["unavailable"] is None and m["failure"]["flight_recorder"]["dumps"] == [0]'
  check "$OUT/raise" 'm["failure"]["flight_recorder"]["last_entered"]["0"]["op"].startswith("nccl:")'
  python3 -c "import json; print(json.dumps(json.load(open('$OUT/raise/run.json'))['failure']['flight_recorder'], indent=1))"

  echo "### (b) a clean run with the flight recorder on"
  $TK profile --nproc 1 $SMALL --out "$OUT/ok"; echo "exit $?"
  check "$OUT/ok" 'm["status"] == "ok"'
  python3 -c "import pathlib; p=pathlib.Path('$OUT/ok'); print('progress:', (p/'rank0.progress').read_text().strip()); print('fr files:', list((p/'fr').glob('*')) if (p/'fr').is_dir() else None)"
  $TK analyze "$OUT/ok" > "$OUT/ok_analyze.txt"; echo "analyze exit $?"

  if [ "$NPROC" -ge 2 ] && [ "$(python3 -c 'import torch; print(torch.cuda.device_count())')" -ge 2 ]; then
    echo "### (c) SIGSTOP rank 1 on NCCL: the watchdog dumps, the launcher names rank 1"
    time TRACEKIT_TEST_FAULT="rank=1,phase=backward,step=4,action=stop" $TK profile --nproc 2 $SMALL --timeout 30 --out "$OUT/stop"; echo "exit $?"
    ls -la "$OUT/stop" "$OUT/stop/fr"
    check "$OUT/stop" '[c["rank"] for c in m["failure"]["culprits"]] == [1]'
    check "$OUT/stop" '0 in m["failure"]["flight_recorder"]["dumps"]'
  else
    echo "### (c) skipped: needs NPROC=2 and 2 GPUs (NCCL refuses two ranks on one GPU)"
  fi
} 2>&1 | tee "$OUT/log.txt"
