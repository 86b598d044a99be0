"""Compute kernels slowed by the communication kernels that ran beside them.

On one GPU, an NCCL kernel takes SMs and memory bandwidth from the compute kernels it overlaps: on
2 x H200 the same GEMM took 25-31 % longer while an allreduce ran (docs/whatif.md). The replay keeps
every kernel's measured duration, so a scenario that removes the communication would keep that slowdown.

From the trace, per rank and compute kernel name: the median duration of its instances that overlapped
no communication kernel of the rank (*alone*) and of those that overlapped one (*beside*), each from at
least :data:`MIN_INSTANCES` instances; the kernel's slowdown is beside / alone where that exceeds 1 (else
1: no slowdown shown). ``--world-size 1`` (no peer, no collective) gives each instance that ran beside
communication its duration divided by its kernel's slowdown (:func:`relieve`).

**Scenarios that keep the collectives but move, merge or shorten them** (bucket caps, the first bucket,
the comm hook, bandwidth, more ranks) change which compute kernels run beside communication and for how
much of their length (:func:`readjust`). Per rank and compute kernel name, from the
recorded window (where durations and overlaps belong together), a :class:`Profile`: the slowdown ``s``
(median duration beside / alone, as above, compute kernels only) and ``f0``, the median share of a beside
instance's duration that overlapped communication. A kernel overlapped for the share ``f`` of its length
runs ``1 + (s - 1) min(1, f / f0)`` times its alone duration: as slow as the recorded beside instances from
the share they typically had up, less below it (a sliver of overlap costs a sliver). The scenario is
evaluated once with the recorded durations; each modelled kernel's duration is then multiplied by its
factor at its share in the scenario's timeline over its factor at its share in the baseline prediction's
(so a change that moves nothing changes nothing), and the scenario is evaluated again. One pass: a second
and third moved the GPU-bound predictions of the committed 4 x H200 runs away from the measurement (the bf16
hook from +1.3 / +1.7 to +4.8 / +3.6 and +6.0 / +5.4 %, measured +0.4 / +0.2 %): the re-timed kernels move the
collectives onto other kernels, which the next pass slows in turn; the passes do not settle. A ratio above
:data:`MAX_SLOWDOWN` is taken as one kernel name run at several sizes (an elementwise kernel of 1.2 us alone
and ~32 us beside gave 26x on a 2 x H200 run), not as contention, and not used; the largest slowdown of one
GEMM beside an allreduce measured on 2 and 4 x H200 was 1.46 (docs/whatif.md).
Not modelled: kernels that only ever ran beside communication, or never did (no alone or no beside duration
to compare), a real slowdown above the bound (a SIMT GEMM ran 1.98x slower beside long allreduces on 2 x H200),
and a network change's own effect on the slowdown (fewer NCCL channels take fewer SMs). Keying the profiles by
name and launch grid (kineto's ``grid``/``block`` args, which the decode does not keep) was checked on the raw
traces and not taken up: on the committed GPU-bound MLPs it models the same 63 % / 35 % of the compute
time beside communication as the name alone; on a CPU-bound bf16 transformer it models less (20 % against 35 %:
fewer instances per key, more keys above the bound or on one side only), so the ratios above the bound there are
not one name at two grid sizes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tracekit.analyses import intervals as iv
from tracekit.replay.graph import Graph
from tracekit.traces.traceset import TraceSet

if TYPE_CHECKING:
    from tracekit.replay.family import Context

MIN_INSTANCES = 2
#: the largest per-name slowdown :func:`readjust` takes as contention (module doc)
MAX_SLOWDOWN = 1.5


def beside_comm(start: np.ndarray, end: np.ndarray, comm: np.ndarray) -> np.ndarray:
    """Per GPU operation: did it overlap (by more than an instant) any operation flagged in ``comm``?"""
    cs, ce = start[comm], end[comm]
    order = np.argsort(cs, kind="stable")
    cs, ce = cs[order], np.maximum.accumulate(ce[order]) if ce.size else ce
    # the last communication op starting before this op ends; its running max end tells if any is still on
    k = np.searchsorted(cs, end, side="left") - 1
    hit = (k >= 0) & (ce[np.maximum(k, 0)] > start) if cs.size else np.zeros(start.size, dtype=bool)
    return hit & ~comm


def _ratios(names: np.ndarray, dur: np.ndarray, beside: np.ndarray,
            rows: np.ndarray | None = None) -> Iterator[tuple[int, float, np.ndarray]]:
    """(name code, median duration beside / median alone, the name's beside rows) of each name among ``rows``
    (all when None) with at least :data:`MIN_INSTANCES` instances on both sides and a positive alone median."""
    of = np.ones(names.size, dtype=bool) if rows is None else rows
    for code in np.unique(names[beside & of]).tolist():
        mine = of & (names == code)
        a, b = dur[mine & ~beside], dur[mine & beside]
        if a.size >= MIN_INSTANCES and b.size >= MIN_INSTANCES and np.median(a) > 0:
            yield code, float(np.median(b) / np.median(a)), mine & beside


def slowdowns(names: np.ndarray, dur: np.ndarray, beside: np.ndarray) -> dict[int, float]:
    """Kernel name code -> slowdown (> 1) beside communication (module doc)."""
    return {code: s for code, s, _ in _ratios(names, dur, beside) if s > 1.0}


def relieve(g: Graph, traces: TraceSet, comm: dict[int, np.ndarray]) -> tuple[int, int]:
    """Give every compute kernel that ran beside communication its alone duration, in place (``g`` is a
    scenario's copy). Returns (kernels shortened, kernels that ran beside communication)."""
    done = total = 0
    orig_start, orig_end = g.orig_arrays()
    for rt in traces:
        mask = comm.get(rt.rank)
        info = g.find_rank(rt.rank)
        if mask is None or info is None or info.gpu is None or not mask.any():
            continue
        nodes = np.asarray(info.gpu_node)[:mask.size]
        start, end = orig_start[nodes], orig_end[nodes]
        names = rt.gpu_column("name")[:mask.size]
        beside = beside_comm(start, end, mask)
        slow = slowdowns(names, end - start, beside)
        total += int(beside.sum())
        for i in np.flatnonzero(beside).tolist():
            s = slow.get(int(names[i]))
            if s is not None:
                v = int(nodes[i])
                g.dur[v] = int(round(g.dur[v] / s))
                done += 1
    return done, total


@dataclass(frozen=True)
class Profile:
    """How one compute kernel name ran beside communication in the recorded window (module doc)."""

    #: median duration of the instances that overlapped communication / of those that did not (> 1)
    slowdown: float
    #: median share of an overlapping instance's duration during which communication ran, (0, 1]
    share: float

    def factor(self, f: np.ndarray) -> np.ndarray:
        """Duration / alone duration at overlapped share ``f``: 1 at 0, ``slowdown`` from ``share`` up."""
        return 1.0 + (self.slowdown - 1.0) * np.minimum(1.0, f / self.share)


def overlap_share(start: np.ndarray, end: np.ndarray, comm: np.ndarray) -> np.ndarray:
    """Per GPU operation: the share of its duration ``[start, end)`` covered by the union of the
    operations flagged in ``comm`` (0 for an operation of no length)."""
    cs, ce = iv.union(start[comm], end[comm])
    if cs.size == 0:
        return np.zeros(start.size)
    before = np.concatenate([[0], np.cumsum(ce - cs)])  # union length of the intervals before each one

    def covered(t: np.ndarray) -> np.ndarray:  # union length in (-inf, t)
        k = np.searchsorted(cs, t, side="right") - 1
        j = np.maximum(k, 0)
        return np.where(k >= 0, before[j] + np.clip(np.minimum(t, ce[j]) - cs[j], 0, None), 0)

    length = end - start
    return np.where(length > 0, (covered(end) - covered(start)) / np.maximum(length, 1), 0.0)


def share_beside(start: np.ndarray, end: np.ndarray, ops: np.ndarray, others: np.ndarray | list[int]) -> np.ndarray:
    """Per node of ``ops``: the share of its duration covered by the union of the nodes ``others``
    (:func:`overlap_share`; ``start`` / ``end``: every node's times)."""
    nodes = np.concatenate([np.asarray(ops, dtype=np.int64), np.asarray(others, dtype=np.int64)])
    flag = np.zeros(nodes.size, dtype=bool)
    flag[len(ops):] = True
    return overlap_share(start[nodes], end[nodes], flag)[:len(ops)]


def profiles(names: np.ndarray, dur: np.ndarray, share: np.ndarray, compute: np.ndarray) -> dict[int, Profile]:
    """Kernel name code -> :class:`Profile`, from one rank's recorded compute kernels (``compute``: which rows
    are; ``share``: each row's overlapped share). Names with fewer than :data:`MIN_INSTANCES` instances on either
    side, or a slowdown outside (1, :data:`MAX_SLOWDOWN`], get none."""
    return {code: Profile(s, float(np.median(share[hit])))
            for code, s, hit in _ratios(names, dur, share > 0, compute) if 1.0 < s <= MAX_SLOWDOWN}


def readjust(g: Graph, ctx: Context, comm: dict[int, np.ndarray],
             times: tuple[np.ndarray, np.ndarray]) -> tuple[int, int]:
    """Scale, in place, the duration of every modelled compute kernel of scenario graph ``g`` by its factor at
    its overlapped share in ``times`` (one evaluation of ``g``; ``comm``: the scenario's communication masks)
    over its factor in the baseline prediction (``ctx.base_times``) (module doc). Returns (kernels whose
    duration changed, kernels modelled)."""
    rec_s, rec_e = g.orig_arrays()
    base_s, base_e = ctx.base_times if ctx.base_times is not None else (rec_s, rec_e)
    changed = modelled = 0
    for rt in ctx.traces:
        c0, compute, info = ctx.comm.get(rt.rank), ctx.compute.get(rt.rank), g.find_rank(rt.rank)
        if c0 is None or compute is None or info is None or info.gpu is None or not c0.any():
            continue
        n = c0.size
        nodes = np.asarray(info.gpu_node)
        names, comp = rt.gpu_column("name")[:n], compute[:n] & ~c0
        prof = profiles(names, rec_e[nodes[:n]] - rec_s[nodes[:n]],
                        overlap_share(rec_s[nodes[:n]], rec_e[nodes[:n]], c0), comp)
        if not prof:
            continue
        f_base = overlap_share(base_s[nodes[:n]], base_e[nodes[:n]], c0)
        f_new = overlap_share(times[0][nodes], times[1][nodes], comm[rt.rank][:nodes.size])[:n]
        for code, p in prof.items():
            idx = np.flatnonzero(comp & (names == code))
            modelled += idx.size
            ratio = p.factor(f_new[idx]) / p.factor(f_base[idx])
            for v, r in zip(nodes[idx].tolist(), ratio.tolist()):
                if r != 1.0:
                    g.dur[v] = int(round(g.dur[v] * r))
                    changed += 1
    return changed, modelled
