"""The bucket figures of profiler_distortion's trace side: exposed communication per step."""

from __future__ import annotations

import numpy as np

from tracekit.analyses import distortion


def test_a_bucket_whose_backward_end_is_unknown_counts_nothing_exposed() -> None:
    # two steps, one allreduce each from 1000 to 2000 ns; step 1's backward ends at 1500 ns (500 ns exposed),
    # step 2's end is unknown (-1): 0 exposed, not the whole kernel; mean over the steps 250 ns = 0.25 µs
    timeline = {"rank": np.array([0, 0]), "step": np.array([1, 2]), "start_ns": np.array([1000, 1000]),
                "end_ns": np.array([2000, 2000]), "bwd_compute_end_ns": np.array([1500, -1])}
    figs = distortion._trace_bucket_figures(timeline, {})
    assert figs[0]["exposed"] == 0.25 and figs[0]["comm"] == 1.0
