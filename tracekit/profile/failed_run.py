"""After a failed launch: diagnose it (:mod:`tracekit.profile.diagnose`) and write ``run.json`` with ``status: failed``.

The failed manifest holds what the launcher knows without the ranks: the command line,
the config, the run's shape, versions, the traces the surviving ranks wrote (kept for
``tracekit analyze``) and the ``failure`` section (:class:`~tracekit.profile.diagnose.Failure`).
"""

from __future__ import annotations

import datetime as _dt
import sys
import time
from pathlib import Path
from typing import Any

from tracekit import __version__
from tracekit.profile import flight_recorder
from tracekit.profile.config import ProfileConfig
from tracekit.profile.diagnose import Failure, collect_facts, diagnose
from tracekit.profile.harness import trace_filename
from tracekit.profile.manifest import SCHEMA_VERSION, write_manifest

#: what a launch leaves in its run folder besides traces and run.json; removed before a new launch
RUN_LEFTOVERS = ("rank*.error.txt", "rank*.progress", "rank*.stacks.txt", f"{flight_recorder.FR_DIR}/*")


def clear_leftovers(out_dir: Path) -> None:
    """Remove what an earlier launch into ``out_dir`` left that would be mistaken for this one's."""
    for pattern in (*RUN_LEFTOVERS, "run.json"):
        for stale in out_dir.glob(pattern):
            if stale.is_file():
                stale.unlink()


def record_failure(config: ProfileConfig, out_dir: Path, exc: BaseException) -> Failure:
    """Diagnose the failed launch of ``config`` into ``out_dir`` (``exc``: what the elastic agent raised) and
    write the failed ``run.json``; return the diagnosis."""
    detected = time.time()
    world = int(config.nproc or 0)
    fr = flight_recorder.summarize(out_dir, world)
    facts = collect_facts(out_dir, world, getattr(exc, "failures", None), fr)
    failure = diagnose(facts, detected_unix=detected, flight_recorder=fr)
    if not any(f.error or f.progress or f.exit_code is not None for f in facts):
        failure.summary = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
    try:
        write_manifest(out_dir, failed_manifest(config, out_dir, failure))
    except (OSError, ValueError) as e:  # the diagnosis still reaches the user through the error message
        failure.summary += f" (run.json not written: {e})"
    return failure


def failed_manifest(config: ProfileConfig, out_dir: Path, failure: Failure) -> dict[str, Any]:
    """``run.json`` of a failed run (see the module doc)."""
    from tracekit.profile.records import versions

    cfg = config.to_dict()
    cfg.pop("command_line", None)
    traces = []
    for r in range(int(config.nproc or 0)):
        p = out_dir / trace_filename(r)
        if p.is_file():
            traces.append({"rank": r, "file": p.name, "bytes": p.stat().st_size})
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tracekit", "version": __version__},
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command_line": config.command_line or sys.argv,
        "status": "failed",
        "config": cfg,
        "run": {"world_size": config.nproc, "device": config.device,
                "backend": "nccl" if config.device == "cuda" else "gloo", "launcher": config.launcher,
                "notice": config.device_notice},
        "versions": versions(),
        "traces": traces,
        "failure": failure.to_dict(),
    }
