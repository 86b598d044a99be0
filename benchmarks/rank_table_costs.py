#!/usr/bin/env python
"""CPU time of the per-rank map, per rank table: where the per-rank constant goes.

Decodes each rank file of a folder, wraps its columns in a RankTrace and computes
every registered rank table (as a worker of ``tracekit analyze`` does), timing each
step with ``time.process_time``; prints the mean CPU ms per rank for decode, the
RankTrace and each table. The first file is left out of the mean (it pays one-off costs:
regex compilation, caches) unless it is the only one. Tables that share a memo
(the GPU activity of a rank, its steps) are charged to the first one that asks.

Usage::

    python benchmarks/rank_table_costs.py DIR [MAX_FILES]
    python benchmarks/bench_many_ranks.py --ranks 64 --keep && \\
        python benchmarks/rank_table_costs.py .bench/many_ranks_64x40kb 33
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

from tracekit.analyses import registry
from tracekit.traces import loader
from tracekit.traces.traceset import RankTrace


def costs(files: list[Path]) -> dict[str, float]:
    """Mean CPU ms per rank of each phase over ``files`` (see the module doc)."""
    opts = registry.AnalyzeOptions()
    specs = [t for t in registry.selected(opts) if t.scope == "rank"]
    acc: collections.Counter[str] = collections.Counter()
    for i, f in enumerate(files):
        counted = i > 0 or len(files) == 1
        t0 = time.process_time()
        decoded = loader.decode_file(f)
        if isinstance(decoded, Exception):
            raise SystemExit(f"{f}: {decoded}")
        meta, cols = decoded
        t1 = time.process_time()
        rt = RankTrace.from_decoded(f, meta, cols)  # as the engine's workers do: no event table up front
        rt.rank = i
        t2 = time.process_time()
        ctx = registry.RankContext(trace=rt, options=opts, world_size=len(files), manifest=None)
        if counted:
            acc["decode"] += t1 - t0
            acc["rank_trace"] += t2 - t1
        for t in specs:
            a = time.process_time()
            ctx.tables[t.name] = registry.conform(t, t.compute(ctx))
            if counted:
                acc[t.name] += time.process_time() - a
    n = max(1, len(files) - 1)
    return {k: 1000 * v / n for k, v in acc.most_common()}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    files = sorted(loader.find_trace_files([argv[0]]))[:int(argv[1]) if len(argv) > 1 else None]
    ms = costs(files)
    for k, v in ms.items():
        print(f"{k:20s} {v:7.2f} ms/rank")
    print(f"{'TOTAL':20s} {sum(ms.values()):7.2f} ms/rank")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
