"""Which GPU activity is communication, compute or memory.

A GPU kernel is **communication** when either

- its name matches :data:`DEFAULT_COMM_PATTERN` (``nccl*``, which covers
  ``ncclDevKernel_*`` and ``ncclKernel_*``) or the user's extra regex, or
- it was launched from a collective CPU op (``record_param_comms``,
  ``c10d::*``, ``_c10d_functional::*``, ``nccl:*``, ``gloo:*``) — linked by the
  profiler's External id, taken from the kernel or from its launch call.

**Memory** activity is every memcpy and memset. **Compute** is every other kernel.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tracekit.traces import schema
from tracekit.traces.traceset import RankTrace

DEFAULT_COMM_PATTERN = r"^nccl"
#: CPU ops whose launches are collectives
COLLECTIVE_OP_PATTERN = r"^(?:record_param_comms$|c10d::|_c10d_functional::|c10d_functional::|nccl:|gloo:)"

COMPUTE, COMM, MEMORY = "compute", "comm", "memory"


def collective_external_ids(rt: RankTrace) -> np.ndarray:
    """External ids of the CPU ops that launch collectives."""
    ev = rt.events
    cpu = ev[(ev["kind"] == schema.CPU_OP) & (ev["external_id"] >= 0)]
    return cpu.loc[schema.name_mask(cpu["name"], COLLECTIVE_OP_PATTERN), "external_id"].unique()


def classify_gpu(rt: RankTrace, comm_pattern: str | None = None) -> pd.Series:
    """Class of each row of ``rt.gpu``: ``"compute"``, ``"comm"`` or ``"memory"`` (computed once per pattern)."""
    return rt.memo(("classify_gpu", comm_pattern or None), lambda: _classify(rt, comm_pattern))


def _classify(rt: RankTrace, comm_pattern: str | None) -> pd.Series:
    g = rt.gpu
    pattern = DEFAULT_COMM_PATTERN if not comm_pattern else f"(?:{DEFAULT_COMM_PATTERN})|(?:{comm_pattern})"
    rx = re.compile(pattern, re.IGNORECASE)
    # classify the (few) distinct names once, then map: cheap on millions of kernels
    cats = g["name"].cat.categories if isinstance(g["name"].dtype, pd.CategoricalDtype) else pd.Index(g["name"].unique())
    name_is_comm = pd.Series([bool(rx.search(str(c))) for c in cats], index=cats)
    by_name = g["name"].map(name_is_comm).astype(bool).to_numpy()
    by_op = g["external_id"].isin(collective_external_ids(rt)).to_numpy()
    kernel = (g["kind"] == schema.KERNEL).to_numpy()
    out = np.where(~kernel, MEMORY, np.where(by_name | by_op, COMM, COMPUTE))
    return pd.Series(out, index=g.index, name="cls")
