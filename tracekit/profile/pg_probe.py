"""Which gloo worker threads serve which process group, measured before training.

gloo records no process-group args in a trace (NCCL does), and each gloo group runs its own
worker threads whose ids interleave with other ranks' threads, so the analysis cannot tell
groups apart from the trace alone. With several groups (``--tp``) each rank runs a short
probe before training: under a CPU-only profiler it issues asynchronous allreduces on each
group inside a ``tracekit.pg_probe:<name>`` annotation, exports that private trace to a
temporary file and reads back which worker threads ran the ``gloo:*`` ranges of each group; it
repeats (all ranks together) until every group shows all of its worker threads.
The map (OS thread id -> group name) goes into the manifest (``hardware.ranks[].gloo_threads``);
``tracekit analyze`` uses it to name the group of every gloo collective. Worker threads live as
long as their group, so the ids stay valid for the profiled window. A thread the probe did
not see stays unmapped (its collectives' group is reported unknown, never guessed).
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

PROBE_PREFIX = "tracekit.pg_probe:"
#: asynchronous allreduces per group and pass, of PROBE_NUMEL floats each. One pass usually lets every
#: worker thread of a group take one, but not always: on a loaded 2-CPU machine one thread sometimes
#: took all 24 of a group's allreduces, and the other thread's collectives were then left without a
#: group. So the ranks repeat the pass (agreeing by an allreduce) until every group shows as many
#: threads as gloo gives it, at most MAX_PASSES times, each pass with more work than the last.
ROUNDS = 24
PROBE_NUMEL = 1 << 16
MAX_PASSES = 6
#: gloo's worker threads per group when the backend cannot say (``ProcessGroupGloo::Options`` default)
DEFAULT_GLOO_THREADS = 2


def group_name(group: Any) -> str | None:
    """The process group's name as the trace's ``pg_config`` spells it."""
    name = getattr(group, "group_name", None)
    if name is None:
        import torch.distributed as dist

        try:
            name = dist.distributed_c10d._get_process_group_name(group)
        except Exception:  # noqa: BLE001 - torch without the helper
            return None
    return str(name)


def gloo_threads_of(group: Any) -> int:
    """How many worker threads gloo runs for ``group`` (its options; the gloo default where torch cannot say)."""
    import torch

    try:
        n = int(group._get_backend(torch.device("cpu")).options._threads)
    except Exception:  # noqa: BLE001 - torch < 2.6 exposes no backend options
        return DEFAULT_GLOO_THREADS
    return n if n > 0 else DEFAULT_GLOO_THREADS


def gloo_thread_map(groups: list[Any]) -> dict[str, str]:
    """``{os thread id: group name}`` for the gloo worker threads of ``groups`` (every rank calls this).

    Probes in passes until each group's map holds all of its worker threads on every rank, or
    MAX_PASSES passes ran; a thread no pass saw stays unmapped. Collective: every rank of the
    default group must call it with the same groups.
    """
    import torch
    import torch.distributed as dist

    names = [group_name(g) for g in groups]
    want = {name: gloo_threads_of(g) for g, name in zip(groups, names)}
    hits: list[tuple[str, str]] = []
    for i in range(MAX_PASSES):
        # matched within each pass (its trace has its own time base); ambiguous across all passes
        hits += _thread_hits(_probe_pass(groups, names, rounds=ROUNDS << i))
        found = _unambiguous(hits)
        short = any(list(found.values()).count(name) < n for name, n in want.items())
        flag = torch.tensor([int(short)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)  # every rank must take the same number of passes
        if not flag.item():
            break
    return found


def _probe_pass(groups: list[Any], names: list[str | None], rounds: int) -> list[dict[str, Any]]:
    """One probe pass under a private CPU profiler: ``rounds`` async allreduces per group, each inside the
    group's annotation; returns the pass's trace events."""
    import torch
    import torch.distributed as dist
    from tracekit.profile.quiet import drop_kineto_markers

    t = torch.ones(PROBE_NUMEL)
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    with drop_kineto_markers():  # only around start/stop, which print kineto's markers
        prof.start()
    try:
        for g, name in zip(groups, names):
            with torch.profiler.record_function(f"{PROBE_PREFIX}{name}"):
                works = [dist.all_reduce(t.clone(), group=g, async_op=True) for _ in range(rounds)]
                for w in works:
                    w.wait()
    finally:
        with drop_kineto_markers():
            prof.stop()
    fd, path = tempfile.mkstemp(suffix=".json", prefix="tracekit-pg-probe-")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as fh:
            return json.load(fh).get("traceEvents", [])
    finally:
        os.unlink(path)


def threads_by_group(events: list[dict[str, Any]]) -> dict[str, str]:
    """From a probe trace: each ``gloo:*`` range's thread -> the group whose probe annotation contains its
    start. A thread seen under two groups is dropped (ambiguous)."""
    return _unambiguous(_thread_hits(events))


def _unambiguous(hits: list[tuple[str, str]]) -> dict[str, str]:
    """thread id -> group of ``(thread id, group)`` hits, without the threads hit under two groups."""
    seen: dict[str, set[str]] = {}
    for tid, name in hits:
        seen.setdefault(tid, set()).add(name)
    return {tid: next(iter(names)) for tid, names in seen.items() if len(names) == 1}


def _thread_hits(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(thread id, group name)`` of each ``gloo:*`` range of one probe trace that starts inside exactly one
    group's probe annotation."""
    spans = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), e["name"][len(PROBE_PREFIX):])
             for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith(PROBE_PREFIX)]
    out = []
    for e in events:
        if e.get("ph") != "X" or not str(e.get("name", "")).startswith("gloo:"):
            continue
        ts = float(e["ts"])
        hit = [name for s, end, name in spans if s <= ts <= end]
        if len(hit) == 1:
            out.append((str(e.get("tid")), hit[0]))
    return out
