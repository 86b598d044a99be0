"""Fast typed decoding of one Chrome trace file into columnar numpy arrays.

msgspec decodes straight into typed structs, skipping every field tracekit does
not read; the struct lists are then turned into columns with one pass per
column (no per-row DataFrame construction). This module needs only numpy and
msgspec, so parse workers can start before pandas is imported. Malformed input raises
:class:`~tracekit.errors.TraceInputError` naming the file and the problem.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import mmap
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, Union

import msgspec
import numpy as np

from tracekit.errors import NotATraceError, TraceInputError
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
    #: the peer of a point-to-point op (global ranks): ``send`` records "Dst Rank", ``recv`` "Src Rank"
    p2p_dst: int = msgspec.field(default=_NO_INT, name="Dst Rank")
    p2p_src: int = msgspec.field(default=_NO_INT, name="Src Rank")
    #: a GPU copy's or memset's size (kineto's "bytes" on ``gpu_memcpy`` / ``gpu_memset`` events)
    nbytes: int = msgspec.field(default=_NO_INT, name="bytes")
    #: 2021 kineto (torch 1.8-1.9) spelled it in lower case
    external_id_lc: int = msgspec.field(default=_NO_INT, name="external id")
    #: the process group of torch 2.1's record_param_comms (later "Process Group Name")
    pg_id: int = msgspec.field(default=_NO_INT, name="Process Group ID")
    #: an op's inputs under record_shapes, undecoded: collective ops' give a message size
    #: (:func:`shape_message`), modelled ops' their FLOPs and bytes (:mod:`tracekit.analyses.op_models`)
    input_dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input Dims")
    input_type: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input type")
    concrete_inputs: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Concrete Inputs")
    #: autograd's sequence number (a forward op and the backward node it created share it) and, on a
    #: backward op, the profiler's id of the forward thread
    seq_nr: int = msgspec.field(default=_NO_INT, name="Sequence number")
    fwd_tid: int = msgspec.field(default=_NO_INT, name="Fwd thread id")


_EMPTY_TYPED_ARGS = _TypedArgs()


class _TypedEvent(msgspec.Struct, tag_field="ph", tag="X", gc=False):
    """A complete event (``"ph": "X"``): the only phase tracekit keeps."""

    cat: str = ""
    name: str = ""
    pid: int | str = _NO_INT
    tid: int | str = _NO_INT
    ts: float = math.nan
    dur: float = 0.0
    args: _TypedArgs = _EMPTY_TYPED_ARGS


#: every other Chrome trace phase: decoded as an empty struct, so flow events (a
#: third of a kineto trace), metadata and instants cost a parse but no objects
#: (an unknown phase fails the typed decode and takes the loose path, which drops it)
_OTHER_PHASES = tuple(msgspec.defstruct(f"_Phase_{ph}", [], tag_field="ph", tag=ph, gc=False)
                      for ph in ("B", "E", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "O", "N", "D",
                                 "M", "V", "v", "R", "c"))
_SKIPPED = _OTHER_PHASES[0]()  # what the loose path turns a non-"X" event into
_AnyEvent = Union[(_TypedEvent, *_OTHER_PHASES)]  # noqa: UP007 - built from a tuple


class _TypedTrace(msgspec.Struct):
    traceEvents: list[_AnyEvent] | None = None  # noqa: N815 - JSON key
    #: its text: decoded by :func:`meta_of`, which reads the long rank lists of ``pg_config`` without
    #: turning them into Python ints first (:func:`_info_of`)
    distributedInfo: msgspec.Raw = msgspec.Raw()  # noqa: N815
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


#: a process group's ``ranks`` list from this many members on is kept as the equal ``range`` (below)
COMPACT_RANKS_MIN = 64


def meta_of(doc: Any, ranges: list[range] | None = None) -> dict[str, Any]:
    """The header facts (:data:`META_KEYS`) of a decoded document, with the long rank lists compacted.

    torch writes every process group of the process with *all* its member ranks into each rank's
    ``distributedInfo.pg_config`` (``_get_all_pg_configs``): on a 16384-rank job the world group alone is a
    list of 16384 ints in every file, about 0.6 MB of Python objects per rank, some 10 GB over the job's
    files in the process that gathers their headers. A group whose ranks are an arithmetic progression (a
    device mesh's world, data-parallel, tensor-parallel and pipeline groups all are) of at least
    :data:`COMPACT_RANKS_MIN` members keeps them as the equal ``range`` (``len``, ``in``, indexing and
    iteration as the list; a few bytes, pickled as such). Other lists are kept as they are. ``ranges``: the
    lists :func:`typed_decode` cut out of the text before decoding it (their markers stand in the text).
    """
    meta = {k: getattr(doc, k) for k in META_KEYS}
    info = meta.get("distributedInfo")
    if isinstance(info, msgspec.Raw):  # the typed decode keeps its text
        meta["distributedInfo"] = info = _info_of(info, ranges)
    for g in _groups(info):
        ranks = g.get("ranks")
        if isinstance(ranks, list) and len(ranks) >= COMPACT_RANKS_MIN:
            g["ranks"] = _as_range(ranks)
    return meta


def typed_decode(raw: bytes) -> tuple[Any, list[range]]:
    """``_TYPED.decode(raw)``, with the long ``"ranks"`` lists of ``distributedInfo``'s process groups cut
    out of the text first (:func:`_cut_rank_lists`; a marker string stands in for each) and returned as
    ranges for :func:`meta_of`. msgspec skips a ``Raw`` value by scanning it: ~90 us for a 16384-rank list,
    which the cut (a few memchr and one copy of the rest) avoids. Where the cut text's ``distributedInfo``
    does not hold exactly the markers (a cut landed elsewhere, or the header has its own escaped NUL), the
    text is decoded as written.
    """
    start = raw.find(b'"distributedInfo"') if len(raw) >= _INFO_PLAIN_BYTES else -1
    if start < 0:
        return _TYPED.decode(raw), []
    cut, ranges = _cut_rank_lists(raw, start, _GROUP_WINDOW)
    if not ranges:
        return _TYPED.decode(raw), []
    doc = _TYPED.decode(cut)
    info = bytes(doc.distributedInfo)
    if info.count(b"\\u0000") != len(ranges) or info.count(_MARK_JSON) != len(ranges):
        return _TYPED.decode(raw), []
    return doc, ranges


def _groups(info: Any) -> Iterator[dict[str, Any]]:
    """The process groups (dicts) of a ``distributedInfo``'s ``pg_config``; none where it is not a list."""
    cfg = info.get("pg_config") if isinstance(info, dict) else None
    return (g for g in (cfg if isinstance(cfg, list) else ()) if isinstance(g, dict))


def _as_range(ranks: list[Any]) -> list[Any] | range:
    """``ranks`` as the ``range`` it equals (increasing by a fixed step), else ``ranks``. (Compared in C,
    element by element: a rank written ``1.0`` counts as 1.)"""
    first, second, last = ranks[0], ranks[1], ranks[-1]
    if type(first) is not int or type(second) is not int or type(last) is not int or second <= first:
        return ranks
    r = range(first, last + 1, second - first)
    return r if len(r) == len(ranks) and ranks == list(r) else ranks


#: below this many bytes ``distributedInfo`` is decoded as it is (no list long enough to matter)
_INFO_PLAIN_BYTES = 4096
#: what a compacted list stands as while its group is decoded (a string JSON escapes: never in the text)
_MARK = "\x00tracekit-ranks:"
_MARK_JSON = _MARK.encode().replace(b"\x00", b"\\u0000")  # as it stands in the text


#: how far after ``distributedInfo`` (or the previous group's ``"ranks"`` list) :func:`typed_decode` looks
#: for the next ``"ranks"`` key: a process group's other fields are a few hundred bytes; a list beyond the
#: window is compacted later (by :func:`_info_of` or :func:`meta_of`), at their cost
_GROUP_WINDOW = 4096


def _info_of(raw: msgspec.Raw, ranges: list[range] | None = None) -> Any:
    """``distributedInfo`` decoded from its text, each long ``"ranks"`` list written as the plain
    arithmetic progression it is (``[0, 1, 2, ...]`` as ``json.dumps`` writes it) taken as the ``range``
    without decoding its ints; any other list is decoded and left to :func:`meta_of`. The same value as
    decoding the text and compacting the lists: a 16384-int list cost ~0.7 ms to decode and compare, its
    text well under 0.1 ms to find and compare with the progression's (built once per process and shape).
    ``ranges``: the lists already cut out of the text (:func:`typed_decode`), whose markers it holds."""
    text = bytes(raw)
    if not text:
        return None
    if not ranges:
        # ``b"\\" in text`` is a memchr; ``b"\\u0000" in text`` alone scans a long digit list ~50x slower
        if len(text) < _INFO_PLAIN_BYTES or (b"\\" in text and b"\\u0000" in text):
            return msgspec.json.decode(text)
        text, ranges = _cut_rank_lists(text, 0, None)
        if not ranges:
            return msgspec.json.decode(text)
    info = msgspec.json.decode(text)
    for g in _groups(info):  # where meta_of compacts the lists
        ranks = g.get("ranks")
        if isinstance(ranks, str) and ranks.startswith(_MARK):
            g["ranks"] = ranges[int(ranks[len(_MARK):])]
    return _unmark(info, ranges)


def _cut_rank_lists(text: bytes, start: int, window: int | None) -> tuple[bytes, list[range]]:
    """``text`` with each ``"ranks"`` list from ``start`` on that is a plain progression (:func:`_progression`)
    replaced by a marker string (:data:`_MARK` and its index in the returned ranges); with ``window``, each
    next ``"ranks"`` key is looked for only that many bytes after the previous one's list (or ``start``)."""
    pieces: list[bytes] = []
    ranges: list[range] = []
    pos = 0
    for begin, end in _ranks_lists(text, start, window):
        r = _progression(text[begin:end + 1]) if end > 0 else None
        if r is not None:
            pieces += [text[pos:begin], b'"%s%d"' % (_MARK_JSON, len(ranges))]
            ranges.append(r)
            pos = end + 1
    if not ranges:
        return text, ranges
    return b"".join([*pieces, text[pos:]]), ranges


def _unmark(value: Any, ranges: list[range]) -> Any:
    """``value`` with every other marker of :func:`_info_of` back as the list it was."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str) and v.startswith(_MARK):
                value[k] = list(ranges[int(v[len(_MARK):])])
            elif isinstance(v, (dict, list)):
                _unmark(v, ranges)
    elif isinstance(value, list):  # (a marker only ever stands as a "ranks" value: a dict's)
        for v in value:
            if isinstance(v, (dict, list)):
                _unmark(v, ranges)
    return value


def _ranks_lists(text: bytes, start: int = 0, window: int | None = None) -> Iterator[tuple[int, int]]:
    """Where each ``"ranks": [`` list of ``text`` from ``start`` on starts (the ``[``) and where its first ``]``
    is (-1: none); ``bytes.find``, not a regex: the text is mostly the lists' digits. The next key is looked for
    after that ``]`` (a memchr): searching a long digit list for ``"ranks"`` itself is slow (its letters share
    the search's filter bits with digits). ``window``: see :func:`_cut_rank_lists`."""
    def find(at: int) -> int:
        return text.find(b'"ranks"', at) if window is None else text.find(b'"ranks"', at, at + window)

    pos = find(start)
    while pos >= 0:
        j = pos + 7
        while text[j:j + 1].isspace():
            j += 1
        if text[j:j + 1] == b":":
            j += 1
            while text[j:j + 1].isspace():
                j += 1
            if text[j:j + 1] == b"[":
                close = text.find(b"]", j)  # a list of ints holds no "]" before its own
                yield j, close
                j = close if close > 0 else j
        pos = find(j)


def _progression(text: bytes) -> range | None:
    """The ``range`` a JSON list's text ``[a, b, ...]`` is, when it is exactly the increasing arithmetic
    progression of :data:`COMPACT_RANKS_MIN` or more ints written with one separator, else None."""
    c1 = text.find(b",")
    c2 = text.find(b",", c1 + 1)
    if c1 < 0 or c2 < 0:
        return None
    try:
        first, second, last = int(text[1:c1]), int(text[c1 + 1:c2]), int(text[text.rfind(b",") + 1:-1])
    except ValueError:
        return None
    step = second - first
    n = (last - first) // step + 1 if step > 0 else 0
    if n < COMPACT_RANKS_MIN or (last - first) % step:
        return None
    second_text = text[c1 + 1:c2]
    sep = text[c1:c1 + 1 + len(second_text) - len(second_text.lstrip())]
    return range(first, last + 1, step) if text == _progression_text(first, step, n, sep) else None


@functools.lru_cache(maxsize=8)
def _progression_text(first: int, step: int, n: int, sep: bytes) -> bytes:
    return b"[" + sep.join(b"%d" % i for i in range(first, first + step * n, step)) + b"]"


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
        raise TraceInputError(path, "empty file" if not raw else "named .gz but is not gzip data")
    return raw


def _json_problem(raw: bytes, err: Exception) -> str:
    """What is wrong with ``raw`` as JSON, in plain words (the parser's message reworded)."""
    if not raw.strip():
        return "empty file"
    msg = str(err)
    if "truncated" in msg.lower() or "unexpected end" in msg.lower():
        return "truncated JSON (the text ends inside a value: an interrupted write?)"
    at = re.search(r"\(byte (\d+)\)", msg) or re.search(r"char (\d+)", msg)
    where = f" at byte {at.group(1)}" if at else ""
    if "trailing characters" in msg or "Extra data" in msg:
        return f"not valid JSON (more text after the end of the JSON document{where})"
    if "invalid character" in msg or "Expecting value" in msg:
        return f"not valid JSON (text that is not JSON{where})"
    return f"not valid JSON ({msg})"


#: msgspec's name of a top-level JSON value's type -> plain words
_JSON_KINDS = {"int": "a number", "float": "a number", "str": "a string", "array": "a list", "bool": "true/false",
               "null": "null"}


def _not_an_object(err: Exception | str) -> str:
    """The problem of a JSON document whose top level is not an object (``Expected `object`, got `int```)."""
    got = re.search(r"got `(\w+)`", str(err))
    kind = _JSON_KINDS.get(got.group(1), f"a JSON {got.group(1)}") if got else "not an object"
    return f"not a profiler trace: the file holds {kind}, where a trace is a JSON object with a 'traceEvents' list"


def decode(path: Path, raw: bytes | None = None) -> tuple[dict[str, Any], list[Any], bool]:
    """Decode a trace to ``(meta, events, typed)``; events are :class:`_TypedEvent` (``"ph": "X"``)
    or empty structs standing for every other phase.

    ``typed`` is False when the fast typed decode failed (unusual field types,
    NaN literals) and events were coerced one by one from a loose decode.
    """
    if raw is None:
        raw = read_bytes(path)
    try:
        doc, ranges = typed_decode(raw)
        typed = True
    except msgspec.ValidationError:
        typed, doc, ranges = False, None, []
    except (msgspec.DecodeError, UnicodeDecodeError) as e:  # invalid UTF-8 in a string: the latter
        doc, typed, ranges = _decode_fallback(path, raw, e), False, []
    except RecursionError:
        raise TraceInputError(path, TOO_DEEP) from None
    if doc is None:
        try:
            doc = _LOOSE.decode(raw)
        except msgspec.ValidationError as e:  # top level is not an object
            top = re.match(r"Expected `object`, got `\w+`$", str(e))  # the top level (no "- at `$...`")
            raise TraceInputError(path, _not_an_object(e) if top else f"not a profiler trace: {e}") from None
        except RecursionError:
            raise TraceInputError(path, TOO_DEEP) from None
    if not typed:
        doc = _loose_doc(path, doc)
    if doc.traceEvents is None:
        raise NotATraceError(path, "JSON has no 'traceEvents' list (not a torch.profiler trace)")
    events = doc.traceEvents
    if not events:
        raise TraceInputError(path, "'traceEvents' is empty")
    return meta_of(doc, ranges), events, typed


_PY_KINDS = {int: "int", float: "float", str: "str", list: "array", bool: "bool", type(None): "null"}
TOO_DEEP = "JSON nested too deeply to be a profiler trace (recursion limit reached)"


def _decode_fallback(path: Path, raw: bytes, err: Exception) -> Any:
    """Strict JSON failed; the stdlib accepts NaN/Infinity, which torch can write."""
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise TraceInputError(path, _json_problem(raw, err)) from None
    except RecursionError:
        raise TraceInputError(path, TOO_DEEP) from None
    if not isinstance(obj, dict):
        raise TraceInputError(path, _not_an_object(f"got `{_PY_KINDS.get(type(obj), 'value')}`"))
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
    """An id or count as written: ints (and integral floats, numeric strings) pass; the rest is -1.

    Values outside int64 pass unchanged here: :func:`_int64` drops them with a count.
    """
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
    """A time as written: only JSON numbers count. A string (``"ts": "1234"``) is NaN: it is
    rejected as a non-numeric time rather than guessed at."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return math.nan


def _as_str(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else str(v)


def _raw(v: Any) -> msgspec.Raw:
    """An arg value kept undecoded, as the typed decode keeps it (empty when absent or not encodable)."""
    if v is None:
        return msgspec.Raw(b"")
    try:
        return msgspec.Raw(msgspec.json.encode(v))
    except (TypeError, ValueError, OverflowError):
        return msgspec.Raw(b"")


#: the collective ops whose input shapes give a message size: c10d's ops, the backends' ranges, record_param_comms
_COMM_OP = re.compile(r"^(?:c10d::|nccl:|gloo:|record_param_comms$)")


def shape_message(dims_raw: msgspec.Raw, types_raw: msgspec.Raw) -> tuple[int, str | None]:
    """``(elements, dtype)`` of the largest tensor among an op's inputs (``Input Dims`` / ``Input type``): the
    message of a collective op whose trace has no ``In msg nelems`` (torch 2.0; the largest of input and
    output, as ``bytes`` counts max(in, out)); ``(-1, None)`` when no input is a tensor of a known dtype."""
    try:
        dims, types = msgspec.json.decode(dims_raw), msgspec.json.decode(types_raw)
    except (msgspec.DecodeError, ValueError):
        return -1, None
    if not isinstance(dims, list) or not isinstance(types, list):
        return -1, None
    best, dtype = -1, None
    for shape, t in zip(dims, types):
        known = schema.SHAPE_DTYPES.get(t) if isinstance(t, str) else None
        name = None if known is None else known[2]  # the spelling of collective ``dtype`` args
        if name is None or not isinstance(shape, list) or not all(isinstance(d, int) for d in shape):
            continue
        n = math.prod(shape)
        if n > best:
            best, dtype = n, name
    return best, dtype


def _sizes_from_shapes(args: list[Any], codes: np.ndarray, names: _NameCodes) -> None:
    """Fill, in place, the message size and dtype of collective ops that record shapes but no ``In msg nelems``
    (torch 2.0), and the process group of those that record ``Process Group ID`` but no name (torch 2.1)."""
    hit = names.comm_ops()
    for i in np.flatnonzero(hit[codes]).tolist():
        a = args[i]
        fix: dict[str, Any] = {}
        if a.in_nelems == _NO_INT and len(a.input_dims):
            n, dtype = shape_message(a.input_dims, a.input_type)
            if n >= 0:
                fix.update(in_nelems=n, dtype=a.dtype or dtype)
        if a.pg_name is None and a.pg_id != _NO_INT:
            fix["pg_name"] = str(a.pg_id)
        if fix:
            args[i] = msgspec.structs.replace(a, **fix)


def _coerce_event(e: dict[str, Any]) -> Any:
    if e.get("ph") != "X":
        return _SKIPPED
    a = e.get("args")
    args = _EMPTY_TYPED_ARGS
    if isinstance(a, dict) and a:
        args = _TypedArgs(
            external_id=_as_int(a.get("External id")), external_id_lc=_as_int(a.get("external id")),
            correlation=_as_int(a.get("correlation")),
            stream=_as_int(a.get("stream")), coll_name=_as_str(a.get("Collective name")),
            in_nelems=_as_int(a.get("In msg nelems")), out_nelems=_as_int(a.get("Out msg nelems")),
            group_size=_as_int(a.get("Group size")), dtype=_as_str(a.get("dtype")),
            pg_name=_as_str(a.get("Process Group Name")), pg_desc=_as_str(a.get("Process Group Description")),
            pg_ranks=_as_str(a.get("Process Group Ranks")), seq=_as_int(a.get("Seq")),
            p2p_dst=_as_int(a.get("Dst Rank")), p2p_src=_as_int(a.get("Src Rank")), nbytes=_as_int(a.get("bytes")),
            pg_id=_as_int(a.get("Process Group ID")), input_dims=_raw(a.get("Input Dims")),
            input_type=_raw(a.get("Input type")), concrete_inputs=_raw(a.get("Concrete Inputs")),
            seq_nr=_as_int(a.get("Sequence number")), fwd_tid=_as_int(a.get("Fwd thread id")),
        )
    pid, tid = e.get("pid"), e.get("tid")
    return _TypedEvent(
        cat=_as_str(e.get("cat")) or "", name=_as_str(e.get("name")) or "",
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


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
#: what was dropped -> [count, detail of the first]: filled over all slices of one file
Notes = dict[str, list]


def _note(notes: Notes, what: str, count: int, detail: str = "") -> None:
    entry = notes.setdefault(what, [0, detail])
    entry[0] += count


def _int_column(kept: list[_TypedEvent], attr: str, notes: Notes) -> np.ndarray:
    """Int64 column of ``pid``/``tid``; decimal strings (2021 kineto wrote ``"tid": "25738"``) are read
    as ints, other values that are not ints (kineto's names such as ``"stream 7"``) become -1, ints
    beyond int64 too, counted in ``notes``."""
    try:
        return np.fromiter(map(attrgetter(attr), kept), dtype=np.int64, count=len(kept))
    except (TypeError, ValueError, OverflowError):
        raw = [int(v) if isinstance(v, str) and v.isdecimal() and len(v) < 19 else v
               for v in map(attrgetter(attr), kept)]
        ok = [isinstance(v, int) and _I64_MIN <= v <= _I64_MAX for v in raw]
        big = sum(1 for v, good in zip(raw, ok) if not good and isinstance(v, int))
        if big:
            _note(notes, f"value(s) of '{attr}' beyond the 64-bit integer range (treated as absent)", big)
        return np.fromiter((v if good else _NO_INT for v, good in zip(raw, ok)), dtype=np.int64, count=len(raw))


def _int64(values: list[Any], attr: str, notes: Notes) -> np.ndarray:
    """Int64 column of an integer arg; a value beyond int64 (no real id or count is) is dropped
    (-1, "absent") and counted in ``notes``."""
    try:
        return np.fromiter(map(attrgetter(attr), values), dtype=np.int64, count=len(values))
    except OverflowError:
        raw = list(map(attrgetter(attr), values))
        bad = sum(1 for v in raw if not _I64_MIN <= v <= _I64_MAX)
        _note(notes, f"value(s) of '{attr}' beyond the 64-bit integer range (treated as absent)", bad)
        return np.fromiter((v if _I64_MIN <= v <= _I64_MAX else _NO_INT for v in raw), dtype=np.int64,
                           count=len(raw))


#: collective args that only a few events carry: stored for those rows only
SPARSE_COLUMNS = ("coll_name", "pg_name", "pg_desc", "pg_ranks", "dtype")
SPARSE_INT_COLUMNS = ("in_nelems", "out_nelems", "group_size", "seq", "nbytes", "peer")
_INT_ARGS = ("stream", "correlation", "external_id")
#: operator args kept for the CPU events that carry them: ints (-1 = absent) and JSON texts (b"" = absent)
OP_INT_COLUMNS = ("seq_nr", "fwd_tid")
OP_TEXT_COLUMNS = ("input_dims", "input_type", "concrete_inputs")
OP_COLUMNS = (*OP_INT_COLUMNS, *OP_TEXT_COLUMNS)
#: dense numeric columns of :class:`Columns`
DENSE_COLUMNS = ("kind", "ts_ns", "dur_ns", "pid", "tid", *_INT_ARGS)


@dataclass
class Columns:
    """One trace's kept events as plain numpy columns (no pandas, cheap to pickle).

    - ``dense``: :data:`DENSE_COLUMNS` -> array of length ``n`` (``kind`` int8, the rest int64);
    - ``name_codes`` (int32, length ``n``) index ``names`` (distinct event names, first-seen order);
    - ``sparse_idx``: the rows that carry collective args (a collective name,
      process group or element count) or a GPU copy's ``bytes``, and ``sparse``: :data:`SPARSE_COLUMNS`
      -> one value (str or None) per such row, :data:`SPARSE_INT_COLUMNS` ->
      int64 array over those rows (-1 = absent);
    - ``op_idx``: the CPU events (ops, annotations) that carry operator args (a sequence number, recorded
      inputs), and ``op_args``: :data:`OP_COLUMNS` -> values over those rows (:data:`OP_INT_COLUMNS`
      int64, -1 = absent; :data:`OP_TEXT_COLUMNS` the arg's JSON text as bytes, ``b""`` = absent).

    :func:`tracekit.traces.traceset.events_frame` turns it into the event table of :mod:`schema`.
    """

    n: int
    dense: dict[str, np.ndarray]
    name_codes: np.ndarray
    names: list[str]
    sparse_idx: np.ndarray
    sparse: dict[str, Any]
    op_idx: np.ndarray = field(default_factory=lambda: _NO_OP_ROWS)
    op_args: dict[str, Any] = field(default_factory=lambda: _no_op_args())


#: a ``ts`` (µs) at or beyond this is not a profiler clock reading (epoch µs today are ~1.8e15;
#: 9.2e15 µs overflows int64 ns)
MAX_TS_US = 4e15
#: a ``dur`` (µs) above one day is not a profiled event
MAX_DUR_US = 86_400e6


def _plausible(kept: list[_TypedEvent], ts_us: np.ndarray, dur_us: np.ndarray,
               notes: Notes) -> tuple[list[_TypedEvent], np.ndarray, np.ndarray]:
    """``kept``, ``ts_us``, ``dur_us`` without the events whose ``ts`` is negative or ≥
    :data:`MAX_TS_US`, or whose ``dur`` exceeds :data:`MAX_DUR_US` (counted in ``notes``)."""
    bad = (ts_us < 0) | (ts_us >= MAX_TS_US) | (dur_us > MAX_DUR_US)
    if not bad.any():
        return kept, ts_us, dur_us
    i = int(np.flatnonzero(bad)[0])
    _note(notes, f"event(s) with implausible times (ts < 0 or ≥ {MAX_TS_US:.0e} µs, or dur > 1 day)", int(bad.sum()),
          f"first {_printable(kept[i].name)!r} (ts={ts_us[i]:g}, dur={dur_us[i]:g})")
    ok = ~bad
    return [e for e, b in zip(kept, bad.tolist()) if not b], ts_us[ok], dur_us[ok]


def _printable(name: str) -> str:
    """``name`` with control characters escaped, for messages that reach a terminal."""
    return name if name.isprintable() else name.encode("unicode_escape").decode("ascii")


def _checked_times(path: Path, kept: list[_TypedEvent]) -> tuple[np.ndarray, np.ndarray]:
    """``ts`` and ``dur`` in µs; missing/non-numeric/non-finite ``ts`` or NaN/negative ``dur`` raise."""
    n = len(kept)
    ts_us = np.fromiter(map(attrgetter("ts"), kept), dtype=np.float64, count=n)
    dur_us = np.fromiter(map(attrgetter("dur"), kept), dtype=np.float64, count=n)
    bad_ts = ~np.isfinite(ts_us)
    if bad_ts.any():
        i = int(np.flatnonzero(bad_ts)[0])
        raise TraceInputError(path, f"event {_printable(kept[i].name)!r} has a missing, non-numeric or non-finite "
                                    "'ts'")
    bad_dur = ~np.isfinite(dur_us) | (dur_us < 0)
    if bad_dur.any():
        i = int(np.flatnonzero(bad_dur)[0])
        raise TraceInputError(
            path, f"{int(bad_dur.sum())} event(s) with NaN or negative 'dur', first {_printable(kept[i].name)!r} "
                  f"(dur={dur_us[i]})"
        )
    return ts_us, dur_us


#: category -> kind code for the decoder: the 2021 spellings carry :data:`_LEGACY` on top, so one
#: ``max()`` over a slice's codes says whether the lower-case ``external id`` must be read
_LEGACY = 16
_CAT_CODE = {cat: k | (_LEGACY if cat in schema.LEGACY_CATEGORIES else 0) for cat, k in schema.CATEGORY_KIND.items()}


class _NameCodes(dict):
    """name -> code, a new name getting the next code on first lookup (in C via ``map``)."""

    def __missing__(self, name: str) -> int:
        code = self[name] = len(self)
        return code

    def comm_ops(self) -> np.ndarray:
        """Per code: the name is a collective op's (``_COMM_OP``); each name tested once over all batches."""
        seen: list[bool] = self.__dict__.setdefault("_comm", [])
        if len(seen) < len(self):
            seen += [bool(_COMM_OP.match(n)) for n in list(self)[len(seen):]]
        return np.array(seen, dtype=bool)


def _arrays(path: Path, events: list[Any], names: _NameCodes, notes: Notes) -> Columns:
    """Columns of one batch of events; ``names`` (name -> code) is shared by all batches of a file.

    One pass per column over the kept structs (``map``/``attrgetter`` into
    ``np.fromiter``): that is the cheapest way out of Python objects. Names are
    coded through a dict, so each distinct kernel name is stored once. Dropped
    values are counted in ``notes`` (see :func:`_plausible`, :func:`_int64`).
    """
    kinds = _CAT_CODE
    x = _TypedEvent
    kept = [e for e in events if e.__class__ is x and e.cat in kinds]
    kept, ts_us, dur_us = _plausible(kept, *_checked_times(path, kept), notes)
    n = len(kept)
    args = list(map(attrgetter("args"), kept))
    kind = np.fromiter(map(kinds.__getitem__, map(attrgetter("cat"), kept)), dtype=np.int8, count=n)
    legacy = bool(n) and int(kind.max()) >= _LEGACY
    dense = {
        "kind": kind & (_LEGACY - 1) if legacy else kind,
        "ts_ns": us_to_ns(ts_us),
        "dur_ns": np.rint(dur_us * 1000.0).astype(np.int64),
        "pid": _int_column(kept, "pid", notes),
        "tid": _int_column(kept, "tid", notes),
    }
    for col in _INT_ARGS:
        dense[col] = _int64(args, col, notes)
    if legacy:  # a 2021 trace: take the lower-case "external id" where "External id" is absent
        lc = _int64(args, "external_id_lc", notes)
        ext = dense["external_id"]
        dense["external_id"] = np.where(ext >= 0, ext, lc)
    codes = np.fromiter(map(names.__getitem__, map(attrgetter("name"), kept)), dtype=np.int32, count=n)
    _sizes_from_shapes(args, codes, names)
    # only collective events (and GPU copies: their bytes) carry these args: read them from those rows alone
    has = np.fromiter((i for i, a in enumerate(args)
                       if a.coll_name is not None or a.pg_name is not None or a.in_nelems != _NO_INT
                       or a.nbytes != _NO_INT),
                      dtype=np.int64)
    coll_args = [args[i] for i in has]
    sparse: dict[str, Any] = {col: list(map(attrgetter(col), coll_args)) for col in SPARSE_COLUMNS}
    for col in SPARSE_INT_COLUMNS[:-1]:
        sparse[col] = _int64(coll_args, col, notes)
    dst, src = _int64(coll_args, "p2p_dst", notes), _int64(coll_args, "p2p_src", notes)
    sparse["peer"] = np.where(dst >= 0, dst, src)  # a send's destination, a recv's source
    op_idx, op_args = _op_args(args, dense["kind"])
    return Columns(n=n, dense=dense, name_codes=codes, names=[], sparse_idx=has, sparse=sparse,
                   op_idx=op_idx, op_args=op_args)


def _op_args(args: list[_TypedArgs], kind: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """The operator args of the CPU events that carry any (:data:`OP_COLUMNS`): their rows and values.

    One pass over the CPU events finds them (a list comprehension: ~3x faster here than C-level ``map`` passes,
    whose per-item cost the short-circuit avoids); the recorded inputs are copied out of the decode buffer as
    bytes (the buffer is reused for the next slice)."""
    cpu = ((kind == schema.CPU_OP) | (kind == schema.ANNOTATION)).nonzero()[0]
    rows = [i for i in cpu.tolist() if args[i].seq_nr != _NO_INT or args[i].input_dims]
    if not rows:
        return _NO_OP_ROWS, _no_op_args()
    kept = [args[i] for i in rows]
    n = len(kept)
    out: dict[str, Any] = {col: _op_int(kept, col) for col in OP_INT_COLUMNS}
    shaped = [bool(a.input_dims) for a in kept]
    for col in OP_TEXT_COLUMNS:
        out[col] = ([bytes(getattr(a, col)) if s else b"" for a, s in zip(kept, shaped)] if any(shaped)
                    else [b""] * n)
    return np.array(rows, dtype=np.int64), out


def _op_int(kept: list[_TypedArgs], col: str) -> np.ndarray:
    """An int op arg of ``kept``; a value beyond int64 (no sequence number is) reads as absent."""
    try:
        return np.fromiter(map(attrgetter(col), kept), dtype=np.int64, count=len(kept))
    except OverflowError:
        return np.fromiter((v if _I64_MIN <= v <= _I64_MAX else _NO_INT for v in map(attrgetter(col), kept)),
                           dtype=np.int64, count=len(kept))


_NO_OP_ROWS = np.empty(0, dtype=np.int64)


def _no_op_args() -> dict[str, Any]:
    return {"seq_nr": np.empty(0, np.int64), "fwd_tid": np.empty(0, np.int64),
            "input_dims": [], "input_type": [], "concrete_inputs": []}


def _concat(parts: list[Columns], names: _NameCodes) -> Columns:
    """Join the batches of one file (their name codes already share ``names``)."""
    if len(parts) == 1:
        out = parts[0]
        out.names = list(names)
        return _steps_as_annotations(out, names)
    offsets = np.cumsum([0] + [p.n for p in parts[:-1]])
    return _steps_as_annotations(Columns(
        n=sum(p.n for p in parts),
        dense={c: np.concatenate([p.dense[c] for p in parts]) for c in DENSE_COLUMNS},
        name_codes=np.concatenate([p.name_codes for p in parts]),
        names=list(names),
        sparse_idx=np.concatenate([p.sparse_idx + o for p, o in zip(parts, offsets)]),
        sparse={c: [v for p in parts for v in p.sparse[c]] for c in SPARSE_COLUMNS}
        | {c: np.concatenate([p.sparse[c] for p in parts]) for c in SPARSE_INT_COLUMNS},
        op_idx=np.concatenate([p.op_idx + o for p, o in zip(parts, offsets)]),
        op_args={c: np.concatenate([p.op_args[c] for p in parts]) for c in OP_INT_COLUMNS}
        | {c: [v for p in parts for v in p.op_args[c]] for c in OP_TEXT_COLUMNS},
    ), names)


def _steps_as_annotations(cols: Columns, names: _NameCodes) -> Columns:
    """``ProfilerStep#N`` written as an operator (torch 1.8-1.9 ``Operator``) becomes the step annotation it is."""
    step_codes = [c for name, c in names.items() if name.startswith(schema.STEP_PREFIX)]
    if step_codes:
        kind = cols.dense["kind"]
        is_step = np.zeros(len(names), dtype=bool)  # a lookup per name code (np.isin costs ~30 µs a call)
        is_step[step_codes] = True
        hit = is_step[cols.name_codes] & (kind == schema.CPU_OP)
        if hit.any():
            kind[hit] = schema.ANNOTATION
    return cols


def columns(path: Path, events: list[Any], notes: Notes | None = None) -> Columns:
    """Filter decoded events to the kept categories and turn them into :class:`Columns`."""
    names = _NameCodes()
    return _concat([_arrays(path, events, names, {} if notes is None else notes)], names)


#: target size of one decoded slice of ``traceEvents``. Small on purpose: one
#: slice's structs then fit in the one empty 1 MiB arena that CPython's small-object
#: allocator keeps for reuse, so the slices recycle the same memory instead of
#: mapping (and page-faulting) fresh arenas: 512 KiB decodes ~25% faster than 4 MiB.
CHUNK_BYTES = 512 << 10
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[\s*')
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_ARRAY_END = re.compile(rb"\}\s*\]")
_EVENT_LIST = msgspec.json.Decoder(list[_AnyEvent])
class _NotChunkable(Exception):
    """The fast chunked path does not apply; use the whole-document decode."""


def _stream_slices(pieces: Any, chunk_bytes: int) -> Any:
    """Turn byte pieces into ``("events", JSON array)`` items and a final ``("head", bytes)``.

    Each events item is a run of whole top-level events of about
    ``chunk_bytes``, wrapped in ``[...]`` in a reused buffer: it must be decoded
    before the next item is requested. The head is the document with
    ``traceEvents`` emptied. ``pieces`` may be one buffer holding the whole file
    (a memory map: nothing is copied but the slices) or a stream of pieces (a
    gzip file: at most about two pieces plus one slice are held at a time).
    """
    buf: Any = b""
    pos = 0  # start of the text not yet handed out
    prefix = None
    out = bytearray(chunk_bytes + (1 << 16))

    def wrapped(end: int) -> memoryview:
        nonlocal out
        size = end - pos
        if len(out) < size + 2:
            out = bytearray(size + (1 << 16))
        out[0] = 0x5B  # [
        out[1:size + 1] = memoryview(buf)[pos:end]
        out[size + 1] = 0x5D  # ]
        return memoryview(out)[:size + 2]

    for piece in pieces:
        buf = piece if pos == len(buf) else bytes(buf[pos:]) + bytes(piece)
        pos = 0
        if prefix is None:
            m = _EVENTS_KEY.search(buf)
            if m is None:
                if len(buf) > 64 << 20:  # no traceEvents in the first 64 MB: not our layout
                    raise _NotChunkable
                continue
            if buf[m.end():m.end() + 1] != b"{":
                raise _NotChunkable  # empty or odd array: let the whole-document path judge
            prefix, pos = bytes(buf[:m.start()]), m.end()
        while len(buf) - pos > chunk_bytes:
            b = _BOUNDARY.search(buf, pos + chunk_bytes)
            if b is None:
                break
            yield "events", wrapped(b.start() + 1)
            pos = b.end() - 1
    if prefix is None:
        raise _NotChunkable
    e = _ARRAY_END.search(buf, pos)
    if e is None:
        raise _NotChunkable
    yield "events", wrapped(e.start() + 1)
    yield "head", prefix + b'"traceEvents": []' + bytes(buf[e.end():])


def _file_pieces(path: Path, piece_bytes: int) -> Any:
    """Decompressed pieces of a gzip file, without reading it whole."""
    with gzip.open(path, "rb") as fh:
        while piece := fh.read(piece_bytes):
            yield piece


def _event_slices(path: Path, chunk_bytes: int) -> Any:
    """:func:`_stream_slices` of a trace file: memory-mapped when plain, streamed when gzipped."""
    with open(path, "rb") as fh:
        if fh.read(2) == b"\x1f\x8b":
            mm = None
        elif path.suffix == ".gz":
            raise _NotChunkable  # the whole-document path reports "named .gz but is not gzip data"
        else:
            try:
                mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # empty file: the whole-document path reports it
                raise _NotChunkable from None
    if mm is None:
        yield from _stream_slices(_file_pieces(path, chunk_bytes), chunk_bytes)
        return
    # the page cache holds the only full copy of the text; each slice is copied once
    with mm:
        view = memoryview(mm)
        try:
            yield from _stream_slices([view], chunk_bytes)
        finally:
            view.release()


def _small_plain(path: Path, chunk_bytes: int) -> bool:
    """An uncompressed file smaller than one slice (a gzip file, whatever its size, streams)."""
    try:
        return path.suffix != ".gz" and path.stat().st_size < chunk_bytes
    except OSError:
        return False


def decode_columns(path: Path, chunk_bytes: int = CHUNK_BYTES) -> tuple[dict[str, Any], Columns]:
    """Read and decode one trace file into ``(meta, columns)``; numpy and msgspec only.

    Fast path: the file is memory-mapped (or, gzipped, decompressed on the fly)
    and ``traceEvents`` is decoded slice by slice (about ``chunk_bytes`` of JSON
    each); each slice becomes columns before the next is read, so neither a
    private copy of the whole text nor all decoded structs are ever in memory at
    once. Anything unusual (odd layout,
    type mismatches, NaN literals, broken JSON or gzip) falls back to
    :func:`decode` of the whole document, which also produces the precise
    one-line error message. An uncompressed file smaller than ``chunk_bytes`` takes that
    path directly (the same result; slicing one slice out of it only costs).
    """
    parts: list[Columns] = []
    names = _NameCodes()
    notes: Notes = {}
    try:
        if _small_plain(path, chunk_bytes):
            raise _NotChunkable  # one slice anyway: the whole-document decode costs less (no slicing)
        for kind, data in _event_slices(path, chunk_bytes):
            if kind == "events":
                parts.append(_arrays(path, _EVENT_LIST.decode(data), names, notes))
            else:
                head, ranges = typed_decode(data)
    except (_NotChunkable, msgspec.DecodeError, msgspec.ValidationError, OSError, EOFError, zlib.error,
            RecursionError, UnicodeDecodeError):
        parts.clear()
        notes.clear()
        meta, events, _typed = decode(path)
        cols = columns(path, events, notes)
    else:
        meta, cols = meta_of(head, ranges), _concat(parts, names)
    if notes:
        meta[NOTES_KEY] = [(what, n, detail) for what, (n, detail) in notes.items()]
    if not (cols.n and int(cols.dense["kind"].min()) <= max(schema.GPU_KINDS)):
        unread = unread_categories(path)  # no device activity read: say what else the file holds
        if unread:
            meta[UNREAD_KEY] = unread
        launches = device_launches(cols)
        if launches:
            meta[LAUNCHES_KEY] = launches
    return meta, cols


#: runtime/driver calls that put work on a device: a trace holding them recorded device work
_DEVICE_LAUNCH = ("LaunchKernel", "Memcpy", "Memset", "GraphLaunch", "LaunchCooperativeKernel")


def device_launches(cols: Columns) -> int:
    """How many runtime/driver calls of ``cols`` launch device work (``cudaLaunchKernel``, ``cuLaunchKernel``,
    ``hipExtModuleLaunchKernel``, ``cudaMemcpyAsync``...): on a trace with no kernel, copy or memset, these say
    the device's records were lost, not that the run had no device."""
    if not cols.n:
        return 0
    hit = np.array([any(k in n for k in _DEVICE_LAUNCH) for n in cols.names] + [False])
    launch = cols.dense["kind"] == schema.LAUNCH
    return int(hit[cols.name_codes[launch]].sum())


#: ``meta`` key of the values the decoder dropped, ``[(what, count, detail of the first), ...]``
#: (:meth:`RankTrace.from_decoded` moves them to ``RankTrace.dropped``; the loader warns them, naming the file)
NOTES_KEY = "tracekit_dropped"
#: ``meta`` key of the decoded file's identity (:func:`tracekit.traces.cache.file_key`), set by the loader
#: (:meth:`RankTrace.from_decoded` moves it to ``RankTrace.source_key``)
SOURCE_KEY = "tracekit_source_key"
#: ``meta`` key of :func:`unread_categories`, set on a file with no GPU kernel, copy or memset tracekit reads
UNREAD_KEY = "tracekit_unread_categories"
#: ``meta`` key of :func:`device_launches`, set on a file with no GPU kernel, copy or memset but device launches
LAUNCHES_KEY = "tracekit_device_launches"
#: complete-event categories whose loss says nothing about a device: Python frames, the profiler's own
#: ranges, CUDA sync markers
_IGNORABLE_CATEGORIES = frozenset({"python_function", "overhead", "Trace", "cuda_sync"})


class _CatEvent(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""


class _CatDoc(msgspec.Struct, gc=False):
    traceEvents: list[_CatEvent] = []  # noqa: N815 - the trace's own key


def unread_categories(path: Path) -> dict[str, int]:
    """``{category: complete events}`` of the file's categories tracekit does not read and that may be a
    device's activity (another accelerator's events, CUPTI's range profiler's ``cuda_profiler_range``),
    most first; {} when there are none or the file cannot be read again. A second, field-skipping decode:
    run only for files with no GPU activity read, so a report never calls such a trace CPU-only."""
    try:
        events = msgspec.json.Decoder(_CatDoc).decode(read_bytes(path)).traceEvents
    except (TraceInputError, msgspec.DecodeError, msgspec.ValidationError):
        return {}
    counts: dict[str, int] = {}
    for e in events:
        if e.ph == "X" and e.cat not in _CAT_CODE and e.cat not in _IGNORABLE_CATEGORIES:
            counts[e.cat] = counts.get(e.cat, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def unread_of(metas: Iterable[dict[str, Any]]) -> dict[str, int]:
    """:data:`UNREAD_KEY` of every file's ``meta``, summed per category, most first."""
    total: dict[str, int] = {}
    for meta in metas:
        for cat, n in (meta.get(UNREAD_KEY) or {}).items():
            total[cat] = total.get(cat, 0) + int(n)
    return dict(sorted(total.items(), key=lambda kv: -kv[1]))


def unread_text(unread: dict[str, int], limit: int = 4) -> str:
    """``mtia_ccp_events (27127), mtia_runtime (4276)``: the categories of ``unread`` (category -> events,
    most first), the first ``limit`` of them named."""
    items = list(unread.items())
    text = ", ".join(f"{c} ({n})" for c, n in items[:limit])
    return text + (f" and {len(items) - limit} more" if len(items) > limit else "")
