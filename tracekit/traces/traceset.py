"""Loaded traces: one :class:`RankTrace` per rank, grouped in a :class:`TraceSet`.

A RankTrace holds the raw event table (:mod:`tracekit.traces.schema`) and derives,
lazily and once, the tables every analysis shares:

- :attr:`RankTrace.steps`: ProfilerStep ranges;
- :attr:`RankTrace.gpu`: GPU activity joined to its CPU launch and step.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from tracekit.errors import TraceLoadWarning
from tracekit.profile.manifest import Manifest
from tracekit.traces import schema
from tracekit.traces.decode import NOTES_KEY

STEP_PREFIX = schema.STEP_PREFIX
T = TypeVar("T")


@dataclass(eq=False)
class RankTrace:
    """One rank's trace.

    ``events`` has the columns of :data:`schema.EVENT_COLUMNS`; ``meta`` holds
    the trace header (``distributedInfo``, ``deviceProperties``,
    ``baseTimeNanoseconds``, ...).
    """

    path: Path
    meta: dict[str, Any]
    events: pd.DataFrame
    rank: int = -1
    _memo: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def from_decoded(cls, path: Path, meta: dict[str, Any], events: pd.DataFrame) -> RankTrace:
        """The rank of a decoded file; the values the decoder dropped are warned about here, naming the file."""
        for note in meta.pop(NOTES_KEY, None) or ():
            warnings.warn(f"{path}: {note}", TraceLoadWarning, stacklevel=2)
        return cls(path=Path(path), meta=meta, events=events)

    @classmethod
    def header_only(cls, path: Path, meta: dict[str, Any], *, has_gpu_activity: bool) -> RankTrace:
        """A rank whose events stayed in the worker that computed its per-rank tables
        (:mod:`tracekit.analyses.engine`): header facts only, ``events`` is empty."""
        rt = cls(path=Path(path), meta=meta, events=pd.DataFrame({c: [] for c in schema.EVENT_COLUMNS}))
        rt.__dict__["has_gpu_activity"] = has_gpu_activity  # the cached_property's slot
        return rt

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per ``key`` for this rank: derived results that several
        analyses share (GPU classes, phase windows). Callers must not mutate them."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    # -- header facts -------------------------------------------------------
    @property
    def distributed_info(self) -> dict[str, Any]:
        info = self.meta.get("distributedInfo")
        return info if isinstance(info, dict) else {}

    @property
    def backend(self) -> str | None:
        return self.distributed_info.get("backend")

    @property
    def gpu_names(self) -> list[str]:
        props = self.meta.get("deviceProperties") or []
        return [str(p.get("name")) for p in props if isinstance(p, dict) and p.get("name")]

    @cached_property
    def has_gpu_activity(self) -> bool:
        """True when the trace holds any GPU kernel, memcpy or memset."""
        return bool(self.events["kind"].isin(schema.GPU_KINDS).any())

    # -- derived tables -----------------------------------------------------
    @cached_property
    def steps(self) -> pd.DataFrame:
        """ProfilerStep ranges: columns ``step``, ``ts_ns``, ``end_ns``, ``dur_ns``, sorted by ``ts_ns``.

        Taken from the CPU ``ProfilerStep#N`` annotations. If the same step
        number appears on several threads, the longest range wins. Negative step
        numbers (no profiler writes them) are dropped with a warning naming the file.
        """
        ev = self.events
        ann = ev[(ev["kind"] == schema.ANNOTATION).to_numpy() & schema.name_mask(ev["name"], STEP_PREFIX, prefix=True)]
        step_no = pd.to_numeric(ann["name"].astype(str).str.slice(len(STEP_PREFIX)), errors="coerce")
        df = pd.DataFrame({"step": step_no, "ts_ns": ann["ts_ns"], "end_ns": ann["end_ns"], "dur_ns": ann["dur_ns"]})
        df = df.dropna(subset=["step"]).astype({"step": np.int64})
        if (df["step"] < 0).any():
            neg = df[df["step"] < 0]
            warnings.warn(f"{self.path}: dropped {len(neg)} ProfilerStep range(s) with a negative step number "
                          f"(first #{int(neg['step'].iloc[0])})", TraceLoadWarning, stacklevel=2)
            df = df[df["step"] >= 0]
        df = df.sort_values("dur_ns", ascending=False).drop_duplicates("step").sort_values("ts_ns")
        return df.reset_index(drop=True)

    @cached_property
    def launches(self) -> pd.DataFrame:
        """CUDA runtime/driver calls with a correlation id, one row per correlation."""
        ev = self.events
        la = ev.loc[(ev["kind"] == schema.LAUNCH) & (ev["correlation"] >= 0),
                    ["correlation", "ts_ns", "end_ns", "tid", "external_id", "name"]]
        return la.drop_duplicates("correlation").reset_index(drop=True)

    @cached_property
    def gpu(self) -> pd.DataFrame:
        """GPU activity (kernels, memcpy, memset) joined to its launch.

        Columns: ``kind``, ``name``, ``ts_ns``, ``end_ns``, ``dur_ns``, ``stream``,
        ``correlation``, ``external_id`` (the kernel's own, else the launch's),
        ``launch_ts_ns`` (-1 if none), ``launch_tid``, ``pre_window`` (no launch
        event in the trace: launched before the profiler window opened) and
        ``step`` (the ProfilerStep whose CPU range contains the launch; -1 when
        pre-window or launched outside every step).
        """
        ev = self.events
        g = ev.loc[ev["kind"].isin(schema.GPU_KINDS),
                   ["kind", "name", "ts_ns", "end_ns", "dur_ns", "stream", "correlation", "external_id",
                    "coll_name", "pg_name", "pg_desc", "pg_ranks", "dtype", "in_nelems", "out_nelems",
                    "group_size"]]
        la = self.launches
        # launches are unique per correlation: an indexer replaces a merge
        li = pd.Index(la["correlation"].to_numpy()).get_indexer(g["correlation"].to_numpy())
        pre = li < 0
        lic = np.where(pre, 0, li)

        def from_launch(col: str) -> np.ndarray:
            v = la[col].to_numpy()
            return np.where(pre, -1, v[lic]) if len(v) else np.full(len(g), -1, dtype=np.int64)

        g = g.reset_index(drop=True)
        g["launch_ts_ns"] = from_launch("ts_ns")
        g["launch_tid"] = from_launch("tid")
        g["pre_window"] = pre
        own = g["external_id"].to_numpy()
        g["external_id"] = np.where(own >= 0, own, from_launch("external_id"))
        g["step"] = assign_steps(self.steps, g["launch_ts_ns"].to_numpy(), valid=~pre)
        return g.sort_values(["ts_ns", "end_ns"], kind="stable").reset_index(drop=True)


def assign_steps(steps: pd.DataFrame, ts_ns: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Step number whose ``[ts_ns, end_ns)`` range contains each timestamp, else -1."""
    out = np.full(len(ts_ns), -1, dtype=np.int64)
    if steps.empty or len(ts_ns) == 0:
        return out
    st = steps["ts_ns"].to_numpy()
    en = steps["end_ns"].to_numpy()
    idx = np.searchsorted(st, ts_ns, side="right") - 1
    ok = idx >= 0
    ok &= en[np.clip(idx, 0, None)] > ts_ns
    if valid is not None:
        ok &= valid
    out[ok] = steps["step"].to_numpy()[idx[ok]]
    return out


@dataclass(eq=False)
class TraceSet:
    """All loaded ranks of one run.

    ``ranks`` maps rank -> :class:`RankTrace` (sorted); ``world_size`` is the
    declared one (``distributedInfo.world_size``), ``skipped`` lists
    ``(path, problem)`` for files dropped under ``skip_bad``; ``manifest`` is
    the ``run.json`` of a ``tracekit profile`` run when one was found.
    """

    ranks: dict[int, RankTrace]
    world_size: int
    skipped: list[tuple[str, str]] = field(default_factory=list)
    manifest: Manifest | None = None
    root: Path | None = None
    #: one-line facts about how the traces were read (e.g. a rank inferred), shown as report notes
    notes: list[str] = field(default_factory=list)

    def __iter__(self):  # noqa: ANN204
        return iter(self.ranks.values())

    def __len__(self) -> int:
        return len(self.ranks)

    @property
    def missing_ranks(self) -> list[int]:
        return sorted(set(range(self.world_size)) - set(self.ranks))

    @property
    def has_gpu_activity(self) -> bool:
        return any(rt.has_gpu_activity for rt in self)

    @property
    def backend(self) -> str | None:
        return next((rt.backend for rt in self if rt.backend), None)

    def events(self, rank: int) -> pd.DataFrame:
        """The raw event table of ``rank``."""
        return self.ranks[rank].events
