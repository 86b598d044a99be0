"""The step: one definition, used by every table, finding and the what-if replay.

A trace marks each training step with a CPU range ``ProfilerStep#N`` (the *host range*: the host
enqueueing the step). On a GPU run the host runs ahead of the device: it can enqueue a whole step
in a third of the time the device takes to run it, so the host range is not how long the step
took. :func:`step_windows` gives each step its window on the device's clock:

- **device work** is every kernel, memcpy and memset on any stream of the rank's device; it
  belongs to the step whose host range contains its launch call (correlation id);
- a step **ends** when its last device work ends, or when its host range ends if that is later
  (a step is done when both its host part and its device part are);
- a step **starts** when its host range starts, or when the previous step ended if that is later
  (its device work cannot start before the previous step's is done: consecutive steps tile the
  timeline, so a GPU-bound step lasts from the end of the previous step's last device work to the
  end of its own);
- the **first step** of the window has, as its previous step, the device work that ran in the
  window but was launched before it (the *backlog*: :func:`backlog_end`); where the host had
  queued whole steps ahead, the first step starts when that backlog has drained. A trace whose
  launch records are incomplete (a sampled or filtered trace: device work with no recorded launch
  runs after work launched in the window on its stream, :func:`launched_in_window_later`) has no
  backlog: work launched before the window cannot be told from work whose launch was lost, and
  the lost ones ran inside the steps, so the first step starts at its host range (the analysis
  says so in a note);
- a step never ends before it starts (a step that launched nothing behind a longer backlog is
  empty, length 0).

On a rank without device work (a CPU run) the window is the host range.

The host range keeps its own name everywhere it is shown (``host_step_us``).
"""

from __future__ import annotations

import numpy as np


def launched_in_window_later(pre: np.ndarray, stream: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Mask of the device operations with no launch recorded (``pre``) that start after an operation launched
    in the window on their stream. A stream runs its operations in launch order, so these were not launched
    before the window: their launch is missing from the trace (a sampled or filtered trace)."""
    pre, stream, start = np.asarray(pre, dtype=bool), np.asarray(stream), np.asarray(start)
    if not pre.any() or pre.all():
        return np.zeros(pre.size, dtype=bool)
    inv, n = _stream_codes(stream)
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, inv[~pre], start[~pre])  # each stream's first operation launched in the window
    return pre & (start > first[inv])


def _stream_codes(stream: np.ndarray) -> tuple[np.ndarray, int]:
    """``(code per row, number of codes)`` of the stream ids: their offset from the smallest (ids are a few small
    integers: no sort), or their rank among the distinct ids where the range is wide."""
    if stream.size and stream.dtype.kind in "iu":
        lo, hi = int(stream.min()), int(stream.max())
        if hi - lo <= 4 * stream.size + 1024:
            return (stream - lo).astype(np.intp), hi - lo + 1
    streams, inv = np.unique(stream, return_inverse=True)
    return inv.reshape(-1), streams.size


def backlog_end(pre: np.ndarray, stream: np.ndarray, start: np.ndarray, end: np.ndarray,
                first_step_ts: int | None, lost: np.ndarray | None = None) -> int | None:
    """The end of the device work launched before the window (no launch recorded), or None: the operations
    with no launch recorded that start before their stream's first operation launched in the window, and on a
    stream with none, before the first step's host range (``first_step_ts``; None: no step).

    None as well when the launch records are incomplete (:func:`launched_in_window_later` finds any: a sampled
    or filtered trace): then an operation without a launch may as well have been launched inside the window
    (a sampled trace keeps the launches of a few kernels only), and taking it for backlog would move the first
    step's start past work that ran in it. ``lost``: that mask where the caller has it already (a rank's
    :meth:`~tracekit.traces.traceset.RankTrace.launches_lost`), else it is computed here."""
    pre = np.asarray(pre, dtype=bool)
    if not pre.any():
        return None
    start, end, stream = np.asarray(start), np.asarray(end), np.asarray(stream)
    if (launched_in_window_later(pre, stream, start) if lost is None else lost).any():
        return None
    window = int(first_step_ts) if first_step_ts is not None else int(start.max()) + 1
    inv, n = _stream_codes(stream)
    has_launched = np.bincount(inv[~pre], minlength=n)[inv] > 0
    keep = pre & (has_launched | (start < window))
    return int(end[keep].max()) if keep.any() else None


def step_windows(step: np.ndarray, host_ts: np.ndarray, host_end: np.ndarray, op_step: np.ndarray,
                 op_end: np.ndarray, backlog: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Each step's window ``(lo, hi)`` in ns (module doc).

    ``step``, ``host_ts``, ``host_end``: the steps' numbers and host ranges, ordered by ``host_ts``;
    ``op_step``, ``op_end``: each device operation's step (-1: none) and end; ``backlog``: the end of the
    work launched before the window (:func:`backlog_end`), None when there is none. Without device work
    (``op_step`` empty) every window is its host range, chained the same way. Windows are ordered and
    disjoint: ``lo[k] >= hi[k - 1]``."""
    step = np.asarray(step)
    last: dict[int, int] = {}
    op_step, op_end = np.asarray(op_step), np.asarray(op_end)
    has = op_step >= 0
    if has.any():
        keys, inv = np.unique(op_step[has], return_inverse=True)
        top = np.full(keys.size, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(top, inv, op_end[has].astype(np.int64))
        last = dict(zip(keys.tolist(), top.tolist()))
    lo = np.empty(step.size, dtype=np.int64)
    hi = np.empty(step.size, dtype=np.int64)
    prev = backlog
    for k, (s, a, b) in enumerate(zip(step.tolist(), np.asarray(host_ts).tolist(), np.asarray(host_end).tolist())):
        x, y = int(a), int(b)
        if s in last:  # the step lasts until its device work is done ...
            y = max(y, last[s])
        if prev is not None:  # ... and starts no earlier than the previous step ended
            x = max(x, prev)
        y = max(y, x)
        lo[k], hi[k] = x, y
        prev = y
    return lo, hi


def window_pieces(ts: np.ndarray, end: np.ndarray, lo: np.ndarray, hi: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The parts of the intervals ``[ts, end)`` inside each window ``[lo, hi)`` (ordered, disjoint windows, as
    :func:`step_windows` gives): ``(piece starts, piece ends, window of each piece, interval of each piece)``.
    An interval across a step boundary gives a piece to each step it runs in; time outside every window is
    in no piece."""
    ts, end = np.asarray(ts, dtype=np.int64), np.asarray(end, dtype=np.int64)
    first = np.searchsorted(hi, ts, side="right")  # the first window ending after the interval starts
    last = np.searchsorted(lo, end, side="left") - 1  # the last window starting before it ends
    counts = np.maximum(last - first + 1, 0)
    if not (counts > 1).any():  # the usual case: no interval runs across a step boundary
        src = np.flatnonzero(counts)
        seg = first[src].astype(np.int64)
        return np.maximum(ts[src], lo[seg]), np.minimum(end[src], hi[seg]), seg, src
    src = np.repeat(np.arange(ts.size), counts)
    seg = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(first, counts)
    seg = seg.astype(np.int64)
    return np.maximum(ts[src], lo[seg]), np.minimum(end[src], hi[seg]), seg, src


#: the one-line definitions of the step columns, shared by every table that shows them
STEP_DOC = ("the step on the device's clock (tracekit.traces.steps): from the later of its ProfilerStep#N start "
            "and the previous step's end to the later of its ProfilerStep#N end and the end of the last device "
            "work (kernel, memcpy, memset) it launched; a CPU run: the ProfilerStep#N range")
HOST_STEP_DOC = "the host's CPU range ProfilerStep#N (the host enqueueing the step; shorter on a GPU-bound run)"


# -- host instants on the device's clock -------------------------------------------------------------

def launch_lags(launch_ts: np.ndarray, dev_start: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The clock map of one rank, for :func:`to_device_clock`: ``(launch times, device starts, lags)`` of its
    device operations with a recorded launch, ordered by launch time (stable). An operation's *lag* is
    ``max(0, device start − launch call's start)``: how far the device ran behind the host when it began what
    that launch queued (0 where the clocks disagree by a few µs and the start precedes its launch)."""
    launch_ts, dev_start = np.asarray(launch_ts, dtype=np.int64), np.asarray(dev_start, dtype=np.int64)
    ok = launch_ts >= 0
    lt, st = launch_ts[ok], dev_start[ok]
    if lt.size > 1 and not (lt[1:] >= lt[:-1]).all():
        order = np.argsort(lt, kind="stable")
        lt, st = lt[order], st[order]
    return lt, st, np.maximum(st - lt, 0)


def to_device_clock(t: np.ndarray, lags: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Host instants ``t`` (ns) on the device's clock (``lags`` from :func:`launch_lags`).

    The device runs what the host queued in order, so it reaches the point ``t`` of the host's program
    when it has begun the work queued just before ``t``, and before it begins the work queued just after:

        to_device(t) = min(t + lag(p), start(n))

    ``p``: the device operation whose launch call began last at or before ``t`` (ties: the last in launch
    order), ``lag(p)`` = its device start − its launch call's start (0 when no launch precedes ``t``: nothing
    queued in the window); ``n``: the operation whose launch call began first after ``t`` (no bound when
    none). The bound keeps a host instant before the device start of anything launched after it (the lag of
    a busy stream would otherwise put a collective's launch after its own kernel's start on an idle one).
    ``to_device(t) >= t``. -1 where ``t`` is -1 (absent)."""
    t = np.asarray(t, dtype=np.int64)
    lt, st, lag = lags
    if not lt.size:
        return t
    i = np.searchsorted(lt, t, side="right")  # p = i - 1, n = i
    est = t + np.where(i > 0, lag[np.maximum(i - 1, 0)], 0)
    out = np.where(i < lt.size, np.minimum(est, st[np.minimum(i, lt.size - 1)]), est)
    return np.where(t >= 0, out, -1)
