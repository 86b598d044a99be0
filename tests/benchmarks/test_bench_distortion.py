"""The overhead interval of benchmarks/bench_distortion.py: paired blocks, slowest rank per step."""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "bench_distortion", Path(__file__).resolve().parents[2] / "benchmarks" / "bench_distortion.py")
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_paired_overhead_uses_the_slowest_rank_per_step_and_block_pairs() -> None:
    # 2 ranks, 3 pairs of 2-step blocks; the slowest rank's steps: off 10,10 | 20,20 | 10,10 ms,
    # on 11,11 | 21,21 | 12,12 ms -> per pair +10 %, +5 %, +20 %
    off = [[10, 9, 20, 19, 10, 9], [9, 10, 18, 20, 9, 10]]
    on = [[11, 10, 21, 20, 12, 11], [10, 11, 20, 21, 11, 12]]
    got = bench.paired_overhead_pct(off, on, block=2)
    d = [10.0, 5.0, 20.0]
    half = 4.30 * statistics.stdev(d) / 3 ** 0.5  # t(0.975, 2 dof)
    assert got["pairs"] == 3 and got["mean_pct"] == pytest.approx(35 / 3)
    assert got["ci95_low_pct"] == pytest.approx(35 / 3 - half) and got["ci95_high_pct"] == pytest.approx(35 / 3 + half)


def test_paired_overhead_needs_two_pairs() -> None:
    assert bench.paired_overhead_pct([[1.0, 1.0]], [[1.0, 1.0]], block=2) is None
