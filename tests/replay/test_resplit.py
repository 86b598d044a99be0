"""DDPOptimizer's cut rule replayed on recorded graphs (tracekit.replay.resplit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.replay import resplit
from tracekit.traces.manifest import decode_manifest, read_manifest

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def test_cuts_walk_backwards_first_bucket_then_cap():
    # reversed: 4 fills the 4-byte first bucket -> cut before it (at 5); then 4+4+4 reaches the cap 10 -> cut at 2
    assert resplit.cuts([4, 4, 4, 4, 4, 4], bucket_cap=10, first_cap=4) == [2, 5]
    assert resplit.cuts([1, 1, 1], bucket_cap=10, first_cap=4) == []          # all in the first bucket
    assert resplit.cuts([20, 20, 20], bucket_cap=10, first_cap=4) == [1, 2]  # each node its own bucket
    assert resplit.cuts([], bucket_cap=10, first_cap=4) == []


def _manifest(layer_bytes: list[int], graphs: list[tuple[str, int, str]], cap: int = 25 * MIB,
              optimize_ddp: str = "ddp_optimizer"):
    """run.json of forward subgraphs ``(region, layers, cut kind)`` in order over ``layer_bytes``."""
    names = [f"layer{i}.weight" for i in range(len(layer_bytes))]
    out, start = [], 0
    for i, (region, n, cut) in enumerate(graphs):
        out.append({"index": i, "kind": "forward", "compile_id": region, "params": names[start:start + n],
                    "cut": {"kind": cut}})
        start += n
    return decode_manifest({"graphs": {"optimize_ddp": optimize_ddp, "reducer_params": names, "graphs": out},
                            "buckets": {"reducer": {"bucket_cap_bytes": cap, "param_bytes": layer_bytes}}}, "run.json")


BROKEN_4 = [("0/0", 1, "ddp_split"), ("0/0", 1, "graph_break"), ("1/0", 1, "ddp_split"), ("1/0", 1, "end")]


def test_plan_merges_the_regions_and_recuts_them():
    # two regions of two 1 MiB layers, each cut after its first layer (its 1 MiB first bucket is full);
    # merged, the four layers are cut once, before the last one
    plan, why = resplit.plan(_manifest([MIB] * 4, BROKEN_4))
    assert why is None
    assert plan.boundaries == ((1, "ddp_split"), (2, "graph_break"), (3, "ddp_split"))
    assert plan.merged_cuts == {3} and plan.kept() == {2} and plan.new_cuts == 0 and plan.graphs == 4


def test_plan_counts_cuts_the_recorded_run_did_not_have():
    # 16 + 16 layers of 1 MiB: each region is cut before its last layer (the first bucket); merged, before
    # layer 31 and then after 25 MiB more, before layer 6: a cut where the recorded run had no boundary
    graphs = [("0/0", 15, "ddp_split"), ("0/0", 1, "graph_break"), ("1/0", 15, "ddp_split"), ("1/0", 1, "end")]
    plan, why = resplit.plan(_manifest([MIB] * 32, graphs))
    assert why is None
    assert plan.boundaries == ((15, "ddp_split"), (16, "graph_break"), (31, "ddp_split"))
    assert plan.merged_cuts == {6, 31} and plan.kept() == {2} and plan.new_cuts == 1


def test_plan_refuses_graphs_the_rule_does_not_reproduce():
    # recorded as one subgraph per region although DDPOptimizer would have cut each: not trusted
    graphs = [("0/0", 2, "graph_break"), ("1/0", 2, "end")]
    plan, why = resplit.plan(_manifest([MIB] * 4, graphs))
    assert plan is None and "does not reproduce the recorded splits of graph 0/0" in why


@pytest.mark.parametrize("bad, reason", [
    ({"graphs": None}, "records no compiled graphs"),
    ({"optimize_ddp": "no_optimization"}, "was not used"),
    ({"param_bytes": None}, "per-parameter bytes"),
])
def test_plan_says_why_not(bad, reason):
    m = _manifest([MIB] * 4, BROKEN_4, optimize_ddp=bad.get("optimize_ddp", "ddp_optimizer"))
    if "graphs" in bad:
        m.graphs = None
    if "param_bytes" in bad:
        m.buckets.reducer.param_bytes = None
    plan, why = resplit.plan(m)
    assert plan is None and reason in why


@pytest.mark.parametrize("shape", ["toy-cpubound", "toy-cpubound-deep", "transformer-small", "toy-gpubound"])
def test_merged_cuts_are_where_the_twin_without_the_break_was_cut(shape):
    """On real twins (sample_traces/whatif/h200_graph_break: one H200, torch 2.11): the cuts predicted for the merged
    graph of the run with the break are exactly the DDPOptimizer splits recorded in its twin without it."""
    broken, _ = resplit.plan(read_manifest(ROOT / f"sample_traces/whatif/h200_graph_break/{shape}-break"))
    twin, _ = resplit.plan(read_manifest(ROOT / f"sample_traces/whatif/h200_graph_break/{shape}-none"))
    assert broken is not None and twin is not None
    assert any(kind == "graph_break" for _, kind in broken.boundaries)
    assert broken.merged_cuts == {pos for pos, _ in twin.boundaries}
    assert len(broken.boundaries) > len(twin.boundaries) or shape == "toy-gpubound"


def test_breaks_actions_follow_the_plan():
    """Per gap of one step and pass: removed (0.0), reduced to a split's cost (None) or left alone."""
    from tracekit.replay.breaks import Gap, _actions

    def gaps(kinds):
        return [Gap("forward", 1, j, len(kinds), k, 1, 10 * j, 10 * j + 5) for j, k in enumerate(kinds)]

    kinds = ["ddp_split", "graph_break", "ddp_split"]
    merged_away = resplit.Plan(((1, "ddp_split"), (2, "graph_break"), (3, "ddp_split")), frozenset({3}))
    assert [(g.fwd_index, keep) for g, keep in _actions(gaps(kinds), merged_away)] == [(0, 0.0), (1, 0.0)]
    cut_anyway = resplit.Plan(((1, "ddp_split"), (2, "graph_break"), (3, "ddp_split")), frozenset({1, 2, 3}))
    assert [(g.fwd_index, keep) for g, keep in _actions(gaps(kinds), cut_anyway)] == [(1, None)]
    # one new cut elsewhere: the first removed split stays in its stead
    new_cut = resplit.Plan(((1, "ddp_split"), (2, "graph_break"), (3, "ddp_split")), frozenset({3, 5}))
    assert [(g.fwd_index, keep) for g, keep in _actions(gaps(kinds), new_cut)] == [(1, 0.0)]
    # no plan: the breaks alone; a step whose boundary count differs from the recorded graphs: its breaks alone
    assert [(g.fwd_index, keep) for g, keep in _actions(gaps(kinds), None)] == [(1, 0.0)]
    assert [(g.fwd_index, keep) for g, keep in _actions(gaps(kinds[:2]), merged_away)] == [(1, 0.0)]
