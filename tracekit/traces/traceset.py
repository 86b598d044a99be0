"""Loaded traces: one :class:`RankTrace` per rank, grouped in a :class:`TraceSet`.

A RankTrace holds the raw event table (:mod:`tracekit.traces.schema`) and derives,
lazily and once, the tables every analysis shares:

- :attr:`RankTrace.steps`: ProfilerStep ranges (the host's);
- :meth:`RankTrace.step_windows`: each step on the device's clock (:mod:`tracekit.traces.steps`), the
  step every table measures;
- :attr:`RankTrace.gpu`: GPU activity joined to its CPU launch and step.

Importing this module does not import pandas, and neither do the per-rank columns that
``tracekit analyze`` reads (:meth:`RankTrace.column`, :meth:`~RankTrace.categories`,
:meth:`~RankTrace.gpu_column`, :meth:`~RankTrace.step_arrays`): only the frames (``events``,
``steps``, ``gpu``) import it, when first asked for.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from tracekit.errors import TraceLoadWarning
from tracekit.traces.arrays import unique
from tracekit.traces.frames import Columnar, frame, is_frame, n_rows
from tracekit.traces.manifest import Manifest
from tracekit.traces import schema, steps as step_defs
from tracekit.traces.decode import (CHUNK_BYTES, NOTES_KEY, OP_INT_COLUMNS, OP_TEXT_COLUMNS, SOURCE_KEY, SPARSE_COLUMNS,
                                    SPARSE_INT_COLUMNS, Columns, decode_columns)
from tracekit.traces.table import categorical, str_codes

if TYPE_CHECKING:
    import pandas as pd

STEP_PREFIX = schema.STEP_PREFIX
T = TypeVar("T")
#: the events columns :attr:`RankTrace.gpu` keeps, in its column order
GPU_EVENT_COLUMNS = ("kind", "name", "ts_ns", "end_ns", "dur_ns", "stream", "correlation", "external_id",
                     "coll_name", "pg_name", "pg_desc", "pg_ranks", "dtype", "in_nelems", "out_nelems", "group_size",
                     "peer")
#: (pattern, prefix, flags) -> {name: match}: each regex runs once per distinct name in a process, whose
#: ranks share most names (a worker maps many small ranks); cleared when it grows past the bound
_NAME_HITS: dict[tuple[str, bool, int], dict[str, bool]] = {}
_NAME_HITS_MAX = 1 << 17
#: memo keys (or first items of tuple keys) that hold no step: kept by :meth:`RankTrace.window_as_one_step`
_STEP_FREE_MEMOS = frozenset({"column", "categories", "sparse", "name_hits", "name_category_hits", "name_categories",
                              "name_tuple", "gpu_mask"})
#: Categorical dtypes by their categories, shared by the ranks of a process: the ranks of one job mostly have the
#: same name lists, and building an Index and a dtype costs ~0.2 ms a column (a dtype is immutable)
_DTYPES: dict[tuple[Any, ...], pd.CategoricalDtype] = {}
_DTYPES_MAX = 1 << 10


def _dtype_of(categories: Any, as_object: bool) -> pd.CategoricalDtype:
    """``pd.CategoricalDtype(pd.Index(categories, dtype=object if as_object else None))`` (the Index's dtype
    inferred unless ``as_object``), one object per distinct list of categories."""
    key = (as_object, *categories)
    dtype = _DTYPES.get(key)
    if dtype is None:
        import pandas as pd  # only for a caller that builds a frame (events, gpu)

        if len(_DTYPES) >= _DTYPES_MAX:
            _DTYPES.clear()
        dtype = _DTYPES[key] = pd.CategoricalDtype(pd.Index(categories, dtype=object if as_object else None))
    return dtype
#: (pattern, prefix, flags, the rank's name list) -> :func:`category_hits` (shared, do not mutate)
_HITS_BY_NAMES: dict[tuple[Any, ...], np.ndarray] = {}


def category_hits(categories: list[str], pattern: str, *, prefix: bool = False, flags: int = 0) -> np.ndarray:
    """Per name of ``categories``, plus a trailing False (for code -1): does it match ``pattern``
    (a regex search with ``flags``, or a plain prefix when ``prefix``; :func:`schema.name_mask` semantics)."""
    memo = _NAME_HITS.setdefault((pattern, prefix, flags), {})
    if len(memo) > _NAME_HITS_MAX:
        memo.clear()
    out = np.zeros(len(categories) + 1, dtype=bool)
    search = None
    for i, name in enumerate(categories):
        hit = memo.get(name)
        if hit is None:
            if prefix:
                hit = name.startswith(pattern)
            else:
                search = search or re.compile(pattern, flags).search
                hit = search(name) is not None
            memo[name] = hit
        out[i] = hit
    return out


def _codes_dtype(n_categories: int) -> type:
    """The integer type pandas keeps a Categorical's codes in, for ``n_categories`` categories
    (``coerce_indexer_dtype``): :meth:`RankTrace.column` returns the same codes either way."""
    for t, top in _CODE_TYPES:
        if n_categories < top:
            return t
    return np.int64


#: (type, its largest value), smallest first (``np.iinfo`` costs ~3 µs a call)
_CODE_TYPES = tuple((t, int(np.iinfo(t).max)) for t in (np.int8, np.int16, np.int32))


def _sparse_codes(cols: Columns, name: str) -> tuple[np.ndarray, list[Any]]:
    """``(codes per event, categories)`` of a :data:`SPARSE_COLUMNS` column: what ``events[name]``
    holds (:func:`events_frame`), without building it."""
    values = cols.sparse[name]
    sc = str_codes(values)
    if sc is None:  # mixed types: pandas' own categories
        cat = categorical(values)
        sc = cat.codes, list(cat.categories)
    own, cats = sc
    codes = np.full(cols.n, -1, dtype=_codes_dtype(len(cats)))
    codes[cols.sparse_idx] = own
    return codes, cats


def _column_of(cols: Columns, name: str, rt: RankTrace) -> np.ndarray:
    """Column ``name`` of the event table as :meth:`RankTrace.column` returns it, from ``cols``."""
    if name in cols.dense:
        return cols.dense[name]
    if name == "end_ns":
        return rt.column("ts_ns") + rt.column("dur_ns")
    if name == "name":
        return cols.name_codes.astype(_codes_dtype(len(cols.names)), copy=False)
    if name in SPARSE_INT_COLUMNS:
        dense = np.full(cols.n, -1, dtype=np.int64)
        dense[cols.sparse_idx] = cols.sparse[name]
        return dense
    if name in SPARSE_COLUMNS:
        return rt.memo(("sparse", name), lambda: _sparse_codes(cols, name))[0]
    raise KeyError(name)


@cache
def _empty_events() -> pd.DataFrame:
    """The event table of a header-only rank (one shared empty frame: nothing writes to it)."""
    import pandas as pd  # only for a caller that asks a header-only rank for its frame

    return pd.DataFrame({c: [] for c in schema.EVENT_COLUMNS})


#: the source of a header-only rank: its event columns, none with rows (object columns, as in
#: :func:`_empty_events`), shared by every such rank (an array without elements cannot be changed)
_NO_EVENTS: dict[str, np.ndarray] = {c: np.empty(0, dtype=object) for c in schema.EVENT_COLUMNS}


def events_frame(cols: Columns) -> pd.DataFrame:
    """The event table (:data:`schema.EVENT_COLUMNS`) of decoded columns: ``name`` and the collective args
    are Categoricals (a trace has hundreds of thousands of events but only thousands of distinct names,
    and the args are set on a few hundred rows only). The same table as ``RankTrace.events``."""
    return RankTrace(path=Path(), meta={}, source=cols).events


def decode_table(path: Path, chunk_bytes: int = CHUNK_BYTES) -> tuple[dict[str, Any], pd.DataFrame]:
    """``(meta, event table)`` of one trace file, decoded in this process."""
    meta, cols = decode_columns(Path(path), chunk_bytes)
    return meta, events_frame(cols)


@dataclass(eq=False)
class RankTrace:
    """One rank's trace.

    ``events`` has the columns of :data:`schema.EVENT_COLUMNS`; ``meta`` holds
    the trace header (``distributedInfo``, ``deviceProperties``,
    ``baseTimeNanoseconds``, ...).

    ``source`` is what the rank was built from: its event table, or the decoder's
    :class:`~tracekit.traces.decode.Columns` (or, for a header-only rank, empty event columns).
    From columns, ``events`` is built only when something asks for the table: the per-rank
    analyses read :meth:`column` and :meth:`categories`, which come straight from the columns
    (no pandas on that path).
    """

    path: Path
    meta: dict[str, Any]
    source: pd.DataFrame | Columns | dict[str, np.ndarray]
    rank: int = -1
    #: values the decoder dropped: ``(what, count, detail of the first)`` each (warned by the loader, which
    #: names the file: :func:`tracekit.traces.loader.warn_dropped`)
    dropped: list[tuple[str, int, str]] = field(default_factory=list)
    #: the identity of the file it was decoded from (:func:`tracekit.traces.cache.file_key`), None when not
    #: known (the cache off, a rank built from a frame): what its cached rank tables are keyed by
    source_key: str | None = None
    #: the operator args (:meth:`op_args`) of a rank built from an event table, which does not hold them
    operator_args: tuple[np.ndarray, dict[str, Any]] | None = None
    _memo: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def from_decoded(cls, path: Path, meta: dict[str, Any], events: pd.DataFrame | Columns,
                     operator_args: tuple[np.ndarray, dict[str, Any]] | None = None) -> RankTrace:
        """The rank of a decoded file (its event table, or the decoder's columns, with the operator args
        of an event table's file); the values the decoder dropped move from ``meta`` to :attr:`dropped`."""
        dropped = [(str(w), int(n), str(d)) for w, n, d in meta.pop(NOTES_KEY, None) or ()]
        return cls(path=Path(path), meta=meta, source=events, dropped=dropped, source_key=meta.pop(SOURCE_KEY, None),
                   operator_args=operator_args)

    @classmethod
    def header_only(cls, path: Path, meta: dict[str, Any], *, has_gpu_activity: bool,
                    dropped: list[tuple[str, int, str]] | None = None) -> RankTrace:
        """A rank whose events stayed in the worker that computed its per-rank tables
        (:mod:`tracekit.runner.engine`): header facts only (and what the decoder dropped there), ``events`` is
        empty (no frame is built for it unless asked for)."""
        rt = cls(path=Path(path), meta=meta, source=_NO_EVENTS, dropped=list(dropped or ()))
        rt.__dict__["has_gpu_activity"] = has_gpu_activity  # the cached_property's slot
        return rt

    @cached_property
    def events(self) -> pd.DataFrame:
        """The event table (:data:`schema.EVENT_COLUMNS`), built from ``source`` on first use; from columns
        it shares the arrays :meth:`column` returns (no column is held twice)."""
        src = self.source
        if isinstance(src, Columns):
            return self._frame_of({c: self.column(c) for c in schema.EVENT_COLUMNS})
        if src is _NO_EVENTS:
            return _empty_events()
        return src if is_frame(src) else frame(src)

    @property
    def n_events(self) -> int:
        """Events in the trace (without building the event table)."""
        src = self.source
        return src.n if isinstance(src, Columns) else n_rows(src)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per ``key`` for this rank: derived results that several
        analyses share (GPU classes, phase windows). Callers must not mutate them."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def column(self, name: str) -> np.ndarray:
        """``events[name]`` as a numpy array, the codes of a Categorical column (once per rank; do not mutate)."""
        hit = self._memo.get(("column", name))  # (read dozens of times per rank: skip building the closure)
        if hit is not None:
            return hit

        def build() -> np.ndarray:
            src = self.source
            if isinstance(src, Columns):
                return _column_of(src, name, self)
            if not is_frame(src):
                return src[name]  # event columns (a header-only rank's)
            col = src[name]
            return col.cat.codes.to_numpy() if _is_categorical(col.dtype) else col.to_numpy()

        return self.memo(("column", name), build)

    def categories(self, name: str) -> list[Any] | None:
        """The categories the codes of :meth:`column` index for a Categorical column (``name`` or one of
        :data:`decode.SPARSE_COLUMNS`), None for a column that is not one."""
        def build() -> list[Any] | None:
            src = self.source
            if isinstance(src, Columns):
                if name == "name":
                    return list(src.names)
                if name in SPARSE_COLUMNS:
                    return self.memo(("sparse", name), lambda: _sparse_codes(src, name))[1]
                return None
            if not is_frame(src):
                return None  # event columns hold no Categorical
            col = src[name]
            return list(col.cat.categories) if _is_categorical(col.dtype) else None

        return self.memo(("categories", name), build)

    def name_hits(self, pattern: str, *, prefix: bool = False) -> np.ndarray:
        """Per event: its name matches ``pattern`` (:func:`schema.name_mask` semantics; once per rank and
        pattern, each distinct name tested once per process, see :func:`category_hits`)."""
        def build() -> np.ndarray:
            if self.categories("name") is None:
                if not self.n_events:  # (a header-only rank: no frame for nothing)
                    return np.zeros(0, dtype=bool)
                return schema.name_mask(self.events["name"], pattern, prefix=prefix)
            return self.name_category_hits(pattern, prefix=prefix)[self.column("name")]

        return self.memo(("name_hits", pattern, prefix), build)

    def name_category_hits(self, pattern: str, *, prefix: bool = False, flags: int = 0) -> np.ndarray:
        """:func:`category_hits` of the categories of ``events["name"]`` (indexed by its codes, -1 included;
        the codes of ``gpu["name"]`` too, which keeps the categories)."""
        def build() -> np.ndarray:
            # ranks of one run mostly share their name list: its hits are looked up once per process
            key = (pattern, prefix, flags, self.memo("name_tuple", lambda: tuple(self.name_categories())))
            hit = _HITS_BY_NAMES.get(key)
            if hit is None:
                if len(_HITS_BY_NAMES) > _NAME_HITS_MAX >> 7:
                    _HITS_BY_NAMES.clear()
                hit = _HITS_BY_NAMES[key] = category_hits(self.name_categories(), pattern, prefix=prefix, flags=flags)
            return hit

        return self.memo(("name_category_hits", pattern, prefix, flags), build)

    def op_args(self) -> tuple[np.ndarray, dict[str, Any]]:
        """``(rows, values)``: the CPU events that carry operator args and those args
        (:data:`tracekit.traces.decode.OP_COLUMNS`, as the decoder keeps them; do not mutate). None kept for a
        rank built from an event table (unless given as :attr:`operator_args`) or header only."""
        src = self.source
        if self.operator_args is not None:
            return self.operator_args
        if isinstance(src, Columns):
            return src.op_idx, src.op_args
        return np.empty(0, dtype=np.int64), {c: np.empty(0, np.int64) for c in OP_INT_COLUMNS} | {
            c: [] for c in OP_TEXT_COLUMNS}

    def gpu_column(self, name: str) -> np.ndarray:
        """``gpu[name]`` as a numpy array, the codes of a Categorical column (once per rank; do not mutate)."""
        g = self._memo.get("gpu_arrays")
        return (g if g is not None else self.gpu_arrays())[name]

    def name_categories(self) -> list[str]:
        """The names the codes of ``column("name")`` index: the categories of ``events["name"]``
        (none when it is not a Categorical: an empty header-only rank)."""
        def build() -> list[str]:
            return [str(c) for c in self.categories("name") or ()]

        return self.memo("name_categories", build)

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

    def gpu_mask(self) -> np.ndarray:
        """Per event: a kernel, memcpy or memset (once per rank; ``np.isin`` costs ~30 µs a call on small ranks)."""
        def build() -> np.ndarray:
            kind = self.column("kind")
            out = kind == schema.GPU_KINDS[0]
            for k in schema.GPU_KINDS[1:]:
                out |= kind == k
            return out

        return self.memo("gpu_mask", build)

    @cached_property
    def has_gpu_activity(self) -> bool:
        """True when the trace holds any GPU kernel, memcpy or memset."""
        return bool(self.gpu_mask().any())

    # -- derived tables -----------------------------------------------------
    @cached_property
    def steps(self) -> pd.DataFrame:
        """ProfilerStep ranges: columns ``step``, ``ts_ns``, ``end_ns``, ``dur_ns``, sorted by ``ts_ns``.

        Taken from the CPU ``ProfilerStep#N`` annotations. If the same step
        number appears on several threads, the longest range wins. Negative step
        numbers (no profiler writes them) are dropped with a warning naming the file.
        :meth:`step_arrays` holds the same columns without the frame.
        """
        return frame(self.step_arrays())

    def window_as_one_step(self) -> None:
        """Make the whole trace window this rank's only step, number 0 (first event's start to the last event's
        end, device work included): for a capture without ``ProfilerStep`` ranges (a plain ``with profile():``),
        which the replay can still replay as one step. The derived results that depend on the steps are dropped
        and recomputed when asked; the event columns are kept."""
        ts, end = self.column("ts_ns"), self.column("end_ns")
        ok = ts >= 0
        if not ok.any():
            return
        start, stop = int(ts[ok].min()), int(end[ok].max())
        kept = {k: v for k, v in self._memo.items()
                if (isinstance(k, tuple) and k[0] in _STEP_FREE_MEMOS) or k in _STEP_FREE_MEMOS}
        self._memo.clear()
        self._memo.update(kept)
        self._memo["step_arrays"] = {"step": np.zeros(1, dtype=np.int64), "ts_ns": np.array([start], dtype=np.int64),
                                     "end_ns": np.array([stop], dtype=np.int64),
                                     "dur_ns": np.array([stop - start], dtype=np.int64)}

    def step_arrays(self) -> dict[str, np.ndarray]:
        """The columns of :attr:`steps` as numpy arrays (once per rank; do not mutate)."""
        return self.memo("step_arrays", self._step_arrays)

    def _step_arrays(self) -> dict[str, np.ndarray]:
        hit = ((self.column("kind") == schema.ANNOTATION) & self.name_hits(STEP_PREFIX, prefix=True)).nonzero()[0]
        code = self.column("name")[hit]
        # the step number of each matching name, parsed once per distinct name
        ucode, inv = unique(code, return_inverse=True)
        cats = self.name_categories()
        parsed, step_of = _step_numbers([cats[c][len(STEP_PREFIX):] for c in ucode])
        rows = hit[parsed[inv]]
        step = step_of[inv[parsed[inv]]]
        if (step < 0).any():
            neg = step[step < 0]
            warnings.warn(f"{self.path}: dropped {len(neg)} ProfilerStep range(s) with a negative step number "
                          f"(first #{int(neg[0])})", TraceLoadWarning, stacklevel=3)
            rows, step = rows[step >= 0], step[step >= 0]
        ts, end, dur = self.column("ts_ns")[rows], self.column("end_ns")[rows], self.column("dur_ns")[rows]
        # the longest range of a step wins; the sorts are pandas' (sort_values: quicksort, longest first)
        by_dur = np.arange(dur.size)[::-1][dur[::-1].argsort(kind="quicksort")][::-1]
        _, first = unique(step[by_dur], return_index=True)
        keep = by_dur[np.sort(first)]
        keep = keep[ts[keep].argsort(kind="quicksort")]
        return {"step": step[keep], "ts_ns": ts[keep], "end_ns": end[keep], "dur_ns": dur[keep]}

    def step_windows(self) -> dict[str, np.ndarray]:
        """Each step on the device's clock, the one step every table measures (:mod:`tracekit.traces.steps`:
        from the later of its host range's start and the previous step's end, to the later of its host
        range's end and its last device work's end; a rank without device work: the host range). Columns
        ``step``, ``ts_ns``, ``end_ns``, ``dur_ns`` (the window), ``host_ts_ns``, ``host_end_ns``,
        ``host_dur_ns`` (the ProfilerStep#N CPU range, :meth:`step_arrays`), ordered by step start (once per
        rank; do not mutate)."""
        return self.memo("step_windows", self._step_windows)

    def _step_windows(self) -> dict[str, np.ndarray]:
        st = self.step_arrays()
        lo, hi = st["ts_ns"], st["end_ns"]
        if st["step"].size and self.has_gpu_activity:
            g = self.gpu_arrays()
            back = step_defs.backlog_end(g["pre_window"], g["stream"], g["ts_ns"], g["end_ns"], int(lo[0]),
                                         lost=self.launches_lost())
            lo, hi = step_defs.step_windows(st["step"], lo, hi, g["step"], g["end_ns"], back)
        return {"step": st["step"], "ts_ns": lo, "end_ns": hi, "dur_ns": hi - lo,
                "host_ts_ns": st["ts_ns"], "host_end_ns": st["end_ns"], "host_dur_ns": st["dur_ns"]}

    def launches_lost(self) -> np.ndarray:
        """Per row of :meth:`gpu_arrays`: a device operation with no launch recorded that ran after one launched
        in the window on its stream, so its launch is missing from the trace
        (:func:`tracekit.traces.steps.launched_in_window_later`). Once per rank, shared by the step windows,
        table ``ranks`` (``launches_missing``) and the replay's notes (do not mutate)."""
        return self.memo("launches_lost", lambda: step_defs.launched_in_window_later(
            self.gpu_column("pre_window"), self.gpu_column("stream"), self.gpu_column("ts_ns")))

    def to_device_clock(self, t: np.ndarray) -> np.ndarray:
        """Host instants ``t`` (ns) on the device's clock (:func:`tracekit.traces.steps.to_device_clock`: ``t``
        plus the lag of the device operation launched last at or before it; -1 where unknown). A rank without
        device work (a CPU run) has one clock: ``t`` itself."""
        t = np.asarray(t, dtype=np.int64)
        if not self.has_gpu_activity:
            return t
        lags = self.memo("launch_lags", lambda: step_defs.launch_lags(self.gpu_column("launch_ts_ns"),
                                                                      self.gpu_column("ts_ns")))
        return step_defs.to_device_clock(t, lags)

    @cached_property
    def gpu(self) -> pd.DataFrame:
        """GPU activity (kernels, memcpy, memset) joined to its launch.

        Columns: ``kind``, ``name``, ``ts_ns``, ``end_ns``, ``dur_ns``, ``stream``,
        ``correlation``, ``external_id`` (the kernel's own, else the launch's),
        ``launch_ts_ns`` (-1 if none), ``launch_tid``, ``pre_window`` (no launch
        event in the trace: launched before the profiler window opened) and
        ``step`` (the ProfilerStep whose CPU range contains the launch; -1 when
        pre-window or launched outside every step). :meth:`gpu_column` reads the
        same columns without building this frame.
        """
        return self._frame_of(self.gpu_arrays())

    def _frame_of(self, arrays: dict[str, np.ndarray]) -> pd.DataFrame:
        """A frame of event columns as :meth:`column` returns them: codes become Categoricals again. It
        shares the arrays, which nobody writes to."""
        import pandas as pd  # the frames are for callers that ask for them: analyze reads the columns

        data: dict[str, Any] = {}
        for c, v in arrays.items():
            dtype = self._category_dtype(c)
            data[c] = v if dtype is None else pd.Categorical.from_codes(v, dtype=dtype)
        return frame(data, copy=False)

    def _category_dtype(self, name: str) -> pd.CategoricalDtype | None:
        """The dtype of ``events[name]`` when it is a Categorical (built from the columns, not the table)."""
        src = self.source
        if name not in schema.EVENT_COLUMNS:
            return None
        if not isinstance(src, Columns):
            dtype = src[name].dtype
            return dtype if _is_categorical(dtype) else None
        if name == "name":
            return _dtype_of(src.names, True)
        if name in SPARSE_COLUMNS:
            values = src.sparse[name]
            if str_codes(values) is None:  # mixed types (the decoder writes str/None only): pandas' categories
                import pandas as pd

                return pd.CategoricalDtype(categorical(values).categories)
            return _dtype_of(self.categories(name), False)
        return None

    def gpu_arrays(self) -> dict[str, np.ndarray]:
        """The columns of :attr:`gpu` as numpy arrays (the codes of the Categorical ones), computed once
        per rank from the event columns (no frame is built; do not mutate)."""
        return self.memo("gpu_arrays", self._gpu_arrays)

    def _gpu_arrays(self) -> dict[str, np.ndarray]:
        sel = self.gpu_mask().nonzero()[0]
        sel = sel[np.lexsort((self.column("end_ns")[sel], self.column("ts_ns")[sel]))]  # stable: by start, end
        g: dict[str, Any] = {c: self.column(c)[sel] for c in GPU_EVENT_COLUMNS}
        # launches: runtime calls with a correlation id, the first one per correlation
        corr = self.column("correlation")
        la = ((self.column("kind") == schema.LAUNCH) & (corr >= 0)).nonzero()[0]
        la_corr, first = unique(corr[la], return_index=True)
        la = la[first]
        pos = np.searchsorted(la_corr, g["correlation"])
        pos_c = np.minimum(pos, max(la.size - 1, 0))
        pre = (pos >= la.size) | (la_corr[pos_c] != g["correlation"]) if la.size else np.ones(sel.size, dtype=bool)
        src = la[pos_c] if la.size else np.zeros(sel.size, dtype=np.int64)

        def from_launch(col: str) -> np.ndarray:
            return np.where(pre, -1, self.column(col)[src]) if la.size else np.full(sel.size, -1, dtype=np.int64)

        g["launch_ts_ns"] = from_launch("ts_ns")
        g["launch_tid"] = from_launch("tid")
        g["pre_window"] = pre
        own = g["external_id"]
        g["external_id"] = np.where(own >= 0, own, from_launch("external_id"))
        g["step"] = assign_steps(self.step_arrays(), g["launch_ts_ns"], valid=~pre)
        return g

    @property
    def n_gpu(self) -> int:
        """Rows of :attr:`gpu` (without building it)."""
        return len(self.gpu_column("ts_ns"))


def _is_categorical(dtype: Any) -> bool:
    """``dtype`` is a pandas ``CategoricalDtype`` (told without importing pandas: a frame's dtype)."""
    return type(dtype).__name__ == "CategoricalDtype" and type(dtype).__module__.startswith("pandas")


def _step_numbers(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(parsed, number)`` of each ``ProfilerStep#`` suffix: ``pd.to_numeric(errors="coerce")`` then
    int64, with plain (optionally negative) digits, what profilers write, parsed without pandas."""
    if all(t.isascii() and t.removeprefix("-").isdigit() and len(t) < 19 for t in texts):
        return np.ones(len(texts), dtype=bool), np.array([int(t) for t in texts], dtype=np.int64)
    import pandas as pd  # other suffixes (no profiler writes them): pandas' parsing, exactly

    num = pd.to_numeric(pd.Series(texts, dtype=str), errors="coerce")
    parsed = num.notna().to_numpy()
    step_of = np.zeros(len(texts), dtype=np.int64)
    step_of[parsed] = num[parsed].astype(np.int64).to_numpy()
    return parsed, step_of


def assign_steps(steps: Columnar, ts_ns: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Step number whose ``[ts_ns, end_ns)`` range contains each timestamp, else -1."""
    out = np.full(len(ts_ns), -1, dtype=np.int64)
    st = np.asarray(steps["ts_ns"])
    if st.size == 0 or len(ts_ns) == 0:
        return out
    en = np.asarray(steps["end_ns"])
    idx = np.searchsorted(st, ts_ns, side="right") - 1
    ok = idx >= 0
    ok &= en[np.maximum(idx, 0)] > ts_ns
    if valid is not None:
        ok &= valid
    out[ok] = np.asarray(steps["step"])[idx[ok]]
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
