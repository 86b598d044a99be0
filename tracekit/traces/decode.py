"""Fast typed decoding of one Chrome trace file into columnar numpy arrays.

msgspec decodes straight into typed structs, skipping every field tracekit does
not read; the struct lists are then turned into columns with one comprehension
per column (no per-row DataFrame construction). Malformed input raises
:class:`~tracekit.errors.TraceInputError` naming the file and the problem.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from tracekit.errors import TraceInputError
from tracekit.traces import schema

_NO_INT = -1


class _TypedArgs(msgspec.Struct, frozen=True, gc=False):
    """Fast path: the types kineto writes. Falls back to :class:`_Args` on mismatch."""

    external_id: int = msgspec.field(default=_NO_INT, name="External id")
    correlation: int = _NO_INT
    stream: int = _NO_INT
    coll_name: str | None = msgspec.field(default=None, name="Collective name")
    in_nelems: int = msgspec.field(default=_NO_INT, name="In msg nelems")
    out_nelems: int = msgspec.field(default=_NO_INT, name="Out msg nelems")
    group_size: int = msgspec.field(default=_NO_INT, name="Group size")
    dtype: str | None = None
    pg_name: str | None = msgspec.field(default=None, name="Process Group Name")
    pg_desc: str | None = msgspec.field(default=None, name="Process Group Description")
    pg_ranks: str | None = msgspec.field(default=None, name="Process Group Ranks")
    seq: int = msgspec.field(default=_NO_INT, name="Seq")


_EMPTY_TYPED_ARGS = _TypedArgs()


class _TypedEvent(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = _NO_INT
    tid: int | str = _NO_INT
    ts: float = math.nan
    dur: float = 0.0
    args: _TypedArgs = _EMPTY_TYPED_ARGS


class _TypedTrace(msgspec.Struct):
    traceEvents: list[_TypedEvent] | None = None  # noqa: N815 - JSON key
    distributedInfo: dict[str, Any] | None = None  # noqa: N815
    deviceProperties: list[dict[str, Any]] | None = None  # noqa: N815
    baseTimeNanoseconds: int | None = None  # noqa: N815
    trace_id: str | None = None
    schemaVersion: Any = None  # noqa: N815
    cuda_runtime_version: Any = None
    cuda_driver_version: Any = None


class _LooseTrace(msgspec.Struct):
    traceEvents: Any = None  # noqa: N815
    distributedInfo: Any = None  # noqa: N815
    deviceProperties: Any = None  # noqa: N815
    baseTimeNanoseconds: Any = None  # noqa: N815
    trace_id: Any = None
    schemaVersion: Any = None  # noqa: N815
    cuda_runtime_version: Any = None
    cuda_driver_version: Any = None


_TYPED = msgspec.json.Decoder(_TypedTrace)
_LOOSE = msgspec.json.Decoder(_LooseTrace)

#: header keys copied into :attr:`DecodedTrace.meta`
META_KEYS = ("distributedInfo", "deviceProperties", "baseTimeNanoseconds", "trace_id",
             "schemaVersion", "cuda_runtime_version", "cuda_driver_version")


def read_bytes(path: Path) -> bytes:
    """Read a trace file, gunzipping ``*.gz`` (or any file with the gzip magic)."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise TraceInputError(path, f"cannot read file ({e.strerror or e})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            kind = "truncated gzip data" if isinstance(e, EOFError) else f"corrupt gzip data ({e})"
            raise TraceInputError(path, kind) from None
    if path.suffix == ".gz":
        raise TraceInputError(path, "named .gz but is not gzip data")
    return raw


def _json_problem(raw: bytes, err: Exception) -> str:
    if not raw.strip():
        return "empty file"
    msg = str(err)
    if "truncated" in msg.lower() or "unexpected end" in msg.lower():
        return f"truncated JSON ({msg})"
    return f"not valid JSON ({msg})"


def decode(path: Path, raw: bytes | None = None) -> tuple[dict[str, Any], list[Any], bool]:
    """Decode a trace to ``(meta, events, typed)``; events are :class:`_TypedEvent`.

    ``typed`` is False when the fast typed decode failed (unusual field types,
    NaN literals) and events were coerced one by one from a loose decode.
    """
    if raw is None:
        raw = read_bytes(path)
    try:
        doc = _TYPED.decode(raw)
        typed = True
    except msgspec.ValidationError:
        typed = False
        doc = None
    except msgspec.DecodeError as e:
        doc = _decode_fallback(path, raw, e)
        typed = False
    if doc is None:
        try:
            doc = _LOOSE.decode(raw)
        except msgspec.ValidationError as e:  # top level is not an object
            raise TraceInputError(path, f"not a Chrome trace: {e}") from None
    if not typed:
        doc = _loose_doc(path, doc)
    if doc.traceEvents is None:
        raise TraceInputError(path, "JSON has no 'traceEvents' list (not a torch.profiler trace)")
    events = doc.traceEvents
    if not events:
        raise TraceInputError(path, "'traceEvents' is empty")
    meta = {k: getattr(doc, k) for k in META_KEYS}
    return meta, events, typed


def _decode_fallback(path: Path, raw: bytes, err: Exception) -> Any:
    """Strict JSON failed; the stdlib accepts NaN/Infinity, which torch can write."""
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise TraceInputError(path, _json_problem(raw, err)) from None
    if not isinstance(obj, dict):
        raise TraceInputError(path, "not a Chrome trace: top-level JSON value is not an object")
    return _LooseTrace(**{k: obj.get(k) for k in _LooseTrace.__struct_fields__})


def _loose_doc(path: Path, doc: Any) -> Any:
    ev = doc.traceEvents
    if ev is None:
        return doc
    if not isinstance(ev, list):
        raise TraceInputError(path, "'traceEvents' is not a list")
    bad = next((i for i, e in enumerate(ev) if not isinstance(e, dict)), None)
    if bad is not None:
        raise TraceInputError(path, f"traceEvents[{bad}] is not a JSON object")
    doc.traceEvents = [_coerce_event(e) for e in ev]
    return doc


def _as_int(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return _NO_INT
    return _NO_INT


def _as_float(v: Any) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return math.nan
    return math.nan


def _as_str(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else str(v)


def _coerce_event(e: dict[str, Any]) -> _TypedEvent:
    a = e.get("args")
    args = _EMPTY_TYPED_ARGS
    if isinstance(a, dict) and a:
        args = _TypedArgs(
            external_id=_as_int(a.get("External id")), correlation=_as_int(a.get("correlation")),
            stream=_as_int(a.get("stream")), coll_name=_as_str(a.get("Collective name")),
            in_nelems=_as_int(a.get("In msg nelems")), out_nelems=_as_int(a.get("Out msg nelems")),
            group_size=_as_int(a.get("Group size")), dtype=_as_str(a.get("dtype")),
            pg_name=_as_str(a.get("Process Group Name")), pg_desc=_as_str(a.get("Process Group Description")),
            pg_ranks=_as_str(a.get("Process Group Ranks")), seq=_as_int(a.get("Seq")),
        )
    pid, tid = e.get("pid"), e.get("tid")
    return _TypedEvent(
        ph=_as_str(e.get("ph")) or "", cat=_as_str(e.get("cat")) or "", name=_as_str(e.get("name")) or "",
        pid=pid if isinstance(pid, (int, str)) and not isinstance(pid, bool) else _NO_INT,
        tid=tid if isinstance(tid, (int, str)) and not isinstance(tid, bool) else _NO_INT,
        ts=_as_float(e.get("ts")), dur=_as_float(e.get("dur")) if e.get("dur") is not None else 0.0, args=args,
    )


def us_to_ns(us: np.ndarray) -> np.ndarray:
    """Exact µs→ns for kineto timestamps (µs with 3 decimals).

    Splitting off the integer part first keeps the fraction exact in float64, so
    the nearest integer is the written nanosecond value for any timestamp below
    2**43 µs (about 100 days of clock); no rounding to whole µs ever happens.
    """
    whole = np.floor(us)
    return whole.astype(np.int64) * 1000 + np.rint((us - whole) * 1000.0).astype(np.int64)


def _ints(values: list[Any]) -> np.ndarray:
    """Int64 column from ints or strings (non-int ids such as string tids become -1)."""
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    except (TypeError, ValueError, OverflowError):
        return np.fromiter((v if isinstance(v, int) else _NO_INT for v in values), dtype=np.int64, count=len(values))


def columns(path: Path, events: list[_TypedEvent]) -> pd.DataFrame:
    """Filter to the kept categories and build the event table of :mod:`schema`."""
    kinds = schema.CATEGORY_KIND
    kept = [e for e in events if e.ph == "X" and e.cat in kinds]
    n = len(kept)
    ts_us = np.fromiter((e.ts for e in kept), dtype=np.float64, count=n)
    dur_us = np.fromiter((e.dur for e in kept), dtype=np.float64, count=n)
    bad_ts = ~np.isfinite(ts_us)
    if bad_ts.any():
        i = int(np.flatnonzero(bad_ts)[0])
        raise TraceInputError(path, f"event '{kept[i].name}' has a missing or non-finite 'ts'")
    bad_dur = ~np.isfinite(dur_us) | (dur_us < 0)
    if bad_dur.any():
        i = int(np.flatnonzero(bad_dur)[0])
        raise TraceInputError(
            path, f"{int(bad_dur.sum())} event(s) with NaN or negative 'dur', first '{kept[i].name}' (dur={dur_us[i]})"
        )
    ts_ns = us_to_ns(ts_us)
    dur_ns = np.rint(dur_us * 1000.0).astype(np.int64)
    args = [e.args for e in kept]
    df = pd.DataFrame({
        "kind": np.fromiter((kinds[e.cat] for e in kept), dtype=np.int8, count=n),
        "ts_ns": ts_ns,
        "dur_ns": dur_ns,
        "end_ns": ts_ns + dur_ns,
        "pid": _ints([e.pid for e in kept]),
        "tid": _ints([e.tid for e in kept]),
        "stream": np.fromiter((a.stream for a in args), dtype=np.int64, count=n),
        "correlation": np.fromiter((a.correlation for a in args), dtype=np.int64, count=n),
        "external_id": np.fromiter((a.external_id for a in args), dtype=np.int64, count=n),
        "in_nelems": np.fromiter((a.in_nelems for a in args), dtype=np.int64, count=n),
        "out_nelems": np.fromiter((a.out_nelems for a in args), dtype=np.int64, count=n),
        "group_size": np.fromiter((a.group_size for a in args), dtype=np.int64, count=n),
        "seq": np.fromiter((a.seq for a in args), dtype=np.int64, count=n),
        "name": pd.Categorical([e.name for e in kept]),
    })
    # Collective args are sparse: fill them only where present.
    has = np.fromiter((i for i, a in enumerate(args) if a.coll_name is not None or a.pg_name is not None),
                      dtype=np.int64)
    for col in ("coll_name", "pg_name", "pg_desc", "pg_ranks", "dtype"):
        sparse = pd.Categorical([getattr(args[i], col) for i in has])
        codes = np.full(n, -1, dtype=sparse.codes.dtype)
        codes[has] = sparse.codes
        df[col] = pd.Categorical.from_codes(codes, dtype=sparse.dtype)
    return df[list(schema.EVENT_COLUMNS)]
