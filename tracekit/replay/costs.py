"""The profiler's own cost per recorded event, as the replay subtracts it.

Where the figures come from, in order:

1. run.json ``profiler_cost`` (``tracekit profile`` measures it on the run's machine with
   the run's profiler settings, :mod:`tracekit.profile.calibrate`; compiled CUDA runs
   with a compiled probe too, whose figure is the run's): ``source="run.json"``;
   another probe's figures on request (``probe=``, ``tracekit whatif --profiler-probe``):
   ``source="run.json (probe <label>)"``;
2. otherwise, or where run.json's figure is outside what the profiler can cost per event on a
   CUDA run (:data:`tracekit.traces.manifest.PROFILER_COST_RANGE_NS`: a failed measurement), the
   documented defaults below: ``source="default"``, and every prediction says so (and why). They are medians of what ``tracekit profile`` measured on the machines we ran
   (see docs/whatif.md, "Profiler cost"): a trace from another machine, torch or profiler
   setting may cost more or less per event, which moves the prediction by up to
   (events per step) x (the difference).

**Per event kind.** The figure above is measured per event of a small synthetic step; a
recorded event of kind ``k`` (:func:`event_kinds`) is charged that figure times the
dimensionless weight ``weights[k]`` (:data:`WEIGHTS`) and the run's ``scale``
(:data:`CUDA_SCALE` for CUDA runs): ``cpu_op_ns x w x scale`` for operators and
annotations, ``runtime_ns x w x scale`` for runtime/driver calls. The calibrated figure keeps the
machine's scale; the weights say how much more or less an event of each kind costs the
profiler than the calibration step's average event.

**Bounded per cut.** What one cut of a thread sheds is at most :data:`CUT_QUANTILE` of that
thread's work-segment lengths (:meth:`ProfilerCosts.cut_bound`), so a thread whose events follow
each other closely is charged less per event than a sparse one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tracekit.errors import ConfigError
from tracekit.traces import schema
from tracekit.traces.manifest import Manifest, implausible_profiler_cost

#: defaults for traces without a measured cost (ns per event): CPU operator, CUDA runtime call. One figure for
#: both, the median of the 13 calibrations of sample_traces/whatif/h100_whatif_3 (H100 host, torch 2.11, DDP; 1121 to
#: 5146 ns), as tracekit profile measures CUDA runs (tracekit.profile.calibrate)
DEFAULT_CPU_OP_NS = 2080.0
DEFAULT_RUNTIME_NS = 2080.0

#: event kinds (:func:`event_kinds`): a CPU operator or ``record_function`` annotation; an inductor Triton
#: launch range (a ``cpu_op`` named ``triton_*``); a runtime/driver call that put work on the GPU (a kernel,
#: copy or memset carries its correlation id: CUPTI writes an activity record for it); any other runtime call
OP, TRITON, LAUNCH_GPU, RUNTIME = range(4)
KIND_LABELS = ("op", "triton", "launch_gpu", "runtime")
TRITON_PREFIX = "triton_"

#: weight per event kind (index: :data:`OP`, :data:`TRITON`, :data:`LAUNCH_GPU`, :data:`RUNTIME`). All 1.0: one
#: figure per event. Weights fitted with benchmarks/fit_profiler_weights.py did not hold on held-out runs
#: (docs/whatif-evidence.md, "A cost per event kind"): fitted on the 23 H100 runs (sample_traces/whatif/h100_whatif,
#: h100_whatif_3) as (3.625, 3.625, 0.062, 0.0), the 13 held-out H200 runs went from median/max |error|
#: 9.8/51.3 % to 7.5/56.2 %; fitted on the H200 runs as (1.5, 1.5, 1.0, 5.0), the H100 runs went from
#: 16.0/128.2 % to 14.3/109.3 %. The max got worse in one direction, so they are not used.
WEIGHTS: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)

#: dimensionless factor on the calibrated (or default) figures of CUDA runs: an event of a real step costs the
#: profiler more than an event of the calibration's small step. Chosen together with :data:`CUT_QUANTILE` (which keeps
#: it off the dense threads a larger factor empties) by mean |error| on the 46 single-H100 runs, over quantiles 0.3 to
#: 0.7 and none x factors 1 to 4, and held out on the H200 runs (docs/whatif-evidence.md, "A thread woken in the window
#: starts when it is woken"): 0.6 and 2.5. CPU runs keep 1.0: their calibration runs on the CPU, and the CPU runs with
#: a measured step did not move with it.
CUDA_SCALE = 2.5

#: the most a cut may shed, as a quantile of the lengths of its thread's work segments (module doc of
#: :mod:`tracekit.replay.graph`, "Profiler cost"): the profiler's own work at an event boundary runs on that thread
#: between its cuts, so where the cuts are dense it cannot be larger than the stretches between them. Without it the
#: per-event figure x :data:`CUDA_SCALE` asked the dense autograd thread of a transformer for 1.1x to 1.4x its whole
#: recorded work, and the carry emptied it (0.2 to 6 % of its work left). None: no bound
CUT_QUANTILE = 0.6


def event_kinds(ev: pd.DataFrame, gpu_correlations: np.ndarray) -> np.ndarray:
    """Kind code (:data:`OP` ... :data:`RUNTIME`) of each row of ``ev`` (CPU events with ``kind``,
    ``name``, ``correlation``: :func:`tracekit.replay.builder.cpu_events`). ``gpu_correlations``: the
    correlation ids of the rank's GPU operations."""
    if not len(ev):
        return np.full(0, OP, dtype=np.int8)
    triton = schema.name_mask(ev["name"], TRITON_PREFIX, prefix=True)
    return kinds_of(ev["kind"].to_numpy(), ev["correlation"].to_numpy(), triton, gpu_correlations)


def kinds_of(kind: np.ndarray, correlation: np.ndarray, triton: np.ndarray, gpu_correlations: np.ndarray) -> np.ndarray:
    """:func:`event_kinds` on columns: the event ``kind``, ``correlation``, and whether the name starts with
    :data:`TRITON_PREFIX`."""
    launch = kind == schema.LAUNCH
    out = np.full(kind.size, OP, dtype=np.int8)
    out[~launch & triton] = TRITON
    on_gpu = launch & (correlation >= 0) & np.isin(correlation, gpu_correlations)
    out[on_gpu] = LAUNCH_GPU
    out[launch & ~on_gpu] = RUNTIME
    return out


@dataclass(frozen=True)
class ProfilerCosts:
    """Wall ns the profiler adds per recorded CPU operator/annotation and per runtime call, and the
    weight per event kind that multiplies them (module doc)."""

    cpu_op_ns: float
    runtime_ns: float
    #: ``run.json`` (measured for this run) or ``default`` (module doc)
    source: str
    #: scale each step's CPU work by its speed factor (:mod:`tracekit.replay.speed`); off for the self-check
    step_speed: bool = True
    #: dimensionless weight per event kind (:data:`WEIGHTS`); all 1.0: one figure per operator / runtime call
    weights: tuple[float, float, float, float] = WEIGHTS
    #: dimensionless factor on both figures (:data:`CUDA_SCALE` for CUDA runs, 1.0 for CPU runs)
    scale: float = 1.0
    #: a cut sheds at most this quantile of its thread's work-segment lengths (:data:`CUT_QUANTILE`; None: no bound)
    cut_quantile: float | None = CUT_QUANTILE
    #: why run.json's calibration was not used (outside what the profiler can cost), None when it was or there was none
    rejected: str | None = None

    @classmethod
    def of(cls, manifest: Manifest | None, weights: tuple[float, float, float, float] = WEIGHTS,
           probe: str | None = None, scale: float | None = None) -> ProfilerCosts:
        """The run's measured costs, falling back per figure to the defaults; ``weights`` per event kind;
        ``scale`` on both figures (None: :data:`CUDA_SCALE`, or 1.0 for a CPU run).

        ``probe``: the figures of that calibration probe (run.json ``profiler_cost.probes``: ``eager``, or
        the run's compile backend) instead of the run's own; :class:`ConfigError` when the run has none."""
        pc = manifest.profiler_cost if manifest is not None else None
        cpu = pc.cpu_op_ns if pc is not None and pc.cpu_op_ns is not None else None
        rt = pc.runtime_ns if pc is not None and pc.runtime_ns is not None else None
        src = "run.json"
        if probe is not None:
            fig = (pc.probes if pc is not None else {}).get(probe)
            if fig is None:
                have = ", ".join(pc.probes) if pc is not None and pc.probes else "none"
                raise ConfigError(f"run.json has no profiler calibration probe {probe!r} (it has: {have})")
            cpu, rt, src = fig.get("cpu_op_ns"), fig.get("runtime_ns"), f"run.json (probe {probe})"
        cpu_run = manifest is not None and manifest.run is not None and manifest.run.device == "cpu"
        k = scale if scale is not None else (1.0 if cpu_run else CUDA_SCALE)
        why = implausible_profiler_cost({"cpu_op_ns": cpu, "runtime_ns": rt}, "cpu" if cpu_run else "cuda")
        if why is not None:  # a failed measurement: the documented default, and the prediction says why
            return cls(DEFAULT_CPU_OP_NS, DEFAULT_RUNTIME_NS, "default", weights=weights, scale=k, rejected=why)
        if cpu is not None and (rt is not None or cpu_run):
            return cls(cpu, rt or 0.0, src, weights=weights, scale=k)
        if cpu is not None:
            return cls(cpu, DEFAULT_RUNTIME_NS, f"{src} (runtime calls: default)", weights=weights, scale=k)
        return cls(DEFAULT_CPU_OP_NS, DEFAULT_RUNTIME_NS, "default", weights=weights, scale=k)

    def cut_bound(self, work_lengths: np.ndarray) -> float:
        """The most one cut of a thread may shed, ns (``inf`` without a bound): :attr:`cut_quantile` of the
        thread's work-segment lengths ``work_lengths``."""
        if self.cut_quantile is None or work_lengths.size == 0:
            return float("inf")
        return float(np.quantile(work_lengths, self.cut_quantile))

    def per_kind(self) -> np.ndarray:
        """ns per event of each kind (index: the kind codes)."""
        base = np.array([self.cpu_op_ns, self.cpu_op_ns, self.runtime_ns, self.runtime_ns])
        return self.scale * base * np.asarray(self.weights, dtype=float)

    def per_event(self, kinds: np.ndarray) -> np.ndarray:
        """ns per event for ``kinds`` (:func:`event_kinds` codes)."""
        return self.per_kind()[np.asarray(kinds, dtype=np.int64)]

    @property
    def launch_ns(self) -> float:
        """ns per runtime call that launched GPU work (half of it is shed from the launch latency)."""
        return float(self.per_kind()[LAUNCH_GPU])


#: no profiler cost: the replay of the window as it was recorded (the self-check)
NONE = ProfilerCosts(0.0, 0.0, "none", step_speed=False)
