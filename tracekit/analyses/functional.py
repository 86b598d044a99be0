"""Functional collectives (``_c10d_functional::*``) and process groups of gloo traces.

Compiled autograd with DDP's python reducer, inductor's DDP fusion passes and DTensor
(tensor parallel) issue collectives through the functional API: a
``_c10d_functional::all_reduce_`` / ``all_reduce_coalesced_`` / ``all_gather_into_tensor`` ...
CPU op launches the collective (it encloses the ``c10d::*`` op and, on NCCL, the
``record_param_comms`` op), and a later ``_c10d_functional::wait_tensor`` on the same
thread waits for it: on gloo the thread blocks there until the collective is done; on
NCCL it only makes the current stream wait for the communication stream.

* :func:`launch_ops` -- for collective launch times, the enclosing functional op's name.
* :func:`wait_columns` -- per bucket, where the program waits on it (``wait_tensor``).
* :func:`gloo_thread_groups` -- gloo traces carry no process-group args. When the rank
  belongs to one group only (``distributedInfo.pg_config``), every collective is on it.
  With several groups (a device mesh) each gloo group runs its own worker threads, but their
  ids interleave with the other ranks' threads (all ranks create their groups at the same
  time on one host), so the trace alone cannot say which thread serves which group:
  ``tracekit profile`` measures it before training (:mod:`tracekit.profile.pg_probe`) and
  writes the map into the manifest; without it the group stays unknown, never guessed.
  NCCL traces name the group of every collective.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tracekit.traces.manifest import Manifest
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace

FUNCTIONAL_PREFIX = "_c10d_functional::"
WAIT_OP = "_c10d_functional::wait_tensor"
NS_PER_US = 1000.0


def _functional_ops(rt: RankTrace, wait: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(name, ts_ns, end_ns, tid)`` of the ``wait_tensor`` ops (``wait``) or the other functional
    ops, sorted by start (stable); once per rank."""
    def build() -> dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        rows = ((rt.column("kind") == schema.CPU_OP) & rt.name_hits(FUNCTIONAL_PREFIX, prefix=True)).nonzero()[0]
        rows = rows[np.argsort(rt.column("ts_ns")[rows], kind="stable")]
        names = np.array(rt.name_categories(), dtype=object)[rt.column("name")[rows]]
        is_wait = names == WAIT_OP
        return {w: (names[sel], *(rt.column(c)[rows[sel]] for c in ("ts_ns", "end_ns", "tid")))
                for w, sel in ((True, is_wait), (False, ~is_wait))}

    return rt.memo("functional_ops", build)[wait]


def launch_ops(rt: RankTrace, launch_ts: np.ndarray) -> np.ndarray:
    """Name of the functional collective op (not ``wait_tensor``) enclosing each launch time, else None."""
    names, ts, end, _ = _functional_ops(rt, wait=False)
    out = np.full(launch_ts.size, None, dtype=object)
    if names.size == 0 or launch_ts.size == 0:
        return out
    i = np.searchsorted(ts, launch_ts, side="right") - 1
    ok = (i >= 0) & (launch_ts >= 0)
    j = np.maximum(i, 0)
    ok &= end[j] >= launch_ts
    out[ok] = names[j[ok]]
    return out


def wait_columns(rt: RankTrace, launch_ns: np.ndarray, end_ns: np.ndarray, bwd_start_ns: np.ndarray,
                 launch_tid: int | None = None, to_clock: Callable[[np.ndarray], np.ndarray] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(wait_offset_us, wait_cpu_us)`` per collective (NaN where no ``wait_tensor`` follows).

    - ``wait_offset_us``: start of the first ``wait_tensor`` that begins after the launch,
      relative to ``bwd_start_ns`` (with ``to_clock``, that start is first put on the clock of
      ``bwd_start_ns``: :meth:`RankTrace.to_device_clock`; -1 there is NaN): the first point where the program waits on a collective
      after this one was launched (``schedule_comm_wait`` moves waits to just before the
      first use of the result).
    - ``wait_cpu_us``: time inside ``wait_tensor`` ops between the launch and the collective's
      end (``end_ns``): how long the launching thread sat in a wait while this collective
      was in flight. Large on gloo (the wait blocks); near zero on NCCL (the wait only
      enqueues a stream dependency; the device-side cost is the bucket's ``exposed_us``).
      Several buckets in flight at once can each count the same wait.
    """
    _, ws, we, tid = _functional_ops(rt, wait=True)
    if launch_tid is not None and ws.size:
        ws, we = ws[tid == launch_tid], we[tid == launch_tid]
    n = launch_ns.size
    if ws.size == 0 or n == 0:
        return np.full(n, np.nan), np.full(n, np.nan)
    k = np.searchsorted(ws, launch_ns, side="right")
    has = k < ws.size
    first = np.where(has, ws[np.clip(k, 0, ws.size - 1)], -1)
    if to_clock is not None:
        first = np.where(has, to_clock(first), -1)
        has &= first >= 0
    offset = np.where(has, (first - bwd_start_ns) / NS_PER_US, np.nan)
    blocked = np.empty(n)
    for idx in range(n):  # a bucket table has tens of rows per step
        lo, hi = launch_ns[idx], end_ns[idx]
        if hi <= lo:
            blocked[idx] = 0.0
            continue
        blocked[idx] = float(np.clip(np.minimum(we, hi) - np.maximum(ws, lo), 0, None).sum()) / NS_PER_US
    return offset, blocked


def manifest_gloo_threads(manifest: Manifest | None, rank: int) -> dict[str, str] | None:
    """``hardware.ranks[rank].gloo_threads`` of a tracekit profile manifest (thread id -> group), or None."""
    for h in manifest.hardware.ranks if manifest is not None and manifest.hardware else []:
        if h.rank == rank:
            return h.gloo_threads
    return None


def gloo_thread_groups(rt: RankTrace, tids: np.ndarray,
                       thread_map: dict[str, str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(pg_name, pg_desc)`` for gloo worker-thread ids ``tids`` (None where unknown; see module doc).

    ``thread_map``: thread id -> group name measured by ``tracekit profile``'s probe
    (:mod:`tracekit.profile.pg_probe`); without it, only a rank in a single group is mapped.
    """
    n = tids.size
    names, descs = np.full(n, None, dtype=object), np.full(n, None, dtype=object)
    cfg = rt.distributed_info.get("pg_config")
    groups = [g for g in cfg if isinstance(g, dict) and "pg_name" in g] if isinstance(cfg, list) else []
    desc_of = {str(g["pg_name"]): g.get("pg_desc") for g in groups}
    if thread_map:
        for i, t in enumerate(tids):
            name = thread_map.get(str(int(t)))
            if name is not None:
                names[i], descs[i] = name, desc_of.get(name)
        return names, descs
    if len(groups) == 1:
        names[:], descs[:] = str(groups[0]["pg_name"]), groups[0].get("pg_desc")
    return names, descs
