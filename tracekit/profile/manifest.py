"""The run manifest ``run.json``: written by rank 0 of ``tracekit profile``, read by ``tracekit analyze``.

This module must stay importable without torch (analyze imports it).

Top-level keys (``schema_version`` 1)::

    schema_version   int, 1
    tool             {"name": "tracekit", "version": str}
    created_utc      ISO-8601 time the manifest was written
    command_line     list[str], the argv that started the run
    status           "ok"
    config           the resolved ProfileConfig: every option (see README.md, "tracekit profile"),
                     plus "optimize_ddp_resolved"
    run              {"world_size", "device": "cuda"|"cpu", "backend": "nccl"|"gloo",
                      "launcher": "elastic"|"torchrun"|"slurm"|"single", "notice": str|None,
                      "model_kind": "toy"|"transformer"|"torchvision"|"hf"|"factory",
                      "examples_per_step_per_rank", "global_batch", "parallel_applied": {...}}
    versions         {"tracekit", "python", "torch", "cuda", "nccl", "cudnn", "platform"}
                     (null when not applicable, e.g. cuda on a CPU build)
    hardware         {"ranks": [{"rank", "local_rank", "hostname", "pid", "device", "gpu_name",
                                 "gloo_threads" (gloo with --tp: {thread id: group name})}],
                      "topology": str|None, "topology_unavailable": str|None}
    timings          {"method": str, "warmup_step_s": {rank: [..]},
                      "per_rank": [{"rank", "steps", "sec_per_iter": {"p50","p75","p90","p95"},
                                    "mean_sec_per_iter", "examples_per_step",
                                    "examples_per_sec": {"p50",...}, "step_s": [..]}],
                      "overall": {same keys, slowest rank per step, global batch, "definition"},
                      per rank also "profiled_step_s": [..] (the profiler's recorded steps, timed the
                      same way) and "profiled_mean_sec_per_iter";
                      "profiled": {"mean_sec_per_iter", "step_s" (slowest rank per step), "activities",
                                   "definition"}}
    profile_window   {"wait", "warmup", "active", "first_step", "record_shapes", "with_stack", "activities"}
    compile          {"per_rank": [{"rank", "enabled", "backend", "optimize_ddp", "fullgraph",
                       "graph_count", "frames": {"total","ok"},
                       "graph_breaks": {"total","model","ddp_wrapper",
                                        "reasons": [{"reason","detail","count","origin"}]},
                       "ddp_optimizer": {"intended_splits", "graphs": [{"graph","bucket_cap_bytes",
                                          "bucket_count","buckets": [{"index","bytes","params"}]}]}|None,
                       "recompiles": {"count", "events": [{"compile_id","function","reason"}]},
                       "skipped_frames": [{"function","file","line","fail_type","reason","detail"}],
                       "compile_time_s", "frame_compiles": [...], "compiles_after_warmup",
                       "compiled_autograd_captures", "inductor_ddp_buckets",
                       "unimplemented": [{"reason","count"}], "unavailable": {fact: reason}}]}
                     (only "rank","enabled","backend","optimize_ddp","fullgraph" when eager)
    buckets          {"ddp_optimizer": <rank 0's compile.ddp_optimizer.graphs> | None,
                      "reducer": {"bucket_cap_bytes", "bucket_sizes_bytes": [..],
                                  "rebuilt_bucket_sizes_bytes": [..]|None,
                                  "rebuilt_per_bucket_param_indices": str|None, ...}|None,
                      "inductor_ddp_buckets": int|None,
                      "compiled_autograd": {"graphs": [{"graph", "nodes", "dynamo_graphs", "allreduce_calls",
                                            "fullgraph", "fullgraph_failed"?}],
                                            "inductor_ddp_fusion": {"fuse_ddp_communication", "passes",
                                                                    "bucket_size_mb"}|None}|None,
                      "unavailable": {what: reason}}
    bucket_timing    {"method": str, "per_rank": [{"rank", "clock": "cuda_events"|"host",
                       "steps": [{"step", "step_us", "bwd_end_us", "comm_us", "exposed_us", "overlap_us",
                                  "overlap_pct", "buckets": [{"order", "index", "bytes", "ready_us",
                                  "start_us", "end_us", "comm_us", "exposed_us", "overlap_us"}]}],
                       "summary": {"steps", "step_us", "buckets_per_step", "comm_us_per_step",
                                   "exposed_us_per_step", "overlap_pct"}}
                      | {"rank", "unavailable": reason}]}
                     (times in µs from the step start; see tracekit.profile.bucket_events)
    traces           [{"rank", "file" (relative to the run folder), "bytes"}]

A fact that could not be read is null, with the reason next to it
(``unavailable`` maps) -- readers must accept nulls.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MANIFEST_NAME = "run.json"
SCHEMA_VERSION = 1
TOP_LEVEL_KEYS = (
    "schema_version", "tool", "created_utc", "command_line", "status", "config", "run", "versions",
    "hardware", "timings", "profile_window", "compile", "buckets", "bucket_timing", "traces",
)


def read_manifest(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Return the manifest of a run folder, or None when the folder has none or it is unreadable.

    ``run_dir`` may also be the path of the ``run.json`` file itself. Never raises
    for a missing or malformed file (analyze works on bare traces too).
    """
    p = Path(run_dir)
    if p.is_dir():
        p = p / MANIFEST_NAME
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_manifest(run_dir: str | os.PathLike[str], manifest: dict[str, Any]) -> Path:
    """Write ``run.json`` atomically (temporary file in the same folder, then rename)."""
    final = Path(run_dir) / MANIFEST_NAME
    tmp = final.with_name(f".{MANIFEST_NAME}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1, default=str)
        fh.write("\n")
    os.replace(tmp, final)
    return final
