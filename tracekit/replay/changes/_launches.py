"""One rank's GPU operations indexed by what launched them (host thread, launch time), shared by the families that
edit compiled graphs (:mod:`.cuda_graphs`, :mod:`.optimize_ddp`): built once per rank and scenario, then one
search per graph execution."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from tracekit.replay.graph import Graph, Thread

if TYPE_CHECKING:
    from tracekit.replay.family import Context
    from tracekit.traces.traceset import RankTrace


class RankLaunches:
    """The rank's GPU operations launched in the window, by (launch thread, launch time); their graph nodes,
    communication flags and launch times; the rank's host threads."""

    def __init__(self, g: Graph, ctx: Context, rt: RankTrace) -> None:
        info = g.rank_nodes(rt.rank)
        self.threads: dict[int, Thread] = info.threads
        n = len(rt.gpu_column("ts_ns"))
        #: the graph node of each GPU row of the trace
        self.nodes = np.asarray(info.gpu_node)[:n]
        #: each GPU row's launch time, ns
        self.launch_ts = rt.gpu_column("launch_ts_ns")
        ltid = rt.gpu_column("launch_tid")
        #: which GPU rows are communication (``Context.comm``)
        self.comm = ctx.comm.get(rt.rank, np.zeros(n, dtype=bool))[:n]
        ok = np.flatnonzero(~rt.gpu_column("pre_window").astype(bool))  # launched in the window
        self._order = ok[np.lexsort((self.launch_ts[ok], ltid[ok]))]
        self._tid, self._ts = ltid[self._order], self.launch_ts[self._order]

    def launched(self, tid: int, s: int, e: int) -> np.ndarray:
        """Rows (ascending) of the GPU operations thread ``tid`` launched inside ``[s, e]``."""
        lo, hi = np.searchsorted(self._tid, tid, "left"), np.searchsorted(self._tid, tid, "right")
        a = lo + np.searchsorted(self._ts[lo:hi], s, "left")
        b = lo + np.searchsorted(self._ts[lo:hi], e, "right")
        return np.sort(self._order[a:b])

    @cached_property
    def comm_nodes(self) -> set[int]:
        """The graph nodes of the rank's communication operations."""
        return set(self.nodes[self.comm].tolist())
