"""The cast kernels of DDP's compression hooks (``--comm-hook bf16|fp16``) on the replay graph.

Besides halving the bytes each fp32 allreduce moves (:func:`tracekit.replay.network.hook_factor`),
``bf16_compress_hook`` / ``fp16_compress_hook`` (``torch.distributed.algorithms.ddp_comm_hooks``) run three
elementwise passes over each bucket of E fp32 elements:

- before the allreduce, on the stream that produced the gradients: ``bucket.to(half)`` (reads 4 B, writes
  2 B an element) and ``.div_(world_size)`` in place (reads and writes 2 B): 10 B an element,
  :data:`COMPRESS_TRAFFIC` = 2.5x the bucket's fp32 bytes;
- after it: ``decompressed.copy_(compressed)`` (reads 2 B, writes 4 B): :data:`DECOMPRESS_TRAFFIC` = 1.5x.

Their time is that memory traffic at the rank's **device-copy throughput measured in the trace**: the median,
over device-to-device copies of at least :data:`MIN_COPY_BYTES`, of 2 x bytes / duration (a copy reads and
writes its bytes; kineto's ``bytes`` arg). Assumed: the casts are memory-bound and run at copy speed.

In the graph, the compress passes lengthen the compute-stream operation the bucket's allreduce waits for
(they run on that stream right after it, so the compute launched after them waits too), and the decompress
pass lengthens the allreduce (whatever waits for the bucket's result waits for it). Measured on 2 x H200
(toy MLP, 537 MB of gradients a step): the hook's step +10.1 % in one job with steps alternating, of which
the halved transfer alone predicts -0.7 % (docs/whatif.md).

**The hook's CPU work.** The hook is Python: per bucket and step it runs those ops, launches them, calls the
allreduce and registers the future's callback, on the thread that launches the bucket's allreduce, none of
which the baseline (DDP's built-in C++ allreduce) does. :func:`add_cpu_work` adds :data:`HOOK_CPU_NS` to the
CPU work segment that ends where each allreduce is launched (all of it before the launch: the callback's share
runs just after it, on the same thread). The figure is not measured on the run: it was fitted on the first
of three paired sets on 2 x H200 (docs/whatif-evidence.md, "The hook's CPU work per bucket") and checked on the others.
"""

from __future__ import annotations

import numpy as np

from tracekit.replay.graph import CPU_SEG, GPU_OP, Graph
from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace, TraceSet

COMPRESS_TRAFFIC = 2.5
DECOMPRESS_TRAFFIC = 1.5
#: copies below this size are launch-dominated: their throughput says little about the memory's
MIN_COPY_BYTES = 1 << 20
_DTOD = "DtoD"
#: the hook's CPU work per bucket and step, ns (module doc): the median over the three CPU-bound shapes of the
#: first paired set of (the hook's measured step - the step without it) / buckets (72.8, 32.0, 59.6 us)
HOOK_CPU_NS = 59_600.0


def copy_throughput(traces: TraceSet) -> dict[int, float]:
    """Per rank with device-to-device copies of at least :data:`MIN_COPY_BYTES`: the median memory traffic
    rate of those copies, bytes read and written per ns (module doc). Ranks without them (or traces whose
    event table has no ``nbytes``) are left out. Computed once per rank (only scenarios with a comm hook ask)."""
    rates = {rt.rank: rt.memo("copy_throughput", lambda rt=rt: _rank_throughput(rt)) for rt in traces}
    return {r: v for r, v in rates.items() if v is not None}


def _rank_throughput(rt: RankTrace) -> float | None:
    try:
        nbytes = rt.column("nbytes")
    except KeyError:
        return None
    dtod = np.array([_DTOD in n for n in rt.name_categories()] + [False], dtype=bool)
    sel = ((rt.column("kind") == schema.MEMCPY) & (nbytes >= MIN_COPY_BYTES) & dtod[rt.column("name")]
           & (rt.column("dur_ns") > 0))
    return float(np.median(2.0 * nbytes[sel] / rt.column("dur_ns")[sel])) if sel.any() else None


def _stream_of(g: Graph, traces: TraceSet, rank: int) -> dict[int, int]:
    """GPU node -> stream of the rank's recorded GPU operations (the first nodes of ``gpu_node``, in the order
    of :meth:`RankTrace.gpu_column`; a scenario may append nodes after them)."""
    stream = traces.ranks[rank].gpu_column("stream")
    nodes = np.asarray(g.rank_nodes(rank).gpu_node)[:stream.size]
    return dict(zip(nodes.tolist(), stream.tolist()))


def _arrivals(g: Graph, ranks: np.ndarray, arrives: dict[int, int] | None) -> dict[int, int]:
    """Collective node -> its arrival node: the recorded collectives' of ``ranks``, and ``arrives`` (a
    scenario's new ones, which the graph's table of recorded collectives does not hold)."""
    out = {node: arrive for r in set(ranks.tolist()) for arrive, node in g.rank_nodes(r).coll.values()}
    return out | (arrives or {})


def add_casts(g: Graph, traces: TraceSet, nodes: np.ndarray, ranks: np.ndarray, nbytes: np.ndarray,
              rate: dict[int, float], arrives: dict[int, int] | None = None) -> int:
    """Add the hook's cast time to each collective node (fp32 allreduces: ``nodes``, their ``ranks`` and
    fp32 ``nbytes``) whose rank has a measured copy rate, in place (``g`` is a scenario's copy, built from
    ``traces``; ``arrives``: the arrival node of each new collective among ``nodes``). Returns how many got it."""
    arrive_of = _arrivals(g, ranks, arrives)
    streams = {r: _stream_of(g, traces, r) for r in set(ranks.tolist()) if r in rate}
    done = 0
    for node, r, b in zip(nodes.tolist(), ranks.tolist(), nbytes.tolist()):
        if r not in rate or not np.isfinite(b) or b <= 0:
            continue
        before = int(round(COMPRESS_TRAFFIC * b / rate[r]))
        after = int(round(DECOMPRESS_TRAFFIC * b / rate[r]))
        producer = _producer(g, arrive_of.get(node), streams[r], streams[r].get(node))
        if producer is None:
            after += before  # the casts' stream is unknown: all of their time delays the result
        else:
            g.dur[producer] += before
        g.extend_transfer(node, after)
        done += 1
    return done


def _producer(g: Graph, arrive: int | None, stream: dict[int, int], own: int | None) -> int | None:
    """The GPU operation on another stream that the collective's arrival waits for, the latest recorded."""
    if arrive is None:
        return None
    preds = [p for p, _ in g.start_edges(arrive)
             if p >= 0 and g.kind[p] == GPU_OP and stream.get(p, own) != own]
    return max(preds, key=lambda p: g.orig_end[p]) if preds else None


def add_cpu_work(g: Graph, nodes: np.ndarray, ranks: np.ndarray, ns: float = HOOK_CPU_NS,
                 arrives: dict[int, int] | None = None) -> int:
    """Add ``ns`` of CPU work before the launch of each collective node (``nodes``, their ``ranks``), on the
    segment its launch edge starts from, in place (a scenario's copy of the graph; ``arrives`` as for
    :func:`add_casts`). Returns how many got it (a collective launched before the window, or whose launching
    segment is not in the graph, gets none)."""
    arrive_of = _arrivals(g, ranks, arrives)
    add, done = int(round(ns)), 0
    for node in nodes.tolist():
        src = arrive_of.get(node, node)
        segs = [p for p, _ in g.start_edges(src) if p >= 0 and g.kind[p] == CPU_SEG]
        if segs:
            g.dur[segs[-1]] += add
            done += 1
    return done
