"""How far to trust a predicted step: the error the replay made on benchmark runs of the same regime.

The baseline prediction's error depends above all on what bounds the step. Where the GPU is busy
throughout, the replay keeps the measured kernels and the profiler's CPU-side cost hardly matters;
where the GPU waits for the CPU, the whole prediction rests on the per-event profiler cost, which
varies from model to model (docs/whatif-evidence.md, "Measured error"). So every prediction is placed in a
regime by its own **predicted GPU idle share** (``predicted_gpu_idle_pct``: the mean over ranks of the
rank's predicted GPU idle divided by its predicted step, both means over steps, %; None on CPU runs)
and the window's (``window_gpu_idle_pct``, the same of the recorded window):

- ``gpu-bound``: the GPU is busy (idle < :data:`GPU_BOUND_MAX_IDLE_PCT`) in the window and in the
  prediction;
- ``gpu-bound-once-shed``: the window was CPU-bound, and the prediction is GPU-bound only because of the
  profiler cost it took out; how much that was decides the step, as for a CPU-bound one;
- ``cpu-bound``: the prediction's GPU waits for the CPU.

Each is quoted with the error measured on the committed benchmark runs of that regime: their predicted
step against the step measured without the profiler (in the same run, or the loop's period for the
unsynchronized loops). The run's own measured step is never used here.

The figures are data: ``tracekit/replay/evidence/regimes.json`` (:func:`tracekit.replay.evidence.regimes`), which
names the result files under ``benchmarks/results/`` they summarise (``benchmarks/bench_whatif.py`` over every
committed CUDA run with a measured step, single GPUs and 2 and 4 GPUs over NCCL, runs whose traces were not
committed among them, and ``benchmarks/bench_unsynced.py`` over plain training loops that never synchronize);
``tests/replay/test_trust.py`` recomputes every figure from them. The rows whose traces are committed hold the
replay's predictions as it is (``benchmarks/regen_results.py``); the others (the files named ``_no_traces``, and the
unsynchronized loops without traces) hold those of the replay that first predicted them, which held a thread's
first event in the window at its recorded time and charged 3x the calibrated profiler cost. The threshold lies in a
gap of the runs' predicted idle shares (14.7 % to 15.1 %) and of the windows' idle shares of the GPU-bound
predictions (14.9 % to 17.5 %): it describes the runs, it was not tuned to a target.
"""

from __future__ import annotations

from typing import Any

from tracekit.analyses import gpu_idle
from tracekit.replay import evidence
from tracekit.replay.evidence import Regime

__all__ = ["CPU_RUNS", "GPU_BOUND_MAX_IDLE_PCT", "REGIMES", "Regime", "describe", "label", "lean_clause",
           "regime_of"]

_FILE = evidence.regimes()

#: a step whose GPU idle share is below this is GPU-bound (module doc): the threshold analyze's classes use too;
#: the evidence file records the threshold its runs were classed with (tests/replay/test_evidence.py: the two agree)
GPU_BOUND_MAX_IDLE_PCT = gpu_idle.GPU_BOUND_MAX_IDLE_PCT

#: the regimes, in the order they are tried (:func:`regime_of`)
REGIMES: tuple[Regime, ...] = _FILE.regimes

#: runs without GPU activity (CPU/gloo; no regime): how many of the result files' runs, and their |error|, %:
#: median and max
CPU_RUNS: tuple[int, float, float] = (_FILE.cpu_runs.runs, _FILE.cpu_runs.error_pct_median,
                                      _FILE.cpu_runs.error_pct_max)


def regime_of(predicted_gpu_idle_pct: float | None, window_gpu_idle_pct: float | None = None) -> Regime | None:
    """The regime of a prediction with these idle shares (None without one: a CPU run). Without the window's
    share, a GPU-bound prediction is taken as ``gpu-bound``."""
    if predicted_gpu_idle_pct is None:
        return None
    w = 0.0 if window_gpu_idle_pct is None else window_gpu_idle_pct
    return next((r for r in REGIMES if r.holds(predicted_gpu_idle_pct, w)), None)


_LABELS = {"gpu-bound": "GPU-bound step", "cpu-bound": "CPU-bound step",
           "gpu-bound-once-shed": "step GPU-bound only once the profiler's cost is taken out, from a CPU-bound "
                                  "window"}


def label(name: str) -> str:
    """How the reports name a regime."""
    return _LABELS.get(name, name)


def describe(regime: Regime, idle_pct: float, *, several_ranks: bool = False) -> str:
    """One line for the reports (with the multi-rank runs' lean for a run of several ranks)."""
    return (f"{label(regime.name)} (the GPU idle {idle_pct:.1f} % of the predicted step): on {regime.runs} "
            f"benchmark runs of that kind the prediction was off by a median of {regime.error_pct_median:.1f} %, "
            f"at most {regime.error_pct_max:.1f} %"
            + lean_clause(regime.multi_rank_dict() if several_ranks else None))


def lean_clause(multi_rank: dict[str, Any] | None) -> str:
    """``"; on the N of them with several ranks ..."``: a regime's ``multi_rank`` figures (:meth:`Regime.to_dict`),
    empty without them."""
    if not multi_rank:
        return ""
    return (f"; on the {multi_rank['runs']} of them with several ranks it was below the measured step in "
            f"{multi_rank['below']} (median error {multi_rank['error_pct_median']:+.1f} %)")
