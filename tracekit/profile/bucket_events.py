"""Per-bucket DDP timing without the profiler: CUDA events (host clocks on CPU) around each bucket.

In steps of their own (``ProfileConfig.bucket_timing_steps``, after the timed
steps and before the profiler window, so the marks' cost never reaches the
unprofiled step time), a DDP comm hook that wraps the active one (the default
allreduce, or the bf16/fp16 compress hook) marks, per step:

- ``step start`` / ``step end``: before the forward and after the optimizer step;
- per bucket, in the order DDP hands them over:
  ``ready`` -- when DDP calls the hook (all of the bucket's gradients are computed:
  an event on the compute stream, so on the GPU timeline it completes when
  the stream has produced them), and ``end`` -- when the allreduce's future
  completes (an event recorded in its ``then`` callback, on a stream that waits
  for the NCCL work, decompression of a compress hook included);
- ``backward end``: an autograd-engine callback queued at the step's first bucket
  runs after every backward node and before DDP's own finalize callback (queued
  at the last bucket), so its event completes when the backward compute ends.

Clock: ``cuda_events`` on GPU (``Event.elapsed_time``, ~0.5 µs resolution);
``host`` on CPU (gloo), where ``time.perf_counter_ns`` at the same points is exact
for ``ready`` (CPU compute is synchronous) and ``backward end``, and ``end`` is
when gloo completes the future.

Derived per bucket (µs from the step start; :func:`derive_step`):

- ``start_us`` = max(ready, previous bucket's end) on ``cuda_events``: one
  process group runs its collectives in order on one NCCL stream, so a bucket's
  allreduce starts when it is ready and the previous one is done;
  on ``host`` ``start_us`` = ready (gloo may run two allreduces at once);
- ``comm_us`` = end − start (waiting for peers included, like a trace's kernel time);
- ``exposed_us`` = the part of [start, end] after backward end;
  ``overlap_us`` = comm − exposed.

Per step: ``comm_us`` = |∪ bucket [start, end]|, ``exposed_us`` = |∪ ∩ [backward end, ∞)|,
``overlap_us`` = comm − exposed, ``overlap_pct`` = 100 · overlap / comm.

Outside those steps the hook stays registered as a pass-through that only
calls the wrapped hook: the timed steps and the profiled window run DDP's Python allreduce hook
rather than its built-in C++ one: a Python call per bucket (tens of µs of CPU).
``--no-bucket-timing`` leaves DDP's hooks untouched.

:func:`derive_step` and :func:`summarize` need no torch (analyze may use them).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CUDA_EVENTS = "cuda_events"
HOST = "host"
#: the manifest's description of the method (run.json ``bucket_timing.method``)
METHOD = ("comm hook around DDP's active hook in min(steps, 10) steps after the timed ones: ready = hook call, end = allreduce "
          "future done, backward end = autograd-engine callback; start = max(ready, previous end) on "
          "cuda_events, = ready on host; exposed = part after backward end")


@dataclass
class _Step:
    start: Any
    end: Any = None
    bwd_end: Any = None
    buckets: list[dict[str, Any]] = field(default_factory=list)


class BucketTimer:
    """Records bucket marks while :attr:`active`; :meth:`hook` wraps a comm hook for DDP.

    Usage::

        timer = BucketTimer("cuda")
        ddp.register_comm_hook(None, timer.hook(None))   # None: DDP's default allreduce
        timed = timer.timed(train_step)                  # marks step start/end, active inside
        for _ in range(n): timed()
        record = timer.results()                         # after a device synchronize
    """

    def __init__(self, device_type: str) -> None:
        self.clock = CUDA_EVENTS if device_type == "cuda" else HOST
        self.active = False
        self.steps: list[_Step] = []
        self._cur: _Step | None = None

    def _mark(self) -> Any:
        if self.clock == HOST:
            return time.perf_counter_ns()
        import torch

        ev = torch.cuda.Event(enable_timing=True)
        ev.record()
        return ev

    def hook(self, inner: Callable[[Any, Any], Any] | None) -> Callable[[Any, Any], Any]:
        """A comm hook that calls ``inner(state, bucket)`` (None: DDP's default allreduce) and marks the bucket."""
        if inner is None:
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

            inner = default_hooks.allreduce_hook

        # no annotations: DDP rejects a hook whose ``bucket`` is annotated with anything but GradBucket
        def tracekit_bucket_timing_hook(state, bucket):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
            cur = self._cur
            if not self.active or cur is None:
                return inner(state, bucket)
            if not cur.buckets:
                from torch.autograd import Variable

                # runs after the backward's last node, before DDP's finalize (queued at the last bucket)
                Variable._execution_engine.queue_callback(lambda: setattr(cur, "bwd_end", self._mark()))
            buf = bucket.buffer()
            rec = {"index": int(bucket.index()), "bytes": int(buf.numel() * buf.element_size()),
                   "ready": self._mark(), "end": None}
            cur.buckets.append(rec)

            def done(fut: Any) -> Any:
                rec["end"] = self._mark()
                return fut.value()

            return inner(state, bucket).then(done)

        return tracekit_bucket_timing_hook

    def timed(self, step_fn: Callable[[], None]) -> Callable[[], None]:
        """``step_fn`` with the step marked and the timer active while it runs."""
        def step() -> None:
            self._cur = _Step(start=self._mark())
            self.active = True
            try:
                step_fn()
            finally:
                self.active = False
                self._cur.end = self._mark()
                self.steps.append(self._cur)
                self._cur = None

        return step

    def _us(self, start: Any, mark: Any) -> float | None:
        if mark is None:
            return None
        if self.clock == HOST:
            return (mark - start) / 1000.0
        return float(start.elapsed_time(mark)) * 1000.0

    def results(self) -> dict[str, Any]:
        """The recorded steps as plain data (call after a device synchronize): see :func:`derive_step`."""
        steps = []
        for i, s in enumerate(self.steps):
            raw = {"step_us": self._us(s.start, s.end), "bwd_end_us": self._us(s.start, s.bwd_end),
                   "buckets": [{"order": k, "index": b["index"], "bytes": b["bytes"],
                                "ready_us": self._us(s.start, b["ready"]), "end_us": self._us(s.start, b["end"])}
                               for k, b in enumerate(s.buckets)]}
            steps.append({"step": i, **derive_step(raw, self.clock)})
        return {"clock": self.clock, "steps": steps, "summary": summarize(steps)}


def _union(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def derive_step(raw: dict[str, Any], clock: str) -> dict[str, Any]:
    """``raw`` (``step_us``, ``bwd_end_us``, ``buckets`` with ``ready_us``/``end_us``) with the derived
    figures of the module doc added. Buckets missing a mark get null figures and are left out of the sums."""
    bwd_end = raw.get("bwd_end_us")
    prev_end = float("-inf")
    buckets, spans = [], []
    for b in raw.get("buckets", []):
        ready, end = b.get("ready_us"), b.get("end_us")
        row = dict(b, start_us=None, comm_us=None, exposed_us=None, overlap_us=None)
        if ready is not None and end is not None:
            start = max(ready, prev_end) if clock == CUDA_EVENTS else ready
            start = min(start, end)
            exposed = max(0.0, end - max(start, bwd_end)) if bwd_end is not None else None
            row.update(start_us=start, comm_us=end - start, exposed_us=exposed,
                       overlap_us=(end - start - exposed) if exposed is not None else None)
            spans.append((start, end))
            prev_end = end
        buckets.append(row)
    u = _union(spans)
    comm = sum(e - s for s, e in u) if u else 0.0
    exposed = (sum(max(0.0, e - max(s, bwd_end)) for s, e in u) if bwd_end is not None else None)
    return {"step_us": raw.get("step_us"), "bwd_end_us": bwd_end, "buckets": buckets, "comm_us": comm,
            "exposed_us": exposed, "overlap_us": comm - exposed if exposed is not None else None,
            "overlap_pct": 100.0 * (comm - exposed) / comm if exposed is not None and comm > 0 else None}


def summarize(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over steps: ``step_us``, ``buckets_per_step``, ``comm_us_per_step``, ``exposed_us_per_step``,
    ``overlap_pct`` (100 · total overlap / total comm); nulls when no step has the figure."""
    def mean(key: str) -> float | None:
        v = [s[key] for s in steps if s.get(key) is not None]
        return statistics.fmean(v) if v else None

    comm = sum(s["comm_us"] for s in steps if s.get("overlap_us") is not None)
    ovl = sum(s["overlap_us"] for s in steps if s.get("overlap_us") is not None)
    return {"steps": len(steps), "step_us": mean("step_us"),
            "buckets_per_step": statistics.fmean(len(s["buckets"]) for s in steps) if steps else None,
            "comm_us_per_step": mean("comm_us"), "exposed_us_per_step": mean("exposed_us"),
            "overlap_pct": 100.0 * ovl / comm if comm > 0 else None}


def unavailable_reason(parallel: str, python_reducer: bool, enabled: bool) -> str | None:
    """Why bucket timing cannot run for this configuration (None when it can)."""
    if not enabled:
        return "switched off (--no-bucket-timing)"
    if parallel != "ddp":
        return f"bucket timing is wired for --ddp only (this run: {parallel})"
    if python_reducer:
        return "DDP's python reducer (compiled autograd) takes no comm hook"
    return None


def install(ddp: Any, inner: Callable[[Any, Any], Any] | None, device_type: str,
            process_group: Any = None) -> BucketTimer:
    """Register a :class:`BucketTimer`'s hook around ``inner`` on ``ddp`` and remember it (:func:`timer_of`).

    ``process_group`` is the hook's state: the group DDP reduces over (None: the default group),
    which the default and compress hooks take as their first argument.
    """
    timer = BucketTimer(device_type)
    ddp.register_comm_hook(state=process_group, hook=timer.hook(inner))
    ddp._tracekit_bucket_timer = timer
    return timer


def timer_of(model: Any) -> BucketTimer | None:
    """The timer :func:`install` registered on ``model`` (None when there is none)."""
    return getattr(model, "_tracekit_bucket_timer", None)


def manifest_section(records: list[dict[str, Any]]) -> dict[str, Any]:
    """run.json ``bucket_timing``: ``method`` and, per rank, the rank's :meth:`BucketTimer.results`
    (or ``{"rank", "unavailable": reason}``)."""
    per_rank = [dict(rank=r["rank"], **(r.get("bucket_timing") or {"unavailable": "not recorded"}))
                for r in sorted(records, key=lambda r: r["rank"])]
    return {"method": METHOD, "per_rank": per_rank}
