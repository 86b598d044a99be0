"""Held-out check of the bucket timeline's ``ready_gpu_ns`` rule on fresh runs (comm hooks especially): per
bucket, the simpler rule (the latest end of any compute kernel launched before the allreduce) and the
current one (... that had ended when its kernel started: tracekit.analyses.timeline), and the comm-stream
backlog ``queue_us`` under each. Prints one JSON line per run folder.

Usage (a 2-GPU host, repo root)::

    TK="python3 -m tracekit profile --warmup 5 --steps 20 --profile-steps 3 --nproc 2 --bucket-cap-mb 25"
    $TK --model toy --width 4096 --depth 8 --batch-size 64 --comm-hook bf16 --out runs/toy_bf16
    $TK --model transformer --width 1024 --depth 8 --seq-len 512 --batch-size 8 --amp bf16 --comm-hook bf16 --out runs/tfm_bf16
    python3 benchmarks/gpu/check_ready_gpu.py runs/*
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np

import tracekit
from tracekit.analyses.classify import COMPUTE, class_codes, class_mask
from tracekit.traces import loader


def check(run: str) -> dict:
    """The comparison for one run folder (module doc)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tracekit.analyze(run)
        ts = loader.load(run)
    t = res.tables["bucket_timeline"]
    out = {"run": run, "buckets": int(len(t))}
    old_q = []
    for rk, rt in ts.ranks.items():
        cls = class_codes(rt)
        k = class_mask(cls, COMPUTE) & (rt.gpu_column("launch_ts_ns") >= 0)
        lt, end = rt.gpu_column("launch_ts_ns")[k], rt.gpu_column("end_ns")[k]
        sub = t[t["rank"] == rk]
        for launch, start in zip(sub["launch_ns"].to_numpy(), sub["start_ns"].to_numpy()):
            m = lt <= launch
            old = end[m].max() if m.any() else -1
            old_q.append((start - max(old, launch)) / 1e3)
    old_q = np.array(old_q)
    q = t["queue_us"].to_numpy()
    out.update({"new_queue_min_us": float(np.nanmin(q)) if q.size else None,
                "old_queue_min_us": float(old_q.min()) if old_q.size else None,
                "old_negative": int((old_q < 0).sum()), "new_negative": int((q < 0).sum()),
                "ready_gpu_after_start": int((t["ready_gpu_ns"] > t["start_ns"]).sum())})
    return out


if __name__ == "__main__":
    for run in sys.argv[1:]:
        print(json.dumps(check(run)))
