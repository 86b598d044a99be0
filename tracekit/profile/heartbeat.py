"""Where each rank is: ``rank<R>.progress`` in the run folder, rewritten at every phase boundary.

A rank of ``tracekit profile`` calls :func:`start` once (before the process group is
created), then :func:`begin_step` / :func:`mark` at phase boundaries: ``init``,
``rendezvous``, ``model build``, then per training step ``forward`` / ``backward`` /
``optimizer`` (and ``profiler export``, ``manifest gather``, ``teardown``, ``done``).
Never per operator: a step costs ``2 x grad_accum + 1`` updates of a few µs each
(one ``pwrite`` of a fixed-size record into an open file; see :data:`RECORD_BYTES`).

The file is a JSON object padded with spaces to :data:`RECORD_BYTES`, so every update
is one write at offset 0 that a reader sees whole (no rename, no new inode), and a
rank killed with SIGKILL leaves its last update in the page cache. Fields::

    rank, pid, host     who
    stage               warmup | timed | bucket_timing | profiled | None (outside the step loops)
    step                1-based step number counted over every stage of the run (None before the first)
    phase               the phase names above
    t_unix              wall-clock time the phase was entered (``time.time()``, seconds)
    updates             how many updates this rank made

The file has no ``.json`` suffix on purpose: ``tracekit analyze`` reads every ``*.json``
in a run folder as a trace.

The same start also asks :mod:`faulthandler` to write every thread's Python stack into
``rank<R>.stacks.txt`` when the rank receives SIGTERM (what torch's elastic agent sends
the surviving ranks when one fails): a rank that answers was alive and the file says
where it waited; a stopped (SIGSTOP) or wedged rank writes nothing.

Test hook: ``TRACEKIT_TEST_FAULT="rank=1,phase=backward,step=5,action=stop"`` makes
that rank, on entering that phase (of that step, when given), ``stop`` (SIGSTOP itself),
``kill`` (SIGKILL itself), ``raise`` (RuntimeError) or ``hang`` (sleep forever).
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any, TextIO

#: size of the record: every update rewrites exactly these bytes at offset 0
RECORD_BYTES = 512
FAULT_ENV = "TRACEKIT_TEST_FAULT"
_PROGRESS = "rank{rank}.progress"
_STACKS = "rank{rank}.stacks.txt"


def progress_filename(rank: int) -> str:
    return _PROGRESS.format(rank=rank)


def stacks_filename(rank: int) -> str:
    return _STACKS.format(rank=rank)


class Heartbeat:
    """One rank's progress file (see the module doc). ``mark`` never raises on I/O errors:
    progress reporting must not be what fails a run."""

    def __init__(self, run_dir: str | os.PathLike[str], rank: int) -> None:
        self.dir = Path(run_dir)
        self.rank = rank
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / progress_filename(rank)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._base = {"rank": rank, "pid": os.getpid(), "host": socket.gethostname()}
        self.stage: str | None = None
        self.step: int | None = None
        self.updates = 0
        self._stacks: TextIO | None = None
        self._fault = parse_fault(os.environ.get(FAULT_ENV), rank)

    def watch_sigterm(self) -> None:
        """Dump every thread's stack into ``rank<R>.stacks.txt`` on SIGTERM, then die as SIGTERM would."""
        try:
            self._stacks = open(self.dir / stacks_filename(self.rank), "w")  # noqa: SIM115 - open for faulthandler
            faulthandler.register(signal.SIGTERM, file=self._stacks, all_threads=True, chain=True)
        except (OSError, ValueError, AttributeError, RuntimeError):
            self._stacks = None  # no SIGTERM on this platform, or not the main thread

    def mark(self, phase: str) -> None:
        """Record that this rank entered ``phase`` (of the current step, if any)."""
        self.updates += 1
        rec = {**self._base, "stage": self.stage, "step": self.step, "phase": phase,
               "t_unix": time.time(), "updates": self.updates}
        data = json.dumps(rec).encode()
        if self._fd is not None and len(data) < RECORD_BYTES:
            try:
                os.pwrite(self._fd, data.ljust(RECORD_BYTES), 0)
            except OSError:
                pass
        if self._fault is not None and self._fault.matches(phase, self.step):
            self._fault.act()

    def close(self, *, clean: bool) -> None:
        """Stop writing; on a clean exit drop the (empty) stacks file and stop watching SIGTERM."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._stacks is not None and clean:
            try:
                faulthandler.unregister(signal.SIGTERM)
                self._stacks.close()
                path = self.dir / stacks_filename(self.rank)
                if path.stat().st_size == 0:
                    path.unlink()
            except OSError:
                pass
            self._stacks = None


class Fault:
    """A test fault (see the module doc): what to do on entering ``phase`` (of ``step``)."""

    ACTIONS = ("stop", "kill", "raise", "hang")

    def __init__(self, phase: str, step: int | None, action: str) -> None:
        if action not in self.ACTIONS:
            raise ValueError(f"{FAULT_ENV}: action must be one of {', '.join(self.ACTIONS)}, not {action!r}")
        self.phase, self.step, self.action = phase, step, action

    def matches(self, phase: str, step: int | None) -> bool:
        return phase == self.phase and (self.step is None or step == self.step)

    def act(self) -> None:
        if self.action == "raise":
            raise RuntimeError(f"tracekit test fault: raised on entering {self.phase}")
        if self.action == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
        elif self.action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        while self.action == "hang":
            time.sleep(3600)


def parse_fault(spec: str | None, rank: int) -> Fault | None:
    """The :class:`Fault` of ``TRACEKIT_TEST_FAULT`` for ``rank`` (None when unset or for another rank)."""
    if not spec:
        return None
    try:
        kv = dict(part.split("=", 1) for part in spec.split(",") if part.strip())
        if int(kv["rank"]) != rank:
            return None
        step = int(kv["step"]) if kv.get("step") else None
        return Fault(kv["phase"], step, kv.get("action", "stop"))
    except (KeyError, ValueError) as e:
        raise ValueError(f"{FAULT_ENV}={spec!r}: expected rank=R,phase=P[,step=N],action=A ({e})") from e


_current: Heartbeat | None = None


def start(run_dir: str | os.PathLike[str] | None, rank: int) -> Heartbeat | None:
    """Open this process's progress file in ``run_dir`` (None: progress is not recorded) and watch SIGTERM."""
    global _current
    if run_dir is None:
        return None
    try:
        _current = Heartbeat(run_dir, rank)
    except OSError:
        _current = None
        return None
    _current.watch_sigterm()
    return _current


def stop(*, clean: bool) -> None:
    global _current
    if _current is not None:
        _current.close(clean=clean)
        _current = None


def set_stage(stage: str | None) -> None:
    """The step loop that follows (``warmup``, ``timed``, ``bucket_timing``, ``profiled``); None after the loops."""
    if _current is not None:
        _current.stage = stage


def begin_step() -> None:
    """A new training step starts: advance the step number (its phases follow with :func:`mark`)."""
    if _current is not None:
        _current.step = (_current.step or 0) + 1


def mark(phase: str) -> None:
    """This rank entered ``phase``; a no-op when no progress file is open (bench, tests)."""
    if _current is not None:
        _current.mark(phase)


def read_progress(run_dir: str | os.PathLike[str]) -> dict[int, dict[str, Any]]:
    """rank -> last progress record of every ``rank<R>.progress`` in ``run_dir`` that can be read.

    A file that is empty or not a JSON object (a rank killed before its first update
    completed) maps to ``{"unreadable": reason}``.
    """
    out: dict[int, dict[str, Any]] = {}
    for p in Path(run_dir).glob("rank*.progress"):
        digits = p.name[4:-len(".progress")]
        if not digits.isdigit():
            continue
        try:
            rec = json.loads(p.read_bytes().strip() or b"null")
        except (OSError, ValueError) as e:
            out[int(digits)] = {"unreadable": f"{p.name}: {e}"}
            continue
        out[int(digits)] = rec if isinstance(rec, dict) else {"unreadable": f"{p.name}: empty"}
    return out
