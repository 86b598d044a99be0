"""Capture what ``torch.compile`` did on this rank: graphs, breaks, recompiles, skips, buckets.

Sources, chosen because they exist (with the same meaning) on torch 2.4 ... 2.13:

* ``torch._dynamo.utils.counters`` -- ``stats.unique_graphs``, ``graph_break``
  (reason -> count), ``frames`` (total/ok), ``unimplemented``, ``inductor.ddp_buckets``.
  Counters are process-global and cumulative, so we diff against a snapshot.
* ``torch._dynamo.utils.get_compilation_metrics()`` -- one record per frame compile
  (compile id, function, compile time, ``fail_type`` for a skipped frame,
  ``cache_size``/``recompile_reason`` for recompiles). Fields vary by version,
  so every read is ``getattr(..., None)``.
* The ``torch._dynamo.backends.distributed`` logger -- DDPOptimizer logs its
  bucket assignment (INFO: bucket count; DEBUG: a table of index, bytes, names).
  We attach a handler for the capture scope only and restore the logger after.
* The ``torch._dynamo.convert_frame`` / ``eval_frame`` loggers -- dynamo's own reason for each
  frame it ran eagerly (``skipping: ... (reason: ...)``, ``WON'T CONVERT``), which no counter
  records for a frame in its skip list (:mod:`tracekit.profile.dynamo_skips`).

Contract: :meth:`CompileFactsRecorder.facts` never raises; a fact that cannot be
read is ``None`` and its reason goes into ``unavailable``.
"""

from __future__ import annotations

import copy
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tracekit.profile import calibrate, cudagraph_facts, dynamo_skips

DDP_LOGGER = "torch._dynamo.backends.distributed"
_BUCKET_COUNT_RE = re.compile(r"DDPOptimizer used bucket cap (\d+) and created (\d+) buckets")
_TABLE_ROW_RE = re.compile(r"^[│|]\s*(\d*)\s*[│|]\s*(\d*)\s*[│|]\s*(\S+)\s*[│|]\s*$")

# Graph breaks that come from DDP's own wrapper code, not the user's model.
_WRAPPER_MARKERS = ("DistributedDataParallel", "set_runtime_stats_and_log", "torch/nn/parallel/",
                    "torch/distributed/_composable/", "torch/distributed/tensor/",
                    # replicate()'s forward hooks (compiled with the module): its lazily built DDP and reducer
                    "torch.distributed._composable", "_ReplicateState", "UserDefinedObjectVariable(Reducer)")


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad log record must not break training
            return
        if "DDPOptimizer" in msg:
            self.messages.append(msg)


@contextmanager
def capture_ddp_optimizer_logs() -> Iterator[_ListHandler]:
    """Route the DDPOptimizer logger into a list for the duration; restore it after.

    torch attaches its own stderr handler to this logger; we swap it out so
    turning on DEBUG does not spam the console, and put it back on exit.
    """
    lg = logging.getLogger(DDP_LOGGER)
    graphs = logging.getLogger(DDP_LOGGER + ".__ddp_graphs")
    saved = (lg.level, lg.propagate, list(lg.handlers), graphs.level)
    handler = _ListHandler()
    lg.handlers = [handler]
    lg.setLevel(logging.DEBUG)
    lg.propagate = False
    graphs.setLevel(logging.WARNING)  # the graph dumps are huge and not needed
    try:
        yield handler
    finally:
        lg.setLevel(saved[0])
        lg.propagate = saved[1]
        lg.handlers = saved[2]
        graphs.setLevel(saved[3])


def parse_ddp_optimizer_logs(messages: list[str]) -> list[dict[str, Any]]:
    """Turn DDPOptimizer log messages into one entry per split graph.

    Each entry: ``{"graph": i, "bucket_cap_bytes": int, "bucket_count": int,
    "buckets": [{"index": int, "bytes": int, "params": [str]}] | None}``.
    ``buckets`` is None when the DEBUG table was not logged (tabulate missing).
    """
    graphs: list[dict[str, Any]] = []
    for msg in messages:
        m = _BUCKET_COUNT_RE.search(msg)
        if m:
            graphs.append({"graph": len(graphs), "bucket_cap_bytes": int(m.group(1)),
                           "bucket_count": int(m.group(2)), "buckets": None})
            continue
        if "bucket assignments" in msg and graphs:
            buckets: list[dict[str, Any]] = []
            for line in msg.splitlines():
                row = _TABLE_ROW_RE.match(line.strip())
                if not row or row.group(3) == "Names":
                    continue
                idx, size, name = row.groups()
                if idx:
                    buckets.append({"index": int(idx), "bytes": int(size) if size else None, "params": []})
                if buckets:
                    buckets[-1]["params"].append(name)
            graphs[-1]["buckets"] = buckets
    return graphs


def _counters_snapshot() -> dict[str, dict[str, int]]:
    from torch._dynamo.utils import counters

    return {k: dict(v) for k, v in copy.deepcopy(counters).items()}


def _diff(now: dict[str, dict[str, int]], before: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for group, vals in now.items():
        prev = before.get(group, {})
        d = {k: v - prev.get(k, 0) for k, v in vals.items() if v - prev.get(k, 0)}
        if d:
            out[group] = d
    return out


def _frame_metrics(since_s: float) -> list[Any]:
    from torch._dynamo import utils

    get = getattr(utils, "get_compilation_metrics", None)
    if get is None:
        return []
    out = []
    for m in get():
        if getattr(m, "co_name", None) is None:  # runtime/backward records, not frame compiles
            continue
        if str(getattr(m, "co_filename", "")) == calibrate.__file__:  # the profiler-cost probe's, not the run's
            continue
        start = getattr(m, "start_time", None)
        if start is not None and start < since_s - 1:
            continue
        out.append(m)
    return out


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text and text.strip() else text


def _chain(text: str) -> str:
    """First line of each chained graph break ("A -> graph break in loop"): the last one is
    usually why the whole frame was skipped."""
    parts = re.split(r"\*\*\* While handling this graph break, another graph break occurred: \*\*\*", text or "")
    return " -> ".join(_first_line(p) for p in parts if p.strip())


def _origin(reason: str) -> str:
    return "ddp_wrapper" if any(k in reason for k in _WRAPPER_MARKERS) else "model"


class CompileFactsRecorder:
    """Context manager around a whole training run on one rank.

    ``mark_warmup_done()`` is called after the warm-up steps so that compiles
    which happen later (which would pollute timings and traces) are counted.
    """

    def __init__(self, backend: str, optimize_ddp: str | None, fullgraph: bool, compile_mode: str | None = None) -> None:
        self.backend = backend
        self.compile_mode = compile_mode
        self._cg_ctx: Any = None
        self._cg_handler: Any = None
        self.optimize_ddp = optimize_ddp
        self.fullgraph = fullgraph
        self._before: dict[str, dict[str, int]] = {}
        self._t0 = 0.0
        self._handler: _ListHandler | None = None
        self._ctx: Any = None
        self._skip_handler: Any = None
        self._skip_ctx: Any = None
        self._frames_after_warmup: int | None = None
        self._frames_at_warmup = 0
        self.unavailable: dict[str, str] = {}

    def __enter__(self) -> CompileFactsRecorder:
        self._t0 = time.time()
        try:
            self._before = _counters_snapshot()
        except Exception as e:  # noqa: BLE001
            self.unavailable["counters"] = f"{type(e).__name__}: {e}"
        try:
            self._ctx = capture_ddp_optimizer_logs()
            self._handler = self._ctx.__enter__()
        except Exception as e:  # noqa: BLE001
            self._ctx = None
            self.unavailable["ddp_optimizer_logs"] = f"{type(e).__name__}: {e}"
        if self.backend != "none":
            try:
                self._skip_ctx = dynamo_skips.capture_dynamo_skips()
                self._skip_handler = self._skip_ctx.__enter__()
            except Exception as e:  # noqa: BLE001
                self._skip_ctx = None
                self.unavailable["dynamo_skips"] = f"{type(e).__name__}: {e}"
        if self.backend == "inductor":
            try:
                self._cg_ctx = cudagraph_facts.capture_cudagraph_skips()
                self._cg_handler = self._cg_ctx.__enter__()
            except Exception as e:  # noqa: BLE001
                self._cg_ctx = None
                self.unavailable["cudagraph_log"] = f"{type(e).__name__}: {e}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(None, None, None)
            self._ctx = None
        if self._skip_ctx is not None:
            self._skip_ctx.__exit__(None, None, None)
            self._skip_ctx = None
        if self._cg_ctx is not None:
            self._cg_ctx.__exit__(None, None, None)
            self._cg_ctx = None

    def mark_warmup_done(self) -> None:
        try:
            self._frames_at_warmup = len(_frame_metrics(self._t0))
        except Exception:  # noqa: BLE001
            self._frames_at_warmup = 0

    def mark_run_done(self) -> None:
        try:
            self._frames_after_warmup = len(_frame_metrics(self._t0)) - self._frames_at_warmup
        except Exception:  # noqa: BLE001
            self._frames_after_warmup = None

    def facts(self) -> dict[str, Any]:
        """The per-rank ``compile`` section of the manifest (see tracekit.traces.manifest)."""
        out: dict[str, Any] = {
            "enabled": self.backend != "none",
            "backend": self.backend,
            "optimize_ddp": self.optimize_ddp,
            "fullgraph": self.fullgraph,
            "compile_mode": self.compile_mode,
        }
        if self.backend == "none":
            return out
        unavailable = dict(self.unavailable)
        try:
            counters = _diff(_counters_snapshot(), self._before)
        except Exception as e:  # noqa: BLE001
            counters = None
            unavailable["counters"] = f"{type(e).__name__}: {e}"
        try:
            metrics = _frame_metrics(self._t0)
        except Exception as e:  # noqa: BLE001
            metrics = None
            unavailable["compilation_metrics"] = f"{type(e).__name__}: {e}"

        out["graph_count"] = counters.get("stats", {}).get("unique_graphs", 0) if counters is not None else None
        out["frames"] = dict(counters.get("frames", {})) if counters is not None else None
        out["graph_breaks"] = self._graph_breaks(counters)
        ddp_graphs = parse_ddp_optimizer_logs(self._handler.messages) if self._handler else None
        out["ddp_optimizer"] = self._ddp_optimizer_section(ddp_graphs)
        out["recompiles"] = self._recompiles(metrics)
        out["skipped_frames"] = self._skipped(metrics)
        try:
            out["dynamo_skips"] = (dynamo_skips.skips(self._skip_handler.messages)
                                   if self._skip_handler is not None else None)
        except Exception as e:  # noqa: BLE001
            out["dynamo_skips"] = None
            unavailable["dynamo_skips"] = f"{type(e).__name__}: {e}"
        out["compile_time_s"] = (
            round(sum(getattr(m, "entire_frame_compile_time_s", None) or 0.0 for m in metrics), 6)
            if metrics is not None else None
        )
        out["frame_compiles"] = self._frame_compiles(metrics)
        out["compiles_after_warmup"] = self._frames_after_warmup
        out["compiled_autograd_captures"] = (
            counters.get("compiled_autograd", {}).get("captures", 0) if counters is not None else None
        )
        inductor = counters.get("inductor", {}) if counters is not None else None
        out["inductor_ddp_buckets"] = inductor.get("ddp_buckets") if inductor else None
        if self.backend == "inductor":
            out["cudagraphs"] = cudagraph_facts.cudagraph_facts(
                self.compile_mode, inductor, self._cg_handler.reasons if self._cg_handler is not None else None,
                unavailable)
        out["unimplemented"] = (
            [{"reason": _first_line(k), "count": v} for k, v in counters.get("unimplemented", {}).items()]
            if counters is not None else None
        )
        out["unavailable"] = unavailable
        return out

    def _graph_breaks(self, counters: dict[str, dict[str, int]] | None) -> dict[str, Any] | None:
        if counters is None:
            return None
        reasons = [
            {"reason": _first_line(k), "detail": k.strip()[:2000], "count": v, "origin": _origin(k)}
            for k, v in counters.get("graph_break", {}).items()
        ]
        return {
            "total": sum(r["count"] for r in reasons),
            "model": sum(r["count"] for r in reasons if r["origin"] == "model"),
            "ddp_wrapper": sum(r["count"] for r in reasons if r["origin"] == "ddp_wrapper"),
            "reasons": reasons,
        }

    def _ddp_optimizer_section(self, graphs: list[dict[str, Any]] | None) -> dict[str, Any] | None:
        if self.optimize_ddp != "ddp_optimizer":
            return None
        if graphs is None:
            return {"intended_splits": None, "graphs": None,
                    "reason": self.unavailable.get("ddp_optimizer_logs", "no log capture")}
        return {
            # N buckets in one dynamo graph -> N-1 deliberate splits (not graph breaks).
            "intended_splits": sum(max(g["bucket_count"] - 1, 0) for g in graphs),
            "graphs": graphs,
        }

    @staticmethod
    def _recompiles(metrics: list[Any] | None) -> dict[str, Any] | None:
        if metrics is None:
            return None
        recs = []
        for m in metrics:
            cid = str(getattr(m, "compile_id", "") or "")
            attempt = cid.split("/")[-1] if "/" in cid else None  # "frame/attempt" or "!ca/frame/attempt"
            is_re = (attempt not in (None, "0")) if attempt is not None else (getattr(m, "cache_size", 0) or 0) > 0
            if is_re:
                recs.append({"compile_id": cid or None, "function": getattr(m, "co_name", None),
                             "reason": getattr(m, "recompile_reason", None)})
        return {"count": len(recs), "events": recs}

    @staticmethod
    def _skipped(metrics: list[Any] | None) -> list[dict[str, Any]] | None:
        if metrics is None:
            return None
        out = []
        for m in metrics:
            if getattr(m, "fail_type", None) is None:
                continue
            out.append({
                "function": getattr(m, "co_name", None),
                "file": getattr(m, "co_filename", None),
                "line": getattr(m, "co_firstlineno", None),
                "fail_type": getattr(m, "fail_type", None),
                "reason": _chain(str(getattr(m, "fail_reason", "") or "")),
                "detail": str(getattr(m, "fail_reason", "") or "")[:2000],
            })
        return out

    @staticmethod
    def _frame_compiles(metrics: list[Any] | None) -> list[dict[str, Any]] | None:
        if metrics is None:
            return None
        return [{
            "compile_id": str(getattr(m, "compile_id", None)) if getattr(m, "compile_id", None) else None,
            "function": getattr(m, "co_name", None),
            "file": getattr(m, "co_filename", None),
            "line": getattr(m, "co_firstlineno", None),
            "graph_op_count": getattr(m, "graph_op_count", None),
            "compile_time_s": getattr(m, "entire_frame_compile_time_s", None),
            "fail_type": getattr(m, "fail_type", None),
        } for m in metrics]


def enter_compile_scope(stack: Any, config: Any, mode: str | None) -> CompileFactsRecorder:
    """Start recording compile facts on ``stack`` and scope dynamo's ``optimize_ddp`` to ``mode``.

    Must run before DDP is constructed: ``DDP.__init__`` reads ``optimize_ddp``
    (python_reducer needs it there). The config change is undone when ``stack`` closes.
    """
    facts = stack.enter_context(CompileFactsRecorder(config.dynamo, mode, config.fullgraph,
                                                     getattr(config, "compile_mode", None)))
    if mode is not None:
        import torch._dynamo

        dynamo_mode = "python_reducer" if mode.startswith("python_reducer") else mode
        stack.enter_context(torch._dynamo.config.patch(optimize_ddp=dynamo_mode))
    return facts
