"""The "Run failed" section of a failed run's report: who stopped first, where, and what the others waited for.

Reads the ``failure`` section of ``run.json`` (:mod:`tracekit.profile.diagnose`), which the
analysis passes on as ``meta["failure"]``.
"""

from __future__ import annotations

from typing import Any

from tracekit.analyses.registry import View
from tracekit.traces import cols as C

COLUMNS = ("rank", "role", "how", "where", "before_failure_s", "detail", "last_collective")


def _collective(c: dict[str, Any] | None) -> str:
    if not c:
        return ""
    sizes = f" {c['input_sizes']}" if c.get("input_sizes") else ""
    return f"{c.get('op')} #{c.get('seq')} ({c.get('group')}){sizes}"


def _row(r: dict[str, Any], role: str) -> dict[str, Any]:
    detail = r.get("error") or (f"alive in {r['waiting_in']}" if r.get("waiting_in") else "")
    if not detail and r.get("signal"):
        detail = (f"did not answer SIGTERM; the launcher sent {r['signal']}" if r.get("how") == "stopped responding"
                  else f"died of {r['signal']}")
    return {"rank": r.get("rank"), "role": role, "how": r.get("how"), "where": r.get("where"),
            "before_failure_s": r.get("before_failure_s"), "detail": detail,
            "last_collective": _collective(r.get("last_collective"))}


def failure_views(failure: dict[str, Any]) -> list[View]:
    """Two sections: the summary line; one row per rank (culprits first) with the flight recorder's word. A
    diagnosis that found no failed rank (every rank reached 'done') is one section headed by that finding."""
    if not failure.get("culprits") and not failure.get("victims"):
        return [View("No rank failed", [str(failure.get("summary", ""))])]
    rows = [_row(r, "stopped first") for r in failure.get("culprits") or []]
    rows += [_row(r, "failed because of it" if rows else "failed") for r in failure.get("victims") or []]
    notes = [f"before_failure_s: the rank's last progress update before {failure.get('reference') or 'the failure'}"]
    fr = failure.get("flight_recorder") or {}
    if fr.get("unavailable"):
        notes.append(f"flight recorder: {fr['unavailable']}")
    elif fr:
        missing = fr.get("missing_dumps") or []
        notes.append(f"flight recorder (read with {fr.get('analyser')}): dumps from ranks {fr.get('dumps')}"
                     + (f"; none from {missing} (stopped or killed before they could dump)" if missing else ""))
        for c in (fr.get("not_joined") or [])[:5]:
            notes.append(f"collective {c.get('op')} #{c.get('seq')} of {c.get('group')} never joined by "
                         f"ranks {c.get('missing_ranks')}")
    # columns typed as pd.DataFrame(rows) types them (ranks int64, seconds float64, text object)
    body = {c: C.column([r[c] for r in rows]) for c in COLUMNS} if rows else C.empty(COLUMNS)
    return [View("Run failed", [str(failure.get("summary", ""))]),
            View("Run failed: ranks", body, note="; ".join(notes))]
