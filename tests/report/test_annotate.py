"""``tracekit annotate``: annotated copies keep every original event and add tracekit's tracks."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.explain_builders import build_rank
from tracekit.analyses.findings import as_dicts
from tracekit.runner.pipeline import load_and_analyze
from tracekit.cli import main
from tracekit.report import annotate


def _run(folder: Path) -> Path:
    """Eager DDP, 2 ranks x 2 steps x 4 buckets; rank 1 straggles (rank 0 waits); rank 0 gzipped."""
    folder.mkdir(parents=True, exist_ok=True)
    build_rank(0, 2, "eager", straggle_us=400.0, straggler=1).write(folder / "rank0.trace.json.gz")
    build_rank(1, 2, "eager", straggle_us=400.0, straggler=1).write(folder / "rank1.trace.json")
    return folder


def _doc(path: Path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _ours(doc: dict) -> list[dict]:
    return [e for e in doc["traceEvents"] if e.get("pid") == annotate.PID]


def test_annotated_copies(tmp_path: Path) -> None:
    src = _run(tmp_path / "run")
    code = CliRunner().invoke(main, ["annotate", str(src), "-o", str(tmp_path / "out")])
    assert code.exit_code == 0, code.output
    out0, out1 = tmp_path / "out" / "rank0.trace.json.gz", tmp_path / "out" / "rank1.trace.json"
    assert out0.read_bytes()[:2] == b"\x1f\x8b" and out1.read_bytes()[:1] == b"{"  # gzip kept, plain kept
    _, res = load_and_analyze([str(src)])
    tl = res.bucket_timeline
    for rank, path in ((0, out0), (1, out1)):
        orig, new = _doc(src / path.name), _doc(path)
        ours = _ours(new)
        # every original event, unchanged and in order, plus ours
        assert [e for e in new["traceEvents"] if e.get("pid") != annotate.PID] == orig["traceEvents"]
        assert {k: v for k, v in new.items() if k != "traceEvents"} == {k: v for k, v in orig.items()
                                                                        if k != "traceEvents"}
        names = {(e["name"], e["tid"]): e["args"] for e in ours if e["ph"] == "M"}
        assert names[("process_name", 0)] == {"name": f"tracekit (rank {rank})"}
        assert [names[("thread_name", 100 + k)]["name"] for k in range(4)] == [f"bucket {k}" for k in range(4)]
        # one bucket span per step and bucket: gradient-ready -> allreduce end, on the rank's clock
        spans = [e for e in ours if e["ph"] == "X" and e["name"].startswith("bucket ")]
        mine = tl[tl["rank"] == rank].sort_values(["step", "bucket"])
        assert len(spans) == len(mine) == 2 * 4
        for e, (_, r) in zip(sorted(spans, key=lambda e: (e["args"]["step"], e["args"]["bucket"])), mine.iterrows()):
            ready = min(r["ready_gpu_ns"] if r["ready_gpu_ns"] >= 0 else r["ready_cpu_ns"], r["start_ns"])
            assert e["ts"] == pytest.approx(ready / 1000, abs=1e-3)
            assert e["ts"] + e["dur"] == pytest.approx(r["end_ns"] / 1000, abs=2e-3)
            assert e["tid"] == 100 + r["bucket"] and e["cat"] == "tracekit"
        exposed = sum(e["dur"] for e in ours if e["name"] == "exposed")
        assert exposed == pytest.approx(mine["exposed_us"].sum(), abs=0.01)
        # X events of one thread nest (chrome://tracing needs it): sort by start, check containment
        for tid in {e["tid"] for e in ours if e["ph"] == "X"}:
            xs = sorted((e for e in ours if e["ph"] == "X" and e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
            stack: list[float] = []
            for e in xs:
                while stack and stack[-1] <= e["ts"] + 1e-6:
                    stack.pop()
                assert not stack or e["ts"] + e["dur"] <= stack[-1] + 1e-6, (tid, e)
                stack.append(e["ts"] + e["dur"])
    # findings: instants on the findings thread, one per finding of the rank and step
    fs0 = [f for f in as_dicts(res.findings) if f["rank"] in (None, 0)]
    inst = [e for e in _ours(_doc(out0)) if e["ph"] == "i"]
    assert fs0 and len(inst) == 2 * len(fs0)
    assert all(e["s"] == "t" and e["tid"] == annotate.TID_FINDINGS and e["args"]["message"] for e in inst)
    assert {e["name"] for e in inst} == {f"{f['severity']}: {f['code']}" for f in fs0}


def test_annotated_run_analyses_like_the_original(tmp_path: Path) -> None:
    src = _run(tmp_path / "run")
    annotate.annotate_paths([str(src)], tmp_path / "out")
    _, a = load_and_analyze([str(src)])
    _, b = load_and_analyze([str(tmp_path / "out")])
    assert a.ranks.equals(b.ranks) and a.collectives.drop(columns="kernel").equals(b.collectives.drop(columns="kernel"))


@pytest.mark.parametrize("text", [
    '{"traceEvents": [ ], "x": 1}',
    '{"a": "[", "traceEvents":[{"ph":"X","name":"k","ts":1,"dur":2,"pid":1,"tid":1}]}',
    '{"traceEvents" :\n [\n  {"ph":"M","name":"n","pid":1,"tid":1,"args":{}}\n ],\n "traceName": "t"}',
])
@pytest.mark.parametrize("block", [3, 1 << 20])
def test_splice_layouts(tmp_path: Path, text: str, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(annotate, "BLOCK", block)  # also: the key split across reads
    src, dst = tmp_path / "t.json", tmp_path / "o.json"
    src.write_text(text)
    added = [{"ph": "i", "name": "</script>\x1b[0m", "pid": annotate.PID, "tid": 1, "ts": 1.5, "s": "t"}]
    annotate.splice(src, dst, added)
    orig, new = json.loads(text), json.loads(dst.read_text())
    assert new["traceEvents"] == added + orig["traceEvents"]
    assert {k: v for k, v in new.items() if k != "traceEvents"} == {k: v for k, v in orig.items() if k != "traceEvents"}


def test_splice_without_trace_events_is_an_input_error(tmp_path: Path) -> None:
    src = tmp_path / "t.json"
    src.write_text('{"x": 1}')
    with pytest.raises(annotate.TraceInputError, match="no traceEvents array"):
        annotate.splice(src, tmp_path / "o.json", [])
    assert not (tmp_path / "o.json").exists() and not list(tmp_path.glob(".*tmp"))


def test_annotate_refuses_the_input_folder(tmp_path: Path) -> None:
    src = _run(tmp_path / "run")
    r = CliRunner().invoke(main, ["annotate", str(src), "-o", str(src)])
    assert r.exit_code == 2 and r.output.startswith("error: ") and "input folder" in r.output
    assert sorted(p.name for p in src.iterdir()) == ["rank0.trace.json.gz", "rank1.trace.json"]
