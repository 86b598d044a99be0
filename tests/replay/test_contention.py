"""Compute kernels re-timed for their overlap with communication in a scenario (tracekit.replay.contention,
``readjust``): every expected duration is arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from tracekit.analyses.classify import COMM, COMPUTE, classify_gpu
from tracekit.replay import contention, simulate
from tracekit.replay import costs as cost_model
from tracekit.replay import scenarios as sc
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze

from tests.replay.test_hook_launch import _contended_run
from tests.replay.test_scenarios import US


def test_overlap_share_is_interval_arithmetic():
    # communication [50, 100] and [120, 130]; ops: [10, 20] alone, [60, 75] inside, [90, 125] over both
    # (10 + 5 of its 35 µs), [100, 120] between them (touching both), a zero-length op inside
    start = np.array([50, 120, 10, 60, 90, 100, 70]) * US
    end = np.array([100, 130, 20, 75, 125, 120, 70]) * US
    comm = np.array([True, True, False, False, False, False, False])
    share = contention.overlap_share(start, end, comm)
    assert share[2:].tolist() == pytest.approx([0.0, 1.0, 15 / 35, 0.0, 0.0])
    assert contention.overlap_share(start, end, np.zeros(7, dtype=bool)).tolist() == [0.0] * 7


def test_a_profile_slows_a_kernel_by_its_share_of_overlap_up_to_the_recorded_one():
    p = contention.Profile(slowdown=1.4, share=0.5)
    assert p.factor(np.array([0.0, 0.25, 0.5, 1.0])).tolist() == pytest.approx([1.0, 1.2, 1.4, 1.4])


def test_profiles_take_compute_kernels_with_enough_instances_and_a_plausible_slowdown():
    names = np.array([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4])
    dur = np.array([10, 10, 14, 12, 1, 1, 30, 34, 5, 7, 7, 10, 10, 13, 13], dtype=float)
    share = np.array([0, 0, 1.0, 0.5, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1])
    compute = np.ones(names.size, dtype=bool)
    compute[11:] = False  # kernel 4: a copy, not compute
    prof = contention.profiles(names, dur, share, compute)
    # kernel 1: alone 10, 10; beside 14 (share 1) and 12 (share 0.5): slowdown 13 / 10, share the median 0.75
    assert prof == {1: contention.Profile(pytest.approx(1.3), pytest.approx(0.75))}
    # kernel 2: 32x, one name at two sizes (above MAX_SLOWDOWN); kernel 3: one instance alone; kernel 4: no compute
    assert contention.MAX_SLOWDOWN == 1.5


def _contended(tmp_path):
    """(graph, scenario context, communication masks) of the contended run (gemm alone at [10, 20] and [30, 40],
    10 µs; beside the allreduce [55, 100] at [60, 75] and [80, 95], 15 µs), no profiler cost taken out (the
    baseline prediction is the recorded window), the contention model on."""
    traces, res = load_and_analyze([str(_contended_run(tmp_path))], RunOptions.of(keep_events=True))
    coll = res.tables.get("collectives")
    g = simulate.build(traces, coll, cost_model.NONE)
    comm = {rt.rank: np.asarray(classify_gpu(rt).array == COMM) for rt in traces}
    ctx = sc.context(g, traces, coll, None, comm)
    ctx.compute = {rt.rank: np.asarray(classify_gpu(rt).array == COMPUTE) for rt in traces}
    ctx.base_times = simulate.evaluate(g)
    return g, ctx, comm


def _bandwidth_scenario(tmp_path, factor: float):
    """The contended run with the network ``factor`` times faster: (scenario graph, its notes, gemm durations
    in µs by recorded start)."""
    g, ctx, _ = _contended(tmp_path)
    out, _, notes = sc.apply(g, ctx, sc.Scenario(bandwidth_x=factor))
    origin = min(out.orig_start)
    gemm = {(out.orig_start[v] - origin) // US: out.dur[v] / US for v in range(len(g.dur))
            if out.kind[v] == 3 and out.rank[v] == 0 and (out.orig_start[v] - origin) // US in (10, 30, 60, 80)}
    return out, notes, gemm


def test_a_shorter_allreduce_gives_the_kernels_it_no_longer_covers_their_speed(tmp_path):
    # one message size: the whole transfer scales, 45 µs / 3 = 15 µs: the allreduce runs [55, 70]. Slowdown 1.5
    # at share 1 (both beside instances were covered whole). The gemm at [60, 75] is now covered for 10 of its
    # 15 µs: 15 x (1 + 0.5 x 2/3) / 1.5; the one at [80, 95] not at all: 15 / 1.5; the alone ones keep 10 µs
    out, notes, gemm = _bandwidth_scenario(tmp_path, 3.0)
    assert gemm == pytest.approx({10: 10.0, 30: 10.0, 60: 15 * (1 + 0.5 * 2 / 3) / 1.5, 80: 10.0}, abs=1e-3)
    assert any("4 of 8 compute kernels" in n and "re-timed" in n for n in notes)  # 2 a rank, both ranks


def test_a_change_that_moves_nothing_changes_no_kernel(tmp_path):
    out, notes, gemm = _bandwidth_scenario(tmp_path, 1.0)
    assert gemm == {10: 10.0, 30: 10.0, 60: 15.0, 80: 15.0}
    assert not any("re-timed" in n for n in notes)


def test_readjust_scales_by_the_factor_in_the_scenario_over_the_factor_in_the_baseline(tmp_path):
    # the times given to readjust decide the factors: the alone gemm at [30, 40] put under the allreduce
    # (share 1: 1.5x its 10 µs), the one at [60, 75] moved out of it (15 / 1.5)
    g, ctx, comm = _contended(tmp_path)
    s, e = (np.array(a, dtype=np.int64) for a in g.orig_arrays())
    origin = min(g.orig_start)
    at = {(g.orig_start[v] - origin) // US: v for v in range(len(g.dur)) if g.kind[v] == 3 and g.rank[v] == 0}
    s[at[30]], e[at[30]] = origin + 60 * US, origin + 70 * US
    s[at[60]], e[at[60]] = origin + 110 * US, origin + 125 * US
    changed, modelled = contention.readjust(g, ctx, comm, (s, e))
    assert (changed, modelled) == (2, 8)  # 4 gemms on each rank modelled; only rank 0's times were moved
    assert [g.dur[at[k]] / US for k in (10, 30, 60, 80)] == pytest.approx([10, 15, 10, 15])


def test_share_beside_counts_overlapping_kernels_once():
    # op [0, 100] µs beside two kernels [0, 50] and [10, 60] that overlap each other: 60 % of it is covered
    start, end = np.array([0, 0, 10]) * US, np.array([100, 50, 60]) * US
    assert contention.share_beside(start, end, np.array([0]), [1, 2]).tolist() == pytest.approx([0.6])


def test_slow_beside_scales_by_the_covered_share_never_more_than_all():
    from tracekit.replay import grow
    from tracekit.replay.graph import GPU_OP, ORIGIN, Graph

    g = Graph()
    op = g.add(100 * US, GPU_OP, 0, 0, 100 * US, [(ORIGIN, 0)])
    new = [g.add(50 * US, GPU_OP, 0, 0, 50 * US, [(ORIGIN, 0)]), g.add(50 * US, GPU_OP, 0, 10 * US, 60 * US,
                                                                        [(ORIGIN, 10 * US)])]
    assert grow.slow_beside(g, [(np.array([op]), new)]) == 1
    assert g.dur[op] == round(100 * US * (1 + (grow.CONTENTION_SLOWDOWN - 1) * 0.6))  # [0, 60] covered; the sum of the two overlaps counts [10, 50] twice: 1.0
