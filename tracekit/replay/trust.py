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

:data:`REGIMES` names the result files it summarises (``benchmarks/results/``: ``benchmarks/bench_whatif.py``
over every committed CUDA run with a measured step, single GPUs and 2 and 4 GPUs over NCCL, and
``benchmarks/bench_unsynced.py`` over plain training loops that never synchronize, on one GPU and under DDP on
two, the NCCL baselines of 2026-11-28 whose traces were not kept, seven single-GPU programs held out on
2026-11-28, fourth session, and the 20 runs of five programs at four bucket caps over NCCL on a 2 x H200 host
held out on 2026-11-28, fifth session, the 2-rank NCCL baselines held out in the seventh and eighth sessions,
traces not kept, and the six GPU-bound 2-rank baselines of the contention check of the ninth session, four of them
committed under ``sample_traces/h200x2_contention``, and four CPU-bound runs of 1 and 2 ranks profiled for the phase check
of the same session, traces not kept);
``tests/test_whatif_trust.py`` recomputes every figure from them. The threshold was set in the gap of the
single-GPU runs' predicted idle shares (13.3 % to 17.3 % then; 9.7 % to 15.4 % with the model of 2026-11-28);
over all of them it still falls in a gap (14.5 % to 15.4 %), and so it does in the windows' idle shares of the
GPU-bound predictions (14.9 % to 17.7 %). It
describes the runs, it was not tuned to a target.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tracekit.analyses import gpu_idle

#: a step whose GPU idle share is below this is GPU-bound (module doc): the threshold analyze's classes use too
GPU_BOUND_MAX_IDLE_PCT = gpu_idle.GPU_BOUND_MAX_IDLE_PCT

_SOURCES = ("whatif_2026-11-27_committed_all.jsonl", "whatif_2026-11-27_h100_unsynced.jsonl",
            "whatif_2026-11-27_h100x2_unsynced.jsonl", "whatif_2026-11-28_nccl_baselines_not_kept.jsonl",
            "whatif_2026-11-28_h200_heldout_e_not_kept.jsonl", "whatif_2026-11-28_h200x2_layouts_not_kept.jsonl",
            "whatif_2026-11-28_h200x2_ws1_baselines_not_kept.jsonl",
            "whatif_2026-11-28_h200x2_hooks_baselines_not_kept.jsonl",
            "whatif_2026-11-28_h200x2_contention_baselines.jsonl",
            "whatif_2026-11-28_h200x2_contention_tfmbig_baselines_not_kept.jsonl",
            "whatif_2026-11-28_h200x2_phases_baselines_not_kept.jsonl",
            "whatif_2026-11-29_h200_window_not_kept.jsonl", "whatif_2026-11-29_h200_window_b_not_kept.jsonl",
            "whatif_2026-11-29_h200_defaults_not_kept.jsonl")
_ANY = (0.0, 100.0 + 1e-9)


@dataclass(frozen=True)
class Regime:
    """What bounds a step, and the replay's |error| on the benchmark runs of that kind."""

    #: ``gpu-bound``, ``gpu-bound-once-shed`` or ``cpu-bound`` (module doc)
    name: str
    #: the predicted GPU idle share range, %: [low, high)
    idle_pct_low: float
    idle_pct_high: float
    #: benchmark runs in the regime, and their |predicted − measured| / measured, %: median and max
    runs: int
    error_pct_median: float
    error_pct_max: float
    #: the window's GPU idle share range, %: [low, high)
    window_idle_pct_low: float = _ANY[0]
    window_idle_pct_high: float = _ANY[1]
    #: result files under benchmarks/results/ the figures come from
    sources: tuple[str, ...] = _SOURCES
    #: which way the predictions erred on the runs of 2 ranks or more among them: how many such runs, in how many
    #: the predicted step was below the measured one, and the median of (predicted − measured) / measured, %
    #: (signed). A multi-rank run is quoted these (:meth:`to_dict`): the 2-rank CPU-bound steps carry time that
    #: comes with the communication and that the trace does not show (docs/whatif.md)
    multi_rank: tuple[int, int, float] | None = None

    def holds(self, idle_pct: float, window_idle_pct: float) -> bool:
        return (self.idle_pct_low <= idle_pct < self.idle_pct_high
                and self.window_idle_pct_low <= window_idle_pct < self.window_idle_pct_high)

    def to_dict(self, *, several_ranks: bool = True) -> dict[str, Any]:
        """The regime as JSON; ``multi_rank`` as ``{"runs", "below", "error_pct_median"}``, null for a run of one
        rank (``several_ranks`` False) or a regime without multi-rank runs."""
        d = asdict(self)
        d["sources"] = list(self.sources)
        d["multi_rank"] = self.multi_rank_dict() if several_ranks else None
        return d

    def multi_rank_dict(self) -> dict[str, Any] | None:
        """``multi_rank`` as ``{"runs", "below", "error_pct_median"}`` (None without it)."""
        m = self.multi_rank
        return dict(zip(("runs", "below", "error_pct_median"), m)) if m else None


_B = GPU_BOUND_MAX_IDLE_PCT
REGIMES: tuple[Regime, ...] = (
    Regime("gpu-bound", 0.0, _B, 55, 1.2, 3.8, 0.0, _B, multi_rank=(32, 14, 0.1)),
    Regime("gpu-bound-once-shed", 0.0, _B, 17, 5.8, 27.0, _B, _ANY[1], multi_rank=(6, 6, -13.3)),
    Regime("cpu-bound", _B, _ANY[1], 168, 11.5, 87.7, multi_rank=(63, 44, -6.9)),
)


#: runs without GPU activity (CPU/gloo; no regime): how many of the result file's runs, and their |error|, %:
#: median and max
CPU_RUNS: tuple[int, float, float] = (18, 5.3, 14.8)


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
