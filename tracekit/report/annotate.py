"""``tracekit annotate``: copies of the rank traces with tracekit's findings and bucket spans as their own tracks.

Each copy holds every original event unchanged plus, in a process of its own
(``pid`` :data:`PID`, named ``tracekit (rank R)``, sorted first), these threads:

- ``findings`` (tid 1): one instant event (``ph: "i"``, thread scope) per finding and profiled step,
  at the start of the part of the step the finding is about (as the HTML report's timeline links;
  the step start when the step has nothing of it); ``args`` hold the message, severity, cost and evidence;
- ``compiled-graph boundaries`` (tid 2): an ``X`` event per gap between consecutive compiled
  subgraphs, named by its kind (``graph_break`` / ``ddp_split`` / ``unknown``);
- ``bucket K`` (tid 100 + K): per step, an ``X`` event from gradient-ready to the end of bucket K's
  allreduce, nesting the allreduce kernel's span and, inside it, each exposed part.

All added events have ``cat: "tracekit"`` (the tracekit loader ignores the category, so a copy
analyses exactly like its original) and times on the rank's own clock. Perfetto UI and
chrome://tracing open the copies as they open the originals.

The copy is streamed: the new events go at the start of the ``traceEvents`` array, found in the
first piece read, and the rest of the file is copied through in blocks (gunzipped and gzipped
again when the input was gzipped). The added events are encoded with msgspec.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path
from typing import IO, Any

import msgspec

from tracekit.analyses.findings import as_dicts
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze
from tracekit.analyses.registry import AnalysisResult
from tracekit.errors import ConfigError, TraceInputError
from tracekit.report import chart_data, collect
from tracekit.traces.traceset import RankTrace

#: pid of the added process: far above any OS pid (pid_max <= 2**22) and kineto's device pids
PID = 900_000_000
TID_FINDINGS, TID_BOUNDARIES, TID_BUCKET0 = 1, 2, 100
CAT = "tracekit"
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
#: how far into the file the traceEvents key may be (kineto writes a small header first)
HEAD_LIMIT = 64 << 20
BLOCK = 1 << 20


def _us(ns: float) -> float:
    """ns -> µs with kineto's three decimals."""
    return round(ns / 1000.0, 3)


def _meta(name: str, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"ph": "M", "name": name, "pid": PID, "tid": tid, "args": args}


def _x(name: str, tid: int, start_us: float, end_us: float, args: dict[str, Any]) -> dict[str, Any]:
    return {"ph": "X", "cat": CAT, "name": name, "pid": PID, "tid": tid, "ts": round(start_us, 3),
            "dur": round(max(end_us - start_us, 0.0), 3), "args": args}


def _bucket_events(b: chart_data.BucketSpan, step: int) -> list[dict[str, Any]]:
    tid = TID_BUCKET0 + b.bucket
    args = {"step": step, "bucket": b.bucket, "bytes": b.bytes, "dur_us": round(b.end_us - b.start_us, 3),
            "exposed_us": round(b.exposed_us, 3), "ready_to_start_us": round(b.start_us - b.ready_us, 3)}
    out = [_x(f"bucket {b.bucket} ({b.bytes / 1e6:.2f} MB)", tid, b.ready_us, b.end_us, args),
           _x("allreduce", tid, b.start_us, b.end_us, {"step": step, "bucket": b.bucket})]
    out += [_x("exposed", tid, a, e, {"step": step, "bucket": b.bucket}) for a, e in b.exposed]
    return out


def _finding_event(f: dict[str, Any], rank: int, lanes: chart_data.RankLanes, step: int,
                   step_start_us: float) -> dict[str, Any]:
    tl = chart_data.Timeline(step=step, origin_ns=0, ranks=[lanes])
    t = chart_data.finding_target({**f, "rank": rank}, tl)
    args = {"message": f.get("message"), "severity": f.get("severity"), "rank": f.get("rank"), "step": step,
            "cost_us_per_step": (f.get("evidence") or {}).get("cost_us"), "evidence": f.get("evidence")}
    if t is not None:
        args |= {"lane": t.lane, "until_us": t.x1_us}
    return {"ph": "i", "s": "t", "cat": CAT, "name": f"{f.get('severity')}: {f.get('code')}", "pid": PID,
            "tid": TID_FINDINGS, "ts": round(t.x0_us if t is not None else step_start_us, 3), "args": args}


def annotation_events(rt: RankTrace, res: AnalysisResult) -> list[dict[str, Any]]:
    """The events added to ``rt``'s trace (see module doc), times in µs on the rank's own clock."""
    offset_ns = int(round(1000.0 * (res.meta.get("clock_offsets_us") or {}).get(rt.rank, 0.0)))
    findings = [f for f in as_dicts(res.findings) if f.get("rank") in (None, rt.rank)]
    body: list[dict[str, Any]] = []
    buckets: set[int] = set()
    for step, start_ns in zip(rt.steps["step"], rt.steps["ts_ns"]):
        # origin -offset: rank_lanes adds the rank's offset back, so its µs are the rank's own clock
        lanes = collect.rank_lanes(rt, res, int(step), -offset_ns)
        for b in lanes.buckets:
            buckets.add(b.bucket)
            body += _bucket_events(b, int(step))
        body += [_x(bd.kind, TID_BOUNDARIES, bd.start_us, bd.end_us, {"step": int(step), "pass": bd.pass_,
                                                                      "index": bd.index}) for bd in lanes.boundaries]
        body += [_finding_event(f, rt.rank, lanes, int(step), _us(start_ns)) for f in findings]
    head = [_meta("process_name", 0, {"name": f"tracekit (rank {rt.rank})"}),
            _meta("process_sort_index", 0, {"sort_index": -1}),
            _meta("thread_name", TID_FINDINGS, {"name": "findings"}),
            _meta("thread_sort_index", TID_FINDINGS, {"sort_index": 0}),
            _meta("thread_name", TID_BOUNDARIES, {"name": "compiled-graph boundaries"}),
            _meta("thread_sort_index", TID_BOUNDARIES, {"sort_index": 1})]
    for k in sorted(buckets):
        head += [_meta("thread_name", TID_BUCKET0 + k, {"name": f"bucket {k}"}),
                 _meta("thread_sort_index", TID_BUCKET0 + k, {"sort_index": 2 + k})]
    return head + body


def _open_in(path: Path) -> tuple[IO[bytes], bool]:
    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller
    gz = fh.read(2) == b"\x1f\x8b"
    fh.seek(0)
    return (gzip.GzipFile(fileobj=fh, mode="rb") if gz else fh), gz


def splice(src: Path, dst: Path, events: list[dict[str, Any]]) -> None:
    """Copy ``src`` to ``dst`` with ``events`` first in its ``traceEvents`` array (streamed; gzip kept).

    Written to a temporary name and renamed, so ``dst`` is never half written.
    """
    added = msgspec.json.encode(events)[1:-1]  # "e1,e2,..." without the brackets
    fin, gz = _open_in(src)
    tmp = dst.with_name(f".{dst.name}.tmp")
    try:
        with fin, open(tmp, "wb") as raw:
            out: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) if gz else raw
            with out:
                head = b""
                while (m := _EVENTS_KEY.search(head)) is None:
                    piece = fin.read(BLOCK)
                    if not piece or len(head) > HEAD_LIMIT:
                        raise TraceInputError(src, "no traceEvents array found to annotate")
                    head += piece
                rest = head[m.end():]
                while not rest.strip() and (piece := fin.read(BLOCK)):  # up to the array's first character
                    rest += piece
                out.write(head[:m.end()])
                if added:  # no comma before an empty array's "]"
                    out.write(added + (b"" if rest.lstrip()[:1] == b"]" else b","))
                out.write(rest)
                shutil.copyfileobj(fin, out, BLOCK)
        os.replace(tmp, dst)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise TraceInputError(src, f"cannot copy the trace ({e})") from None
    finally:
        tmp.unlink(missing_ok=True)


def annotate_paths(paths: list[str], out_dir: str | os.PathLike[str], *, skip_bad: bool = False,
                   comm_pattern: str | None = None, workers: int | None = None) -> list[Path]:
    """Analyse the run at ``paths`` and write an annotated copy of each rank's trace into ``out_dir``
    (same file names); returns the written paths, by rank."""
    traces, res = load_and_analyze(paths, RunOptions.of(skip_bad=skip_bad, comm_pattern=comm_pattern, workers=workers))
    out = Path(out_dir)
    srcs = {rt.rank: Path(rt.path) for rt in traces}
    names = [p.name for p in srcs.values()]
    if len(set(names)) != len(names):
        raise ConfigError("two rank files have the same name; annotate them into separate folders")
    if out.exists() and any(out.resolve() == p.parent.resolve() for p in srcs.values()):
        raise ConfigError(f"{out}: is the input folder; the copies would replace the traces (pick another -o)")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for rt in sorted(traces, key=lambda r: r.rank):
        dst = out / srcs[rt.rank].name
        splice(srcs[rt.rank], dst, annotation_events(rt, res))
        written.append(dst)
    return written
