"""Pure interval arithmetic (tracekit.analyses.intervals): half-open [start, end) int ns."""

from __future__ import annotations

import numpy as np
import pytest

from tracekit.analyses import intervals as iv


def A(*pairs):  # noqa: N802 - short constructor: A((0, 5), (7, 9)) -> (starts, ends)
    if not pairs:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    s, e = zip(*pairs)
    return np.array(s, dtype=np.int64), np.array(e, dtype=np.int64)


def pairs(res):
    s, e = res
    return list(zip(s.tolist(), e.tolist()))


# -- union / length ------------------------------------------------------------
def test_union_empty():
    s, e = iv.union(*A())
    assert s.size == 0 and e.size == 0
    assert iv.length(*A()) == 0


def test_union_sorts_and_merges_overlaps_and_touching():
    # (0,3)+(2,4) overlap -> (0,4); (5,10)+(10,12) touch -> (5,12)
    assert pairs(iv.union(*A((5, 10), (0, 3), (10, 12), (2, 4)))) == [(0, 4), (5, 12)]
    assert iv.length(*A((5, 10), (0, 3), (10, 12), (2, 4))) == (4 - 0) + (12 - 5)


def test_union_keeps_a_one_ns_gap():
    assert pairs(iv.union(*A((0, 5), (6, 8)))) == [(0, 5), (6, 8)]


def test_union_nested_and_duplicates():
    assert pairs(iv.union(*A((0, 10), (2, 3), (0, 10), (9, 10)))) == [(0, 10)]


def test_union_long_interval_swallows_later_ones():
    # the running max end, not the previous end, decides a new interval
    assert pairs(iv.union(*A((0, 100), (10, 20), (30, 40), (101, 102)))) == [(0, 100), (101, 102)]


def test_union_drops_zero_and_negative_length():
    assert pairs(iv.union(*A((3, 3), (5, 2), (7, 9)))) == [(7, 9)]
    assert iv.length(*A((3, 3), (5, 2))) == 0


def test_union_returns_int64():
    s, e = iv.union([1, 4], [3, 6])
    assert s.dtype == np.int64 and e.dtype == np.int64


def test_union_large_ns_values_are_exact():
    t = 4407664266765786  # a kineto timestamp in ns: beyond float32, exact in int64
    assert iv.length(*A((t, t + 1234), (t + 1000, t + 2001))) == 2001


# -- intersect ---------------------------------------------------------------------
def test_intersect_simple():
    assert pairs(iv.intersect(A((0, 10)), A((5, 15)))) == [(5, 10)]
    assert iv.intersect_length(A((0, 10)), A((5, 15))) == 10 - 5


def test_intersect_touching_is_empty_half_open():
    assert pairs(iv.intersect(A((0, 5)), A((5, 10)))) == []
    assert iv.intersect_length(A((0, 5)), A((5, 10))) == 0


def test_intersect_self_overlapping_inputs_are_merged_first():
    # a covers [0,10) twice over [4,6); a naive depth count would treat [5,6) as depth 3
    assert pairs(iv.intersect(A((0, 6), (4, 10)), A((5, 7)))) == [(5, 7)]
    assert iv.intersect_length(A((0, 6), (4, 10), (0, 10)), A((0, 10), (2, 3))) == 10


def test_intersect_several_pieces():
    a, b = A((0, 10), (20, 30)), A((5, 25))
    assert pairs(iv.intersect(a, b)) == [(5, 10), (20, 25)]
    assert iv.intersect_length(a, b) == (10 - 5) + (25 - 20)


def test_intersect_adjacent_pieces_merge_in_result():
    # b has two touching pieces inside a: the result is one disjoint interval
    assert pairs(iv.intersect(A((0, 100)), A((10, 20), (20, 30)))) == [(10, 30)]


def test_intersect_empty_operands():
    assert pairs(iv.intersect(A(), A((0, 10)))) == []
    assert pairs(iv.intersect(A((0, 10)), A())) == []
    assert pairs(iv.intersect(A((0, 10)), A((3, 3)))) == []
    assert iv.intersect_length(A(), A()) == 0


def test_intersect_is_commutative():
    a, b = A((0, 4), (6, 9), (12, 20)), A((3, 7), (8, 13), (19, 30))
    # [3,4) + [6,7) + [8,9) + [12,13) + [19,20)
    assert iv.intersect_length(a, b) == iv.intersect_length(b, a) == 1 + 1 + 1 + 1 + 1


# -- clip --------------------------------------------------------------------------
def test_clip():
    s, e = A((0, 10), (5, 15), (20, 30), (2, 8), (22, 40), (40, 50))
    # [2,8) ends at lo and [22,40)/[40,50) start at/after hi: dropped or cut
    assert pairs(iv.clip(s, e, 8, 22)) == [(8, 10), (8, 15), (20, 22)]


def test_clip_empty():
    assert pairs(iv.clip(*A(), 0, 10)) == []
    assert pairs(iv.clip(*A((0, 10)), 5, 5)) == []


# -- covered_per_interval ---------------------------------------------------------------
def test_covered_per_interval_basic():
    cover = A((2, 4), (6, 7))
    got = iv.covered_per_interval(*A((0, 10)), cover)
    assert got.tolist() == [(4 - 2) + (7 - 6)]


def test_covered_per_interval_partial_edges_and_half_open():
    cover = A((-5, 3), (8, 20))
    # query order is preserved and is not sorted
    q = A((0, 10), (4, 8), (3, 8), (9, 9), (15, 30), (-10, -5))
    got = iv.covered_per_interval(*q, cover)
    assert got.tolist() == [(3 - 0) + (10 - 8), 0, 0, 0, 20 - 15, 0]


def test_covered_per_interval_query_inside_one_cover():
    assert iv.covered_per_interval(*A((5, 6), (0, 10)), A((0, 10))).tolist() == [1, 10]


def test_covered_per_interval_query_starting_at_cover_start():
    assert iv.covered_per_interval(*A((2, 3), (2, 2)), A((2, 4))).tolist() == [1, 0]


def test_covered_per_interval_overlapping_cover_counted_once():
    assert iv.covered_per_interval(*A((0, 10)), A((0, 5), (3, 8))).tolist() == [8 - 0]


def test_covered_per_interval_empty():
    assert iv.covered_per_interval(*A((0, 10), (3, 4)), A()).tolist() == [0, 0]
    got = iv.covered_per_interval(*A(), A((0, 10)))
    assert got.size == 0


# -- against a brute-force grid -------------------------------------------------------------
def _mask(starts, ends, n):
    m = np.zeros(n, dtype=bool)
    for s, e in zip(starts, ends):
        if e > s:
            m[max(s, 0):max(e, 0)] = True
    return m


@pytest.mark.parametrize("seed", range(20))
def test_random_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 300

    def rand_set(k):
        s = rng.integers(0, n - 20, k)
        return s, s + rng.integers(0, 40, k)  # includes zero-length and touching ones

    a, b = rand_set(rng.integers(0, 12)), rand_set(rng.integers(0, 12))
    ma, mb = _mask(*a, n + 60), _mask(*b, n + 60)
    assert iv.length(*a) == ma.sum()
    us_, ue = iv.union(*a)
    assert (us_[1:] > ue[:-1]).all()  # disjoint and not touching
    assert np.array_equal(_mask(us_, ue, n + 60), ma)
    assert iv.intersect_length(a, b) == (ma & mb).sum()
    assert np.array_equal(_mask(*iv.intersect(a, b), n + 60), ma & mb)
    q = rand_set(15)
    want = [int(mb[s:e].sum()) if e > s else 0 for s, e in zip(*q)]
    assert iv.covered_per_interval(*q, b).tolist() == want
    lo, hi = sorted(rng.integers(0, n, 2).tolist())
    cs, ce = iv.clip(*a, lo, hi)
    assert (ce > cs).all()
    window = np.zeros(n + 60, dtype=bool)
    window[lo:hi] = True
    assert np.array_equal(_mask(cs, ce, n + 60), ma & window)


@pytest.mark.parametrize("seed", range(6))
def test_union_small_and_vectorised_paths_agree_with_brute_force(seed):
    """union merges up to iv._SMALL intervals in a Python loop and more with numpy: both give the grid's
    merged runs (sizes on either side of the switch)."""
    rng = np.random.default_rng(100 + seed)
    n = 200
    for k in (0, 1, 2, iv._SMALL - 1, iv._SMALL, iv._SMALL + 1, 3 * iv._SMALL):
        s = rng.integers(0, n - 20, k)
        e = s + rng.integers(-2, 25, k)  # zero- and negative-length ones are dropped
        us_, ue = iv.union(s, e)
        assert us_.dtype == ue.dtype == np.int64
        assert (ue > us_).all() and (us_[1:] > ue[:-1]).all()
        assert np.array_equal(_mask(us_, ue, n + 40), _mask(s, e, n + 40))


@pytest.mark.parametrize("seed", range(6))
def test_intersect_small_and_sweep_paths_agree_with_brute_force(seed):
    """intersect walks two merged sets of up to iv._SMALL intervals each in Python and sweeps larger ones
    with numpy: both give the grid's common runs, merged (sizes on either side of the switch)."""
    rng = np.random.default_rng(200 + seed)
    n = 400
    for ka, kb in ((1, 1), (3, iv._SMALL), (iv._SMALL, iv._SMALL), (iv._SMALL + 1, 4), (4 * iv._SMALL, 2 * iv._SMALL)):
        a_s = rng.integers(0, n - 20, ka)
        b_s = rng.integers(0, n - 20, kb)
        a, b = (a_s, a_s + rng.integers(0, 12, ka)), (b_s, b_s + rng.integers(0, 12, kb))
        s, e = iv.intersect(a, b)
        assert s.dtype == e.dtype == np.int64
        assert (e > s).all() and (s[1:] > e[:-1]).all()  # disjoint, not touching
        assert np.array_equal(_mask(s, e, n + 40), _mask(*a, n + 40) & _mask(*b, n + 40))


def test_isin_sorted_is_np_isin_for_a_sorted_distinct_table():
    rng = np.random.default_rng(7)
    for k in (0, 1, 5, 40):
        table = np.unique(rng.integers(-5, 50, k))
        values = rng.integers(-10, 60, 30)
        assert iv.isin_sorted(values, table).tolist() == np.isin(values, table).tolist()
    assert iv.isin_sorted(np.array([], dtype=np.int64), np.array([3])).tolist() == []
