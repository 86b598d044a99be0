"""gpu_idle on a real trace against a plain-Python sweep (an independent computation of the same definitions)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import tracekit

RUN = Path(__file__).resolve().parents[2] / "sample_traces" / "fixtures/h200x2_resnet50_inductor"


def _sweep(acts: list[tuple[int, int, int]], lo: int, hi: int) -> tuple[int, int]:
    """(busy ns, launch-gap ns) inside [lo, hi) from (start, end, launch) triples, by walking them in order."""
    busy = launch_gap = 0
    cur_s = cur_e = None
    for s, e, at in sorted(acts):
        if cur_e is not None and s > cur_e:  # a gap [cur_e, s) closed by an activity launched at `at`
            if at >= 0 and at > cur_e:
                g0, g1 = max(cur_e, lo), min(min(s, at), hi)
                launch_gap += max(0, g1 - g0)
            busy += max(0, min(cur_e, hi) - max(cur_s, lo))
            cur_s, cur_e = s, e
        elif cur_e is None:
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        busy += max(0, min(cur_e, hi) - max(cur_s, lo))
    return busy, launch_gap


@pytest.mark.skipif(not RUN.exists(), reason="sample trace missing")
def test_gpu_idle_matches_a_plain_sweep() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = tracekit.load(RUN)
        res = tracekit.analyze(ts)
    for rt in ts:
        g = rt.gpu
        acts = list(zip(g["ts_ns"].tolist(), g["end_ns"].tolist(), g["launch_ts_ns"].tolist()))
        rows = res.gpu_idle[res.gpu_idle["rank"] == rt.rank].set_index("step")
        for st in rt.steps.itertuples(index=False):
            busy, gap = _sweep(acts, int(st.ts_ns), int(st.end_ns))
            assert rows.loc[st.step, "gpu_busy_us"] == pytest.approx(busy / 1000, abs=1e-3)
            assert rows.loc[st.step, "launch_idle_us"] == pytest.approx(gap / 1000, abs=1e-3)
