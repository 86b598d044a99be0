"""DDP's gradient buckets as run.json records them, and the collectives of the trace that are them.

- :func:`layout`: the reducer's rebuilt layout (run.json ``buckets.reducer``): parameters in the
  order their gradients become ready (DDP rebuilds its buckets in that order after the first
  step; ``rebuilt_per_bucket_param_indices`` lists them bucket by bucket, bucket 0 first) with
  their bytes (``param_bytes``, recorded by ``tracekit profile``; for runs recorded before it, a
  bucket's bytes are counted at its last parameter: regrouping then merges recorded buckets whole
  and cannot split one, and says so).
- :func:`assign`: DDP's rule for cutting that sequence into buckets
  (``_compute_bucket_assignment_by_size``): parameters are added in order and a bucket is closed
  as soon as its bytes reach its cap; the first bucket's cap is ``first_cap``, every other bucket's
  ``cap``. DDP's first cap (:func:`first_cap`): ``bucket_cap_mb_list[0]`` when given; 1 MiB
  (``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``) when ``bucket_cap_mb`` was left at its default;
  the cap itself when ``bucket_cap_mb`` was given (torch's ``_BucketCapacityConfig``, the same since
  torch 2.1). Its rebuilt buckets follow the same caps.
- :func:`bucket_rows`: the trace's collectives that are those buckets: per rank and step, the
  backward-phase allreduces of the first process group that has them, in launch order, where
  their count is the layout's bucket count (bucket k = the k-th).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tracekit.errors import ScenarioError
from tracekit.traces.manifest import Manifest

MB = 1024 * 1024  # DDP's bucket_cap_mb is MiB: int(bucket_cap_mb * 1024 * 1024)
DEFAULT_FIRST_CAP = MB  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES: the first bucket under default caps


@dataclass(frozen=True)
class Layout:
    """The recorded bucket layout, parameters in gradient-ready order (module doc)."""

    param_bytes: list[int]
    bucket_of: list[int]
    sizes: list[int]
    cap_bytes: int
    first_cap_bytes: int | None
    #: the first cap is DDP's default 1 MiB (``bucket_cap_mb`` not given); a scenario that gives a cap drops it
    first_cap_default: bool
    #: ``param_bytes`` recorded per parameter (False: each bucket's bytes at its last parameter, module doc)
    exact: bool


def _indices(text: str | None) -> list[list[int]]:
    if not text:
        return []
    return [[int(x) for x in part.split()] for part in str(text).split(",") if part.strip()]


def layout(manifest: Manifest | None) -> Layout:
    """The rebuilt layout of run.json; :class:`ScenarioError` when run.json does not have it."""
    red = manifest.buckets.reducer if manifest is not None and manifest.buckets is not None else None
    if red is None:
        why = "no run.json" if manifest is None else "run.json has no DDP reducer layout (buckets.reducer)"
        raise ScenarioError(why)
    groups = _indices(red.rebuilt_per_bucket_param_indices)
    sizes = red.rebuilt_bucket_sizes_bytes or []
    if not groups or len(groups) != len(sizes) or not red.bucket_cap_bytes:
        raise ScenarioError("run.json's reducer has no rebuilt bucket layout (rebuilt_per_bucket_param_indices)")
    order = [i for g in groups for i in g]
    bucket_of = [b for b, g in enumerate(groups) for _ in g]
    exact = red.param_bytes is not None and len(red.param_bytes) > max(order)
    if exact:
        pbytes = [int(red.param_bytes[i]) for i in order]
    else:  # older runs: a bucket's bytes counted at its last parameter, so DDP's rule keeps it whole
        last = {len(order) - 1 - order[::-1].index(g[-1]) for g in groups}
        pbytes = [int(sizes[b]) if k in last else 0 for k, b in enumerate(bucket_of)]
    applied = (manifest.run.parallel_applied or {}) if manifest.run is not None else {}
    first, default = first_cap(applied.get("bucket_cap_mb_list"), manifest.config)
    return Layout(pbytes, bucket_of, [int(s) for s in sizes], int(red.bucket_cap_bytes), first_cap_bytes=first,
                  first_cap_default=default, exact=exact)


def first_cap(caps: object, config: dict) -> tuple[int | None, bool]:
    """DDP's first-bucket cap in bytes for a run (None: the same as the others) and whether it is
    DDP's default (module doc). ``caps``: the applied ``bucket_cap_mb_list``; ``config``: run.json's
    resolved options (``bucket_cap_mb``, ``first_bucket_cap_mb``)."""
    if isinstance(caps, list) and len(caps) > 1 and caps[0] is not None:
        return int(float(caps[0]) * MB), False
    if config.get("first_bucket_cap_mb") is not None:
        return int(float(config["first_bucket_cap_mb"]) * MB), False
    if "bucket_cap_mb" in config and config["bucket_cap_mb"] is None:
        return DEFAULT_FIRST_CAP, True
    return None, False


def assign(param_bytes: Sequence[int], cap: int, first_cap: int | None = None) -> list[list[int]]:
    """Positions of ``param_bytes`` per bucket under DDP's rule (module doc)."""
    out: list[list[int]] = [[]]
    size = 0
    for k, b in enumerate(param_bytes):
        out[-1].append(k)
        size += int(b)
        limit = first_cap if first_cap is not None and len(out) == 1 else cap
        if size >= limit and k < len(param_bytes) - 1:
            out.append([])
            size = 0
    return out


def bucket_rows(colls: pd.DataFrame, n_buckets: int) -> pd.DataFrame:
    """Rows of ``colls`` (matched collectives with ``step``, ``phase``, ``coll_name``, ``pg_name``,
    ``launch_ts_ns``) that are DDP's buckets, with column ``bucket`` (module doc)."""
    ar = colls[(colls["phase"] == "backward") & colls["coll_name"].astype(str).str.contains("allreduce")]
    if ar.empty:
        return ar.assign(bucket=pd.Series(dtype=np.int64))
    pg = ar["pg_name"].astype(str).value_counts().index[0]  # DDP's group: the one with the backward allreduces
    ar = ar[ar["pg_name"].astype(str) == pg].sort_values(["rank", "step", "launch_ts_ns", "start_ns"])
    ar = ar.assign(bucket=ar.groupby(["rank", "step"]).cumcount())
    n = ar.groupby(["rank", "step"])["bucket"].transform("size")
    return ar[n == n_buckets]
