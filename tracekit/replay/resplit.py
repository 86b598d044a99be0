"""Where DDPOptimizer would cut the merged graph: the ``no_graph_breaks`` scenario's other half.

Under ``torch.compile`` of a DDP model, DDPOptimizer cuts *each* graph dynamo captured into
subgraphs at DDP's bucket boundaries (``torch/_dynamo/backends/distributed.py``): it walks the
graph's nodes in reverse, adding each node's parameters to the current bucket, and starts a new
bucket (a new subgraph) before a node once the bucket holds ``first_bucket_cap`` bytes (the first
one, 1 MiB: ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``) or ``bucket_cap`` bytes (the others:
DDP's ``bucket_bytes_cap``). A graph break makes two graphs, cut separately; without the break
the one merged graph is cut once over all its parameters, usually into fewer subgraphs. On the
graph-break twins measured on an H100 (``benchmarks/gpu/paired_twins.py``) the broken toy MLP ran 4
forward subgraphs and its twin without the break 2: the break had brought an extra DDPOptimizer
split along, whose cost the measured saving included.

:func:`plan` replays that rule on the compiled graphs ``tracekit profile`` recorded (run.json
``graphs``: rank 0's forward subgraphs in order, with their parameters; per-parameter bytes from
DDP's reducer, ``buckets.reducer.param_bytes``). A node's parameters are taken as the parameters
of one module (``front.3.0.weight`` and ``front.3.0.bias`` together), the way ``F.linear`` uses
them. The rule is first checked on the recorded graphs: cut separately, each must give exactly the
subgraphs recorded; otherwise (another torch, parameters DDP does not reduce, an unrecorded node
grouping) no plan is made and the scenario keeps every DDPOptimizer split, saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracekit.replay import ddp

#: torch.distributed._DEFAULT_FIRST_BUCKET_BYTES: DDPOptimizer's first bucket when DDP does not pass one
FIRST_BUCKET_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Plan:
    """The forward subgraph boundaries of the recorded run and of the merged graph.

    ``boundaries``: the recorded boundaries in forward order (boundary ``j`` follows forward subgraph
    ``j``), each the position (in module groups from the start of the forward) it sits at and its
    kind (``ddp_split`` | ``graph_break``); ``merged_cuts``: the positions DDPOptimizer would cut the
    merged graph at.
    """

    boundaries: tuple[tuple[int, str], ...]
    merged_cuts: frozenset[int]

    @property
    def graphs(self) -> int:
        """Forward subgraphs recorded."""
        return len(self.boundaries) + 1

    def kept(self) -> frozenset[int]:
        """Indices of recorded boundaries the merged graph still has: DDPOptimizer cuts there too."""
        return frozenset(j for j, (pos, _) in enumerate(self.boundaries) if pos in self.merged_cuts)

    @property
    def new_cuts(self) -> int:
        """Cuts of the merged graph where the recorded run had no boundary."""
        return len(self.merged_cuts - {pos for pos, _ in self.boundaries})


def cuts(group_bytes: list[int], bucket_cap: int, first_cap: int) -> list[int]:
    """DDPOptimizer's cut positions in one graph of ``group_bytes`` (bytes per module group, forward
    order): position ``p`` cuts between group ``p - 1`` and group ``p`` (module doc).

    Walking the nodes backwards and starting a bucket before a node once the bucket is full is DDP's own
    rule (:func:`tracekit.replay.ddp.assign`) on the reversed groups: a bucket that begins at reversed
    position ``r`` is a cut at ``len(group_bytes) - r``."""
    buckets = ddp.assign(group_bytes[::-1], bucket_cap, first_cap)
    return sorted(len(group_bytes) - b[0] for b in buckets[1:])


def _groups(params: list[str], nbytes: dict[str, int]) -> list[int] | None:
    """Bytes per module group of ``params`` (consecutive parameters of one module form a group)."""
    out: list[int] = []
    last = None
    for name in params:
        if name not in nbytes:
            return None
        module = name.rsplit(".", 1)[0]
        if module == last:
            out[-1] += nbytes[name]
        else:
            out.append(nbytes[name])
        last = module
    return out


def plan(manifest: Any) -> tuple[Plan | None, str | None]:
    """``(plan, None)`` for a run compiled with DDPOptimizer whose recorded splits the rule reproduces;
    ``(None, why)`` otherwise (module doc)."""
    graphs = getattr(manifest, "graphs", None) if manifest is not None else None
    if graphs is None or not graphs.graphs:
        return None, "run.json records no compiled graphs"
    if graphs.optimize_ddp != "ddp_optimizer":
        return None, f"DDPOptimizer was not used (optimize_ddp {graphs.optimize_ddp})"
    reducer = manifest.buckets.reducer if manifest.buckets is not None else None
    sizes = reducer.param_bytes if reducer is not None else None
    names = graphs.reducer_params or []
    cap = reducer.bucket_cap_bytes if reducer is not None else None
    if not sizes or len(sizes) != len(names) or not isinstance(cap, int) or cap <= 0:
        return None, "run.json has no per-parameter bytes of DDP's reducer"
    nbytes = dict(zip(names, sizes))
    fwd = [g for g in graphs.graphs if g.kind == "forward"]
    regions: dict[str, list[int]] = {}
    boundaries: list[tuple[int, str]] = []
    recorded: dict[str, set[int]] = {}
    pos = 0
    for i, g in enumerate(fwd):
        groups = _groups(g.params, nbytes)
        if groups is None:
            return None, f"forward graph {g.index} has a parameter DDP's reducer does not list"
        key = g.compile_id or str(i)
        start = len(regions.setdefault(key, []))
        regions[key] += groups
        pos += len(groups)
        kind = g.cut.kind if g.cut is not None else None
        if i < len(fwd) - 1:
            boundaries.append((pos, "graph_break" if kind != "ddp_split" else "ddp_split"))
            if kind == "ddp_split":
                recorded.setdefault(key, set()).add(start + len(groups))
    first = min(FIRST_BUCKET_BYTES, cap)
    for key, groups in regions.items():
        if set(cuts(groups, cap, first)) != recorded.get(key, set()):
            return None, "DDPOptimizer's rule does not reproduce the recorded splits of graph " + key
    merged = [b for groups in regions.values() for b in groups]
    return Plan(tuple(boundaries), frozenset(cuts(merged, cap, first))), None
