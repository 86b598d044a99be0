"""One step of the window and of the prediction, as intervals to draw (the what-if HTML page).

:func:`one_step` picks the middle profiled step common to every rank and returns, per rank, the
step's GPU operations (lanes ``GPU compute`` and ``GPU comm``) or, on CPU runs, its CPU collectives
(lane ``collectives``), and the step itself (lane ``step``), once as the profiler recorded them
(``source`` = ``window``) and once as the prediction replays them (``predicted``). Times are µs
from that timeline's own step start, so the two are compared from the same origin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tracekit.replay.figures import nodes_by_rank
from tracekit.replay.graph import COLL, Graph

COLUMNS = ("rank", "step", "source", "lane", "start_us", "end_us")


def _middle_step(g: Graph) -> int | None:
    common = None
    for info in g.ranks.values():
        steps = {s for s, _, _ in info.steps}
        common = steps if common is None else common & steps
    return sorted(common)[len(common) // 2] if common else None


def one_step(g: Graph, start: np.ndarray, end: np.ndarray, comm: dict[int, np.ndarray]) -> pd.DataFrame:
    """Intervals of the middle step (module doc); ``start``/``end``: the prediction's node times."""
    step = _middle_step(g)
    if step is None:
        return pd.DataFrame(columns=list(COLUMNS))
    rows = []
    kind, rank_of = g.array("kind"), g.array("rank")
    colls_of = nodes_by_rank(np.flatnonzero(kind == COLL), rank_of)
    for source, s_all, e_all in (("window", *g.orig_arrays()),
                                 ("predicted", start, end)):
        for rank, info in sorted(g.ranks.items()):
            a, b = next((a, b) for s, a, b in info.steps if s == step)
            lo, hi = int(s_all[a]), int(e_all[b])
            rows.append((rank, step, source, "step", 0.0, (hi - lo) / 1e3))
            if info.gpu is not None:
                nodes = np.asarray(info.gpu_node)
                mine = np.asarray(info.gpu["step"]) == step
                is_comm = comm.get(rank, np.zeros(nodes.size, dtype=bool))[: nodes.size]
                for lane, sel in (("GPU compute", mine & ~is_comm), ("GPU comm", mine & is_comm)):
                    rows += [(rank, step, source, lane, (s_all[v] - lo) / 1e3, (e_all[v] - lo) / 1e3)
                             for v in nodes[sel] if e_all[v] > s_all[v]]
            else:
                colls = colls_of.get(rank, np.zeros(0, dtype=np.int64))
                colls = colls[(s_all[colls] >= lo) & (s_all[colls] < hi)]
                rows += [(rank, step, source, "collectives", (s_all[v] - lo) / 1e3, (e_all[v] - lo) / 1e3)
                         for v in colls]
    return pd.DataFrame(rows, columns=list(COLUMNS))
