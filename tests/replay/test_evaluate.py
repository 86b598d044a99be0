"""The replay's evaluation (tracekit.replay.simulate.evaluate) by runs, against the node-by-node pass, and
what it relies on: CHAIN edges, the run plan, and an analysis restricted to the tables the replay reads."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from tracekit.analyses import registry
from tracekit.replay import simulate
from tracekit.replay.graph import CHAIN, CPU_SEG, GPU_OP, ORIGIN, Graph
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze

from tests.tracebuilder import TraceBuilder


def _node_by_node(g: Graph) -> tuple[np.ndarray, np.ndarray]:
    return simulate._in_order(g, simulate._kahn_order(g), strict=False)  # noqa: SLF001 - the reference pass


def test_chain_edges_resolve_to_the_node_before_and_cannot_be_iterated():
    g = Graph()
    g.add_chain(np.array([10, 11, 13, 16]), CPU_SEG, 0, lead=10)
    assert g.sp[0] == [(ORIGIN, 10)] and g.sp[1] is CHAIN and g.sp[2] is CHAIN
    assert g.start_edges(2) == [(1, 0)] and g.start_edges(0) == [(ORIGIN, 10)]
    with pytest.raises(RuntimeError, match="start_edges"):
        list(g.sp[1])


def test_a_run_ends_where_its_last_node_is_needed():
    """Four segments of 1, 2, 3, 4 ns from t=10 (ends 11, 13, 16, 20); a GPU op starts 5 after the second
    ends (13 + 5 = 18) and lasts 7 (ends 25); a node after the GPU op and the last segment starts at 25."""
    g = Graph()
    g.add_chain(np.array([10, 11, 13, 16, 20]), CPU_SEG, 0, lead=10)
    op = g.add(7, GPU_OP, 0, 18, 25, [(1, 5)])
    last = g.add(0, CPU_SEG, 0, 25, 25, [(op, 0), (3, 0)])
    start, end = simulate.evaluate(g)
    assert end.tolist() == [11, 13, 16, 20, 25, 25]
    assert start.tolist() == [10, 11, 13, 16, 18, 25]
    absorbed, head = simulate.runs(g)
    # segment 1 is needed by the GPU op, so segment 2 starts a run; 3 follows 2; 0 and 1 are one run
    assert absorbed.tolist() == [False, True, False, True, False, False]
    assert head.tolist() == [0, 0, 2, 2, 4, 5]


def _random_graph(rng: random.Random, forward: bool) -> Graph:
    """Threads of CPU segments and GPU ops with launch, stream and end edges, every edge pointing back in
    recorded time (as the builder makes them); ``forward``: end edges from nodes that end later in the
    recording too (still a DAG: every edge points to a lower node id), which the recorded order cannot serve."""
    g = Graph()
    chains = []
    for _ in range(rng.randint(1, 4)):
        cuts = np.cumsum([rng.randint(0, 50) for _ in range(rng.randint(2, 60))]) + rng.randint(0, 100)
        first = len(g.dur)
        g.add_chain(np.asarray(cuts), CPU_SEG, 0, lead=int(cuts[0]))
        chains.append(range(first, len(g.dur)))
    prev = None
    for _ in range(rng.randint(0, 40)):
        src = rng.choice(rng.choice(chains))
        on_stream = prev is not None and rng.random() < 0.7
        t = max(g.orig_end[src], g.orig_end[prev] if on_stream else 0) + rng.randint(0, 30)
        sp = [(src, rng.randint(0, 20))] + ([(prev, 0)] if on_stream else [])
        prev = g.add(rng.randint(0, 40), GPU_OP, 0, t, t + rng.randint(0, 40), sp)
    for _ in range(rng.randint(0, 10)):  # syncs and waits: a segment ends when a GPU op (or another one) ends
        v = rng.randrange(1, len(g.dur))
        p = rng.randrange(v)
        if forward or g.orig_end[p] < g.orig_end[v]:
            g.ep[v] = [*g.ep[v], (p, rng.randint(0, 10))]
    return g


@pytest.mark.parametrize("seed", range(60))
def test_evaluation_by_runs_equals_the_node_by_node_pass(seed):
    g = _random_graph(random.Random(seed), forward=seed % 4 == 0)
    start, end = simulate.evaluate(g)
    ref_start, ref_end = _node_by_node(g)
    assert start.tolist() == ref_start.tolist() and end.tolist() == ref_end.tolist()
    assert not g.notes
    if seed % 4:  # edges back in recorded time only: the fast path served it
        assert simulate._by_runs(g, simulate.runs(g)) is not None  # noqa: SLF001


def test_the_recorded_graph_can_use_the_plan_of_the_prediction():
    """The self-check graph has the prediction's predecessors (only delays differ): one plan serves both; a
    clone edited by a scenario gets its own (evaluate computes it when none is given)."""
    g = Graph()
    g.add_chain(np.array([0, 5, 9, 20]), CPU_SEG, 0, lead=0)
    g.sp_rec[2] = [(1, 4)]  # recorded: node 2 started 4 ns after node 1 ended
    g.sp[2] = [(1, 0)]
    plan = simulate.runs(g)
    rec = g.recorded()
    assert simulate.runs(rec)[0].tolist() == plan[0].tolist()
    assert simulate.evaluate(rec, plan)[0].tolist() == [0, 5, 13] and simulate.evaluate(g, plan)[0].tolist() == [0, 5, 9]
    c = g.copy()
    c.sp[2] = [(ORIGIN, 100)]  # an edit: node 2 no longer follows node 1
    assert simulate.evaluate(c)[0].tolist() == [0, 5, 100] and simulate.evaluate(g)[0].tolist() == [0, 5, 9]


def _two_rank_run(tmp_path):
    paths = []
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 400)
        tb.cpu_op("aten::mm", 10, 50)
        tb.kernel("gemm_launched_before_the_window", 5, 3, pre_window=True)
        tb.collective("allreduce", 100 + 20 * rank, 80, launch_at_us=60, nelems=1024)
        paths.append(tb.write(tmp_path / f"rank{rank}.trace.json"))
    return paths


def test_only_computes_the_named_tables_and_what_they_need(tmp_path):
    paths = [str(p) for p in _two_rank_run(tmp_path)]
    only = ("collectives", "instances")
    names = {t.name for t in registry.selected(RunOptions().analysis, only)}
    assert names == {"collectives", "instances"}
    _, part = load_and_analyze(paths, RunOptions.of(only=only))
    _, full = load_and_analyze(paths, RunOptions())
    assert set(part.tables) == {"collectives", "instances"}
    for name in part.tables:
        pd.testing.assert_frame_equal(part.tables[name], full.tables[name])
    assert part.meta["clock_offsets_us"] == full.meta["clock_offsets_us"]
    assert part.meta["steps"] == full.meta["steps"] == [1]
    assert part.meta["pre_window_kernels"] == full.meta["pre_window_kernels"] == 2


def test_only_names_a_table_or_fails_before_any_work(tmp_path):
    from tracekit.errors import ConfigError

    with pytest.raises(ConfigError, match="no_such_table"):
        load_and_analyze([str(tmp_path / "missing")], RunOptions.of(only=("no_such_table",)))
