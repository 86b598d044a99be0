"""Which rank stopped first when a profiled run fails, and which ranks failed because of it.

Torch-free (``tracekit analyze`` renders the result from ``run.json``). The launcher
gathers, per rank, what the run folder and torch's elastic agent know
(:func:`collect_facts`), and :func:`diagnose` sorts the ranks into

* **culprits** -- the rank(s) that stopped making progress first, by the first rule that names one:

  1. ``raised``: the rank's own error (anything but a communication symptom, see :data:`COMM_ERROR`);
  2. ``killed``: the elastic agent saw it die of a signal (SIGKILL, SIGSEGV...) before it stopped the others;
  3. ``stopped responding``: no error, not reported dead, and it did not answer the launcher's SIGTERM
     with a stack dump (stopped, or wedged in the kernel);
  4. ``behind``: alive, but its last progress position (step, phase) is behind every other rank's;

* **victims** -- every other rank: ``timed out`` / ``lost its connection`` (a communication error of
  its own), or ``stopped by the launcher`` (it answered SIGTERM; its stack says where it waited).

Progress positions compare the steps first, then the phases in :data:`PHASE_ORDER`. Two ranks at the
same position cannot be ordered by progress alone: a rank waiting in a collective stops updating at the
same phase as the rank it waits for, which is why rules 1-3 come first.

"How long ago": the culprit's last progress update relative to the *reference* time -- the first
communication error (the first timeout) when there is one, else the elastic agent's first failure
record, else when the launcher noticed. Wall clocks of different hosts are compared as they are.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: an error that is a symptom of another rank's failure: timeouts and broken connections of the collectives
COMM_ERROR = re.compile(
    r"DistBackendError|DistStoreError|DistNetworkError|timed out|timeout|Connection closed by peer|"
    r"Connection reset|Broken pipe|ECONNRESET|EPIPE|Socket Timeout|NCCL (?:error|communicator was aborted)|"
    r"Watchdog caught collective operation timeout|ProcessGroupNCCL|gloo/transport|recvBytes|sendBytes|monitoredBarrier",
    re.IGNORECASE)
_TIMEOUT = re.compile(r"timed out|timeout", re.IGNORECASE)

#: progress phases in the order a rank goes through them (within one step for the step phases)
PHASE_ORDER = {p: i for i, p in enumerate((
    "init", "rendezvous", "model build", "forward", "backward", "optimizer", "profiler export",
    "manifest gather", "write manifest", "teardown", "done"))}


@dataclass
class RankFacts:
    """What is known of one rank after a failure (every field may be missing)."""

    rank: int
    progress: dict[str, Any] | None = None  # its last heartbeat record (tracekit.profile.heartbeat)
    error: str | None = None  # the last line of rank<R>.error.txt
    error_unix: float | None = None  # when that file was written
    exit_code: int | None = None  # from the elastic agent's failure record, when it has one
    exit_signal: str | None = None
    exit_unix: float | None = None
    answered_sigterm: bool = False  # rank<R>.stacks.txt has a faulthandler dump
    waiting_in: str | None = None  # innermost frame of its main thread in that dump
    last_collective: dict[str, Any] | None = None  # flight recorder: the last collective it entered

    @property
    def comm_error(self) -> bool:
        return bool(self.error and COMM_ERROR.search(self.error))


def position(progress: dict[str, Any] | None) -> tuple[int, int]:
    """Sortable (step, phase) of a progress record; no record is before everything."""
    if not progress or "phase" not in progress:
        return (-1, -1)
    return (int(progress.get("step") or 0), PHASE_ORDER.get(str(progress.get("phase")), -1))


def where(progress: dict[str, Any] | None) -> str:
    """``step 7 (timed) backward`` / ``rendezvous`` / ``no progress recorded``."""
    if not progress or "phase" not in progress:
        return "no progress recorded" if not progress else f"progress unreadable ({progress.get('unreadable')})"
    phase, step, stage = progress.get("phase"), progress.get("step"), progress.get("stage")
    if step is None:
        return str(phase)
    if stage:
        return f"step {step} ({stage}) {phase}"
    return f"{phase} (after step {step})"


@dataclass
class Failure:
    """The ``failure`` section of a failed run's ``run.json`` (see the module doc)."""

    summary: str
    culprits: list[dict[str, Any]] = field(default_factory=list)
    victims: list[dict[str, Any]] = field(default_factory=list)
    reference: str = ""
    reference_unix: float | None = None
    detected_unix: float | None = None
    flight_recorder: dict[str, Any] | None = None
    ranks: list[dict[str, Any]] = field(default_factory=list)
    definition: str = ("culprits: the rank(s) that stopped making progress first (own error, killed by a "
                       "signal, unresponsive to SIGTERM, or behind the others); victims: ranks that failed "
                       "waiting for them; before_failure_s: the culprit's last progress update to the "
                       "reference time")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _reference(facts: list[RankFacts], detected: float) -> tuple[str, float]:
    comm = [(f.error_unix, f.rank) for f in facts if f.comm_error and f.error_unix is not None]
    if comm:
        t, r = min(comm)
        return (f"the first timeout (rank {r})" if _TIMEOUT.search(facts_by(facts)[r].error or "")
                else f"the first communication error (rank {r})"), t
    exits = [(f.exit_unix, f.rank) for f in facts if f.exit_unix is not None]
    if exits:
        t, r = min(exits)
        return f"rank {r}'s failure", t
    return "when the launcher noticed the failure", detected


def facts_by(facts: list[RankFacts]) -> dict[int, RankFacts]:
    return {f.rank: f for f in facts}


def _first_other_failure(f: RankFacts, facts: list[RankFacts]) -> float | None:
    times = [t for g in facts if g.rank != f.rank for t in (g.error_unix, g.exit_unix) if t is not None]
    return min(times) if times else None


def _killed_first(f: RankFacts, facts: list[RankFacts]) -> bool:
    """Died of a signal before any other rank failed (the agent's records have whole seconds: 1 s slack).
    A SIGKILL after another rank failed is the agent's own, for a rank that did not answer its SIGTERM."""
    if not f.exit_signal or f.exit_signal == "SIGTERM" or f.error:
        return False
    first_other = _first_other_failure(f, facts)
    return first_other is None or (f.exit_unix is not None and f.exit_unix <= first_other + 1.0)


def _culprits(facts: list[RankFacts]) -> tuple[str, list[RankFacts]]:
    own = sorted((f for f in facts if f.error and not f.comm_error), key=lambda f: f.error_unix or 0)
    if own:
        return "raised", own
    killed = [f for f in facts if _killed_first(f, facts)]
    if killed:
        return "killed", sorted(killed, key=lambda f: f.exit_unix or 0)
    silent = [f for f in facts if not f.error and not f.answered_sigterm and f.exit_signal in (None, "SIGKILL")
              and (f.progress or {}).get("phase") != "done"]
    if silent and len(silent) < len(facts):
        return "stopped responding", silent
    pos = {f.rank: position(f.progress) for f in facts}
    low = min(pos.values())
    behind = [f for f in facts if pos[f.rank] == low]
    if len(behind) < len(facts):
        return "behind", behind
    return "unknown", []


def _victim_how(f: RankFacts) -> str:
    if f.error and f.comm_error:
        return "timed out" if _TIMEOUT.search(f.error) else "lost its connection"
    if f.error:
        return "failed"
    if f.answered_sigterm or f.exit_signal == "SIGTERM":
        return "was stopped by the launcher"
    if f.exit_signal:
        return f"died of {f.exit_signal}"
    return "was stopped by the launcher (no stack dump)"


def diagnose(facts: list[RankFacts], *, detected_unix: float | None = None,
             flight_recorder: dict[str, Any] | None = None) -> Failure:
    """Sort ``facts`` into culprits and victims (module doc) and write the one-paragraph summary."""
    detected = detected_unix if detected_unix is not None else time.time()
    ref_name, ref_t = _reference(facts, detected)
    how, culprits = _culprits(facts)
    named = {f.rank for f in culprits}
    c_rows = [_row(f, how, ref_t) for f in culprits]
    v_rows = [_row(f, _victim_how(f), ref_t) for f in facts if f.rank not in named]
    summary = _summary(how, c_rows, v_rows, ref_name)
    return Failure(summary=summary, culprits=c_rows, victims=v_rows, reference=ref_name, reference_unix=ref_t,
                   detected_unix=detected, flight_recorder=flight_recorder,
                   ranks=[asdict(f) for f in facts])


def _row(f: RankFacts, how: str, ref_t: float) -> dict[str, Any]:
    p = f.progress or {}
    t = p.get("t_unix")
    return {"rank": f.rank, "how": how, "where": where(f.progress), "stage": p.get("stage"), "step": p.get("step"),
            "phase": p.get("phase"), "last_progress_unix": t,
            "before_failure_s": round(ref_t - t, 3) if isinstance(t, (int, float)) else None,
            "error": f.error, "signal": f.exit_signal, "waiting_in": f.waiting_in,
            "last_collective": f.last_collective}


def _ranks(rows: list[dict[str, Any]]) -> str:
    rs = [r["rank"] for r in rows]
    return f"rank {rs[0]}" if len(rs) == 1 else "ranks " + ", ".join(map(str, rs[:8])) + ("..." if len(rs) > 8 else "")


def _collective(c: dict[str, Any] | None) -> str:
    if not c:
        return ""
    sizes = f", sizes {c['input_sizes']}" if c.get("input_sizes") else ""
    return f" (last collective entered: {c.get('op')} #{c.get('seq')} of group {c.get('group')}{sizes})"


def _summary(how: str, culprits: list[dict[str, Any]], victims: list[dict[str, Any]], ref_name: str) -> str:
    parts = []
    for c in culprits[:4]:
        ago = (f", {c['before_failure_s']:.1f} s before {ref_name}"
               if c["before_failure_s"] is not None and how in ("stopped responding", "behind") else "")
        if how == "raised":
            parts.append(f"rank {c['rank']} failed in {c['where']}: {c['error']}")
        elif how == "killed":
            parts.append(f"rank {c['rank']} was killed by {c['signal']} in {c['where']}")
        elif how == "stopped responding":
            parts.append(f"rank {c['rank']} stopped responding in {c['where']}{ago}")
        else:
            alive = f", alive in {c['waiting_in']}" if c.get("waiting_in") else ""
            parts.append(f"rank {c['rank']} stopped making progress in {c['where']}{ago}{alive}")
    if how == "unknown":
        parts.append("could not tell which rank stopped first (every rank failed the same way at the same point)")
    groups: dict[str, list[dict[str, Any]]] = {}
    for v in victims:
        groups.setdefault(v["how"], []).append(v)
    for vhow, rows in groups.items():
        first = rows[0]
        whom = " waiting for it" if culprits and vhow in ("timed out", "lost its connection") else ""
        place = f" in {first['where']}" if len({r["where"] for r in rows}) == 1 else ""
        coll = _collective(first["last_collective"]) if len({str(r["last_collective"]) for r in rows}) == 1 else ""
        verb = vhow.replace("was ", "were ", 1) if len(rows) > 1 and vhow.startswith("was ") else vhow
        parts.append(f"{_ranks(rows)} {verb}{place}{whom}{coll}")
    return "; ".join(parts)


def collect_facts(run_dir: str | Path, world_size: int, failures: dict[int, Any] | None,
                  flight_recorder: dict[str, Any] | None = None) -> list[RankFacts]:
    """Per-rank facts of a failed run: progress files, error files, stack dumps, the agent's failure records
    (``ChildFailedError.failures``: rank -> ProcessFailure) and the flight-recorder summary."""
    from tracekit.profile.failure import error_filename, last_line
    from tracekit.profile.heartbeat import read_progress, stacks_filename

    run_dir = Path(run_dir)
    progress = read_progress(run_dir)
    last = (flight_recorder or {}).get("last_entered") or {}
    out = []
    for r in range(world_size):
        f = RankFacts(rank=r, progress=progress.get(r), last_collective=last.get(r) or last.get(str(r)))
        err = run_dir / error_filename(r)
        if err.is_file():
            f.error = last_line(err.read_text(errors="replace"))
            f.error_unix = err.stat().st_mtime
        stacks = run_dir / stacks_filename(r)
        if stacks.is_file() and stacks.stat().st_size:
            f.answered_sigterm = True
            f.waiting_in = innermost_frame(stacks.read_text(errors="replace"))
        pf = (failures or {}).get(r)
        if pf is not None:
            code = getattr(pf, "exitcode", None)
            f.exit_code = code
            f.exit_unix = getattr(pf, "timestamp", None)
            if isinstance(code, int) and code < 0:
                try:
                    f.exit_signal = pf.signal_name()
                except Exception:  # noqa: BLE001 - torch's helper; the number is enough
                    f.exit_signal = f"signal {-code}"
        out.append(f)
    return out


_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')


def innermost_frame(dump: str) -> str | None:
    """``file:line in function`` of the innermost frame of the main thread in a faulthandler dump.

    The main thread is the one whose outermost frame is a ``<module>`` (faulthandler marks the
    thread that took the signal as "Current thread", which need not be the main one).
    """
    blocks = [b for b in re.split(r"\n\s*\n|\n(?=(?:Current thread|Thread) 0x)", dump) if "most recent call first" in b]
    frames = [_FRAME.findall(b) for b in blocks]
    main = next((fs for fs in frames if fs and fs[-1][2] == "<module>"), None) or next((fs for fs in frames if fs), None)
    if not main:
        return None
    file, line, func = main[0]
    return f"{Path(file).name}:{line} in {func}"
