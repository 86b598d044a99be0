"""Which GPU activity is communication, compute or memory.

A GPU kernel is **communication** when either

- its name matches :data:`DEFAULT_COMM_PATTERN` (``nccl*``/``rccl*``, which covers
  ``ncclDevKernel_*``, ``ncclKernel_*`` and ROCm RCCL kernels) or the user's extra regex, or
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

DEFAULT_COMM_PATTERN = r"^(?:nccl|rccl)"
#: CPU ops whose launches are collectives
COLLECTIVE_OP_PATTERN = r"^(?:record_param_comms$|c10d::|_c10d_functional::|c10d_functional::|nccl:|gloo:)"

COMPUTE, COMM, MEMORY = "compute", "comm", "memory"
CLASSES = (COMPUTE, COMM, MEMORY)


def collective_external_ids(rt: RankTrace) -> np.ndarray:
    """External ids of the CPU ops that launch collectives."""
    ev = rt.events
    ext = ev["external_id"].to_numpy()
    # numpy masks, not a DataFrame filter: the CPU ops are ~40 % of a trace's rows
    hit = (ev["kind"].to_numpy() == schema.CPU_OP) & (ext >= 0) & schema.name_mask(ev["name"], COLLECTIVE_OP_PATTERN)
    return np.unique(ext[hit])


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
    codes = np.where(~kernel, 2, np.where(by_name | by_op, 1, 0)).astype(np.int8)
    # a Categorical: comparisons (``cls == COMPUTE``) run on the codes, not on strings
    return pd.Series(pd.Categorical.from_codes(codes, categories=CLASSES), index=g.index, name="cls")
