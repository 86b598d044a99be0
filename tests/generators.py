"""Trace generators shared by the tests and the benchmarks: many small ranks cut from a real trace.

:func:`build` writes ``rank<N>.trace.json`` files, each a ~``target_bytes`` window of a real trace
(``sample_traces/fixtures/eager_ddp/rank0.trace.json.gz``, 2 x H200 eager DDP: the metadata events, the enclosing
``ProfilerStep#4`` and ``tracekit.backward`` annotations, and every CPU event in a stretch of the backward pass
that holds DDP allreduces, plus the GPU kernels/memcpys those CPU launches started and their flow events), with
``distributedInfo.rank`` and ``world_size`` rewritten and, as torch writes it, the default process group listing
all N ranks in ``pg_config``. Every copy carries the same collectives, so the cross-rank step matches each
allreduce over all N ranks. ``benchmarks/bench_many_ranks.py`` and ``benchmarks/bench_whatif_cost.py`` time
``tracekit`` on them; the tests use them as a many-rank run whose replay does not reproduce its window (a kernel
that waited behind cut-away ones now follows its launch).
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "sample_traces" / "fixtures/eager_ddp" / "rank0.trace.json.gz"
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}
#: the step whose backward the window cuts, and the annotations kept whole around it
STEP_NAME = "ProfilerStep#4"
KEEP_WHOLE = {STEP_NAME, "tracekit.backward"}


def window(doc: dict[str, Any], target_bytes: int) -> list[dict[str, Any]]:
    """The events of a ~``target_bytes`` window of ``doc`` (see module doc)."""
    ev = doc["traceEvents"]
    step = next(e for e in ev if e.get("name") == STEP_NAME)
    s0, s1 = step["ts"], step["ts"] + step["dur"]
    colls = sorted(e["ts"] for e in ev if e.get("cat") == "cpu_op" and s0 <= e.get("ts", -1) < s1
                   and "Collective name" in (e.get("args") or {}))
    start = colls[0] - 50.0  # just before the first allreduce launch of the step
    meta = [e for e in ev if e.get("ph") == "M"]
    whole = [e for e in ev if e.get("ph") == "X" and e.get("name") in KEEP_WHOLE and s0 <= e["ts"] < s1]

    def pick(span: float) -> list[dict[str, Any]]:
        cpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") not in GPU_CATS
               and e.get("cat") != "gpu_user_annotation" and start <= e.get("ts", -1) < start + span
               and e.get("name") not in KEEP_WHOLE]
        corr = {e["args"]["correlation"] for e in cpu
                if e.get("cat") in LAUNCH_CATS and "correlation" in (e.get("args") or {})}
        gpu = [e for e in ev if e.get("cat") in GPU_CATS and (e.get("args") or {}).get("correlation") in corr]
        flows = [e for e in ev if e.get("cat") == "ac2g" and e.get("id") in corr]
        return meta + whole + cpu + gpu + flows

    lo, hi = 1.0, s1 - start
    while hi - lo > 1.0:  # bisect the span to the target size
        mid = (lo + hi) / 2
        if len(json.dumps(pick(mid))) < target_bytes:
            lo = mid
        else:
            hi = mid
    return pick(lo)


def build(out_dir: Path, ranks: int, target_bytes: int = 40_000) -> dict[str, Any]:
    """Write ``rank0..rank{ranks-1}.trace.json`` into ``out_dir``; returns facts about them."""
    t0 = time.perf_counter()
    doc = json.loads(gzip.decompress(SOURCE.read_bytes()))
    events = json.dumps(window(doc, target_bytes))
    header = {k: v for k, v in doc.items() if k != "traceEvents"}
    out_dir.mkdir(parents=True, exist_ok=True)
    total = 0
    # as torch writes it (``_get_all_pg_configs``): the default group with every rank of the job, in every
    # rank's file (the events' "Process Group Ranks" args are kept as recorded)
    world = [dict(g, pg_size=ranks, ranks=list(range(ranks))) for g in header["distributedInfo"]["pg_config"]]
    for r in range(ranks):
        info = dict(header["distributedInfo"], rank=r, world_size=ranks, pg_config=world)
        text = json.dumps(dict(header, distributedInfo=info))[:-1] + ', "traceEvents": ' + events + "}"
        (out_dir / f"rank{r}.trace.json").write_text(text)
        total += len(text)
    facts = {"ranks": ranks, "bytes_total": total, "bytes_per_rank": total // ranks,
             "build_s": round(time.perf_counter() - t0, 2), "source": str(SOURCE.relative_to(REPO)),
             "pg_config": f"default group with all {ranks} ranks"}
    (out_dir / "bench_info.txt").write_text(json.dumps(facts))  # not a trace (.txt)
    return facts
