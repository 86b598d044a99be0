"""What a what-if scenario is (:class:`Scenario`) and what every scenario reads (:class:`Context`).

Apart from :mod:`tracekit.replay.scenarios`, which applies them, so that the scenario families
(:mod:`~tracekit.replay.buckets`, :mod:`~tracekit.replay.breaks`) can name these types without
importing the module that imports them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tracekit.errors import ConfigError
from tracekit.replay import ddp, network
from tracekit.traces.traceset import TraceSet


@dataclass(frozen=True)
class Scenario:
    """Changes predicted together (module doc); None/False: unchanged."""

    bucket_cap_mb: float | None = None
    first_bucket_cap_mb: float | None = None
    no_graph_breaks: bool = False
    comm_hook: str | None = None
    bandwidth_x: float | None = None
    world_size: int | None = None
    #: the network's allreduce bus bandwidth, GB/s (nccl-tests' busbw: bytes x 2(n-1)/n per second)
    busbw_gbps: float | None = None

    def changes(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v is not False}

    @property
    def name(self) -> str:
        return " ".join(k.replace("_", "-") if v is True else f"{k.replace('_', '-')}={v:g}"
                        if isinstance(v, float) else f"{k.replace('_', '-')}={v}" for k, v in self.changes().items())

    def validate(self) -> None:
        for k in ("bucket_cap_mb", "first_bucket_cap_mb", "bandwidth_x", "busbw_gbps"):
            v = getattr(self, k)
            if v is not None and not v > 0:
                raise ConfigError(f"--{k.replace('_', '-')} must be > 0, got {v}")
        if self.world_size is not None and self.world_size < 1:
            raise ConfigError(f"--world-size must be >= 1, got {self.world_size}")
        if self.bandwidth_x is not None and self.busbw_gbps is not None:
            raise ConfigError("--bandwidth-x and --busbw-gbps both set the network's bandwidth: give one")
        if self.comm_hook not in (None, "bf16", "fp16"):
            raise ConfigError(f"--comm-hook must be bf16 or fp16, got {self.comm_hook}")


@dataclass
class Context:
    """What every scenario reads: the run, its matched collectives (``colls``, one row per rank and
    instance, with ``node``: the collective's node in the graph), the fit and the bucket layout."""

    traces: TraceSet
    colls: pd.DataFrame
    comm: dict[int, np.ndarray]
    fit: network.AlphaBeta
    layout: ddp.Layout | None
    layout_error: str | None
    backend: str | None
    world_size: int
    applied_hook: str | None
    #: per rank, which of ``Graph.ranks[rank]["gpu_node"]`` are compute kernels (the contention model's
    #: kernels, :func:`tracekit.replay.contention.readjust`); empty: none modelled
    compute: dict[int, np.ndarray] = field(default_factory=dict)
    #: the baseline prediction's node times (start, end); None: the recorded window's (the baseline prediction
    #: of a graph built without profiler cost)
    base_times: tuple[np.ndarray, np.ndarray] | None = None
