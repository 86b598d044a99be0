"""How far to trust a predicted step: the error the replay made on benchmark runs of the same regime.

The baseline prediction's error depends above all on what bounds the step. Where the GPU is busy
throughout, the replay keeps the measured kernels and the profiler's CPU-side cost hardly matters;
where the GPU waits for the CPU, the whole prediction rests on the per-event profiler cost, which
varies from model to model (docs/whatif.md, "Measured error"). So every prediction is placed in one of
two regimes by its own **predicted GPU idle share** (``predicted_gpu_idle_pct``: the mean over ranks of
the rank's predicted GPU idle divided by its predicted step, both means over steps, %; None on CPU
runs), and quoted with the error measured on the committed benchmark runs of that regime: their
predicted step against the step measured without the profiler in the same run. The run's own measured
step is never used here.

:data:`REGIMES` names the result file it summarises (``benchmarks/results/``, written by
``benchmarks/bench_whatif.py`` over every committed CUDA run with a measured step: single GPUs, and 2 and 4
GPUs over NCCL); ``tests/test_whatif_trust.py`` recomputes every figure from it. The threshold
(:data:`GPU_BOUND_MAX_IDLE_PCT`) was set in the gap of the single-GPU runs' idle shares (13.3 % to 17.3 %);
over all of them it still falls in a gap (14.9 % to 15.9 %). It describes the runs, it was not tuned to a
target.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: a step whose predicted GPU idle share is below this is GPU-bound (module doc)
GPU_BOUND_MAX_IDLE_PCT = 15.0

_SOURCES = ("whatif_2026-11-27_committed_all.jsonl",)


@dataclass(frozen=True)
class Regime:
    """What bounds a step, and the replay's |error| on the benchmark runs of that kind."""

    #: ``gpu-bound`` or ``cpu-bound``
    name: str
    #: the predicted GPU idle share range, %: [low, high)
    idle_pct_low: float
    idle_pct_high: float
    #: benchmark runs in the regime, and their |predicted − measured| / measured, %: median and max
    runs: int
    error_pct_median: float
    error_pct_max: float
    #: result files under benchmarks/results/ the figures come from
    sources: tuple[str, ...] = _SOURCES

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sources"] = list(self.sources)
        return d


REGIMES: tuple[Regime, ...] = (
    Regime("gpu-bound", 0.0, GPU_BOUND_MAX_IDLE_PCT, 44, 1.2, 8.3),
    Regime("cpu-bound", GPU_BOUND_MAX_IDLE_PCT, 100.0 + 1e-9, 89, 10.6, 86.2),
)


#: runs without GPU activity (CPU/gloo; no regime): how many of the result file's runs, and their |error|, %:
#: median and max
CPU_RUNS: tuple[int, float, float] = (18, 5.3, 14.8)


def regime_of(predicted_gpu_idle_pct: float | None) -> Regime | None:
    """The regime of a prediction with this idle share (None without one: a CPU run)."""
    if predicted_gpu_idle_pct is None:
        return None
    return next((r for r in REGIMES if r.idle_pct_low <= predicted_gpu_idle_pct < r.idle_pct_high), None)


def describe(regime: Regime, idle_pct: float) -> str:
    """One line for the reports."""
    bound = "GPU-bound" if regime.name == "gpu-bound" else "CPU-bound"
    return (f"{bound} step (the GPU idle {idle_pct:.1f} % of the predicted step): on {regime.runs} benchmark runs "
            f"of that kind the prediction was off by a median of {regime.error_pct_median:.1f} %, "
            f"at most {regime.error_pct_max:.1f} %")
