"""The profiler's own cost per recorded event, as the replay subtracts it.

Where the figures come from, in order:

1. run.json ``profiler_cost`` (``tracekit profile`` measures it on the run's machine with
   the run's profiler settings, :mod:`tracekit.profile.calibrate`): ``source="run.json"``;
2. otherwise the documented defaults below: ``source="default"``, and every prediction
   says so. They are medians of what ``tracekit profile`` measured on the machines we ran
   (see docs/whatif.md, "Profiler cost"): a trace from another machine, torch or profiler
   setting may cost more or less per event, which moves the prediction by up to
   (events per step) x (the difference).
"""

from __future__ import annotations

from dataclasses import dataclass

from tracekit.traces.manifest import Manifest

#: defaults for traces without a measured cost (ns per event): CPU operator, CUDA runtime call
DEFAULT_CPU_OP_NS = 1600.0
DEFAULT_RUNTIME_NS = 4800.0


@dataclass(frozen=True)
class ProfilerCosts:
    """Wall ns the profiler adds per recorded CPU operator/annotation and per runtime call."""

    cpu_op_ns: float
    runtime_ns: float
    #: ``run.json`` (measured for this run) or ``default`` (module doc)
    source: str

    @classmethod
    def of(cls, manifest: Manifest | None) -> ProfilerCosts:
        """The run's measured costs, falling back per figure to the defaults."""
        pc = manifest.profiler_cost if manifest is not None else None
        cpu = pc.cpu_op_ns if pc is not None and pc.cpu_op_ns is not None else None
        rt = pc.runtime_ns if pc is not None and pc.runtime_ns is not None else None
        cpu_run = manifest is not None and manifest.run is not None and manifest.run.device == "cpu"
        if cpu is not None and (rt is not None or cpu_run):
            return cls(cpu, rt or 0.0, "run.json")
        if cpu is not None:
            return cls(cpu, DEFAULT_RUNTIME_NS, "run.json (runtime calls: default)")
        return cls(DEFAULT_CPU_OP_NS, DEFAULT_RUNTIME_NS, "default")


#: no profiler cost: the replay of the window as it was recorded (the self-check)
NONE = ProfilerCosts(0.0, 0.0, "none")
