"""After a failed launch: diagnose it (:mod:`tracekit.profile.diagnose`) and write ``run.json`` with ``status: failed``.

The failed manifest holds what the launcher knows without the ranks: the command line,
the config, the run's shape, versions, the traces the surviving ranks wrote (kept for
``tracekit analyze``) and the ``failure`` section (:class:`~tracekit.profile.diagnose.Failure`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tracekit.profile import flight_recorder
from tracekit.profile.config import ProfileConfig
from tracekit.profile.diagnose import Failure, collect_facts, diagnose
from tracekit.profile.harness import trace_filename
from tracekit.traces.manifest import write_manifest

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
    from tracekit.profile.records import manifest_header, versions

    traces = []
    for r in range(int(config.nproc or 0)):
        p = out_dir / trace_filename(r)
        if p.is_file():
            traces.append({"rank": r, "file": p.name, "bytes": p.stat().st_size})
    return {
        **manifest_header(config, "failed"),
        "run": {"world_size": config.nproc, "device": config.device,
                "backend": "nccl" if config.device == "cuda" else "gloo", "launcher": config.launcher,
                "notice": config.device_notice},
        "versions": versions(),
        "traces": traces,
        "failure": failure.to_dict(),
    }


def diagnose_folder(run_dir: str | Path, world_size: int | None = None) -> dict[str, Any]:
    """The ``failure`` section of a run folder, for runs no tracekit launcher watched (torchrun, srun).

    A ``run.json`` with ``status: failed`` already holds the launcher's diagnosis (it also saw the
    elastic agent's exit records): returned as is. Otherwise the folder's progress, error, stack and
    flight-recorder files are diagnosed without exit records; the reference time falls back to the
    newest of those files. ``world_size``: default ``run.json``'s, else the highest rank seen + 1
    (a rank that wrote nothing at all cannot be counted then). Raises TraceInputError when the folder
    holds none of those files.
    """
    import re

    from tracekit.errors import TraceInputError
    from tracekit.traces.manifest import read_manifest

    folder = Path(run_dir)
    m = read_manifest(folder)
    if m is not None and m.status == "failed" and m.failure:
        return m.failure
    files = [p for pat in ("rank*.progress", "rank*.error.txt", "rank*.stacks.txt", f"{flight_recorder.FR_DIR}/*")
             for p in folder.glob(pat)]
    ranks = {int(g) for p in files if (g := next(iter(re.findall(r"rank_?(\d+)", p.name)), None)) is not None}
    if not ranks and m is not None and m.status == "ok":
        return Failure(summary="no rank failed: run.json records a finished run (status ok)").to_dict()
    if not ranks:
        raise TraceInputError(folder, "no rank<R>.progress, rank<R>.error.txt or fr/ files: "
                                      "not the folder of a tracekit profile run")
    world = world_size or (m.run.world_size if m is not None and m.run and m.run.world_size else max(ranks) + 1)
    fr = flight_recorder.summarize(folder, world)
    facts = collect_facts(folder, world, None, fr)
    newest = max(p.stat().st_mtime for p in files)
    if all((f.progress or {}).get("phase") == "done" and not f.error for f in facts):
        return Failure(summary=f"no rank failed: all {world} ranks reached 'done'", detected_unix=newest,
                       flight_recorder=fr).to_dict()
    return diagnose(facts, detected_unix=newest, flight_recorder=fr).to_dict()
