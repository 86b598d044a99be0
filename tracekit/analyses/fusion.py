"""Chains of eager memory-bound kernels that a compiler would fuse, and the bytes fusing them would save.

A **chain** is a run of at least :data:`CHAIN_MIN_CALLS` consecutive GPU activities of one stream (by start,
nothing else between them on that stream) launched by distinct eager aten ops (``aten::*``) of a fusable
category (:data:`FUSABLE`: elementwise, normalisation, reduction, copies) whose output size the model knows.
Each op but the last writes its output and the next op reads it back: fusing the chain into one kernel keeps
those intermediates in registers, so it saves ``2 · Σ output bytes of every op but the last`` of device-memory
traffic (written once, read once; a lower bound: an intermediate read by several later ops saves more). At the
device's bandwidth that traffic takes ``saved_bytes / bandwidth``: the time fusion saves at least.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tracekit.analyses import peaks
from tracekit.analyses.registry import Column
from tracekit.traces import cols as C
from tracekit.traces.frames import NO_ROWS

#: the fewest distinct ops a chain has
CHAIN_MIN_CALLS = 3
FUSABLE = frozenset({"elementwise", "norm", "reduction", "memory"})
NS_PER_US = 1000.0

COLUMNS = (
    Column("rank", "rank", "the rank"),
    Column("chains_per_step", "count", "chains per ProfilerStep"),
    Column("kernels_per_step", "count", "GPU activities in the chains per ProfilerStep"),
    Column("us_per_step", "us", "summed duration of the chains' activities per ProfilerStep"),
    Column("saved_bytes_per_step", "bytes", "2 · Σ output bytes of every op of a chain but the last, per step"),
    Column("saved_us_per_step", "us", "saved_bytes_per_step / the device's memory bandwidth (null without peaks)"),
    Column("longest", "text", "the longest chain's ops (and module)"),
)


def _runs(ok: np.ndarray, stream: np.ndarray) -> list[tuple[int, int]]:
    """``[a, b)`` runs of consecutive ``ok`` positions of one stream, of at least :data:`CHAIN_MIN_CALLS`."""
    if not ok.any():
        return []
    brk = np.r_[True, (stream[1:] != stream[:-1]) | ~ok[1:] | ~ok[:-1], True]  # a run may start at each break
    edges = np.flatnonzero(brk)
    a, b = edges[:-1], edges[1:]
    keep = ok[a] & (b - a >= CHAIN_MIN_CALLS)
    return list(zip(a[keep].tolist(), b[keep].tolist()))


def chains(calls: Any, m: Any, n_steps: int, device: peaks.Device | None) -> C.Cols:
    """The rank's chains, summed per step (one row; :data:`COLUMNS` but ``rank``), or no rows for none."""
    if not calls.act_call.size:
        return NO_ROWS
    codes, first = calls.names()
    eager = np.array([str(x).startswith("aten::") for x in calls.name[first].tolist()], dtype=bool)
    eligible = eager[codes] & np.isin(m.category, list(FUSABLE)) & ~np.isnan(m.out_bytes)
    if not eligible.any():
        return NO_ROWS
    order = np.lexsort((calls.act_ts, calls.act_stream))
    call, stream = calls.act_call[order], calls.act_stream[order]
    dur = (calls.act_end - calls.act_ts)[order]
    n_chains = n_kernels = 0
    us = saved = 0.0
    longest: list[int] = []
    for a, b in _runs(eligible[call], stream):
        seq = [int(c) for j, c in enumerate(call[a:b].tolist()) if j == 0 or c != call[a + j - 1]]
        if len(set(seq)) < CHAIN_MIN_CALLS:
            continue
        n_chains += 1
        n_kernels += b - a
        us += float(dur[a:b].sum()) / NS_PER_US
        saved += 2.0 * float(np.nansum(m.out_bytes[seq[:-1]]))
        if len(seq) > len(longest):
            longest = seq
    if not n_chains:
        return NO_ROWS
    mod = m.module[longest[0]]
    text = " → ".join(str(calls.name[c]).removeprefix("aten::") for c in longest[:8]) + (
        " → ..." if len(longest) > 8 else "") + (f" (module {mod or '(model)'})" if mod is not None else "")
    per = float(n_steps)
    return {"chains_per_step": np.array([n_chains / per]), "kernels_per_step": np.array([n_kernels / per]),
            "us_per_step": np.array([us / per]), "saved_bytes_per_step": np.array([saved / per]),
            "saved_us_per_step": np.array([saved / per / (device.tbps * 1e6) if device else np.nan]),
            "longest": C.obj([text])}
