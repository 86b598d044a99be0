"""The chunked fast path of the decoder gives exactly the whole-document result."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from tracekit.traces import decode
from tracekit.traces.traceset import decode_table, events_frame

REF = Path(__file__).parents[1] / "data" / "reference"


def _slices(raw: bytes, chunk: int) -> int:
    return sum(kind == "events" for kind, _ in decode._stream_slices(iter([raw]), chunk))


def _whole(path: Path) -> tuple[dict, pd.DataFrame]:
    meta, events, _ = decode.decode(path)
    return meta, events_frame(decode.columns(path, events))


@pytest.mark.parametrize("run", ["eager", "inductor"])
@pytest.mark.parametrize("chunk", [2_000, 50_000, 10**9])
def test_chunks_equal_whole_document(run: str, chunk: int) -> None:
    path = REF / run / "rank0.trace.json.gz"
    meta_w, df_w = _whole(path)
    assert (_slices(decode.read_bytes(path), chunk) > 1) == (chunk < 10**9)  # small chunks really split the file
    meta_c, df_c = decode_table(path, chunk_bytes=chunk)
    assert meta_c == meta_w
    pd.testing.assert_frame_equal(df_c, df_w)


def test_compact_json_chunks(tmp_path: Path) -> None:
    doc = json.load(gzip.open(REF / "inductor" / "rank1.trace.json.gz"))
    p = tmp_path / "compact.json"
    p.write_text(json.dumps(doc, separators=(",", ":")))
    assert _slices(p.read_bytes(), 5_000) > 10
    pd.testing.assert_frame_equal(decode_table(p, chunk_bytes=5_000)[1], _whole(p)[1])


def test_cut_inside_a_string_falls_back(tmp_path: Path) -> None:
    # a name containing "},{" right where a cut would land: the slice fails to decode,
    # and the whole-document path must give the same table as without chunking
    ev = [{"ph": "X", "cat": "cpu_op", "name": "op" + "x" * 50, "pid": 1, "tid": 1, "ts": 1.0 + i, "dur": 0.5}
          for i in range(50)]
    ev.insert(10, {"ph": "X", "cat": "cpu_op", "name": "weird},{name" * 20, "pid": 1, "tid": 1, "ts": 0.5, "dur": 0.1})
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": ev, "distributedInfo": {"rank": 0, "world_size": 1}}))
    raw = p.read_bytes()
    cut = raw.find(b"weird},{") + 1
    for chunk in (cut - raw.find(b'"traceEvents"') - 20, 100, 400):
        meta, df = decode_table(p, chunk_bytes=max(chunk, 1))
        assert len(df) == 51 and "weird},{name" * 20 in set(df["name"].astype(str))
        pd.testing.assert_frame_equal(df, _whole(p)[1])


def test_header_after_events_plain_file(tmp_path: Path) -> None:
    """Memory-mapped slices: keys after ``traceEvents`` (here distributedInfo) still reach the meta."""
    doc = json.load(gzip.open(REF / "inductor" / "rank0.trace.json.gz"))
    events = doc.pop("traceEvents")
    p = tmp_path / "late_header.json"
    p.write_text(json.dumps({"traceEvents": events, **doc}))
    meta, df = decode_table(p, chunk_bytes=20_000)
    assert meta["distributedInfo"]["rank"] == 0
    pd.testing.assert_frame_equal(df, _whole(p)[1])


@pytest.mark.parametrize("odd", [None, "B", "Z", 3, "x"])
def test_only_complete_events_are_kept_whatever_the_other_phases(tmp_path: Path, odd: object) -> None:
    # the fast path decodes known non-"X" phases as empty structs; a missing,
    # unknown or non-string phase takes the loose path: both keep exactly the "X" events
    ev = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": 10.0 + i, "dur": 0.5}
          for i in range(20)]
    ev[3] = {k: v for k, v in ev[3].items() if k != "ph"} | {"ph": "X"}  # the tag need not come first
    ev[5:5] = [{"ph": "s", "id": 1, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 1, "ts": 1.0},
               {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}},
               {"cat": "cpu_op", "name": "odd", "pid": 1, "tid": 1, "ts": 2.0, "dur": 1.0}
               | ({} if odd is None else {"ph": odd})]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": ev, "distributedInfo": {"rank": 0, "world_size": 1}}))
    for chunk in (200, 10**9):
        _, df = decode_table(p, chunk_bytes=chunk)
        assert list(df["name"].astype(str)) == [f"op{i}" for i in range(20)]
        pd.testing.assert_frame_equal(df, _whole(p)[1])
