"""Start N local ranks of a ``python -m <module>`` worker with torch's elastic launcher.

Same machinery as ``tracekit profile`` (:func:`tracekit.profile.elastic.launch_module`:
``elastic_launch`` with a standalone c10d rendezvous on port 0, ``max_restarts=0``): when one rank fails the
agent stops the others, so a failing point never hangs the sweep. Workers write
``rank<R>.error.txt`` into ``run_dir`` on an exception; :func:`launch_local` turns the
earliest one into a one-line error.
"""

from __future__ import annotations

from pathlib import Path

from tracekit.profile.elastic import launch_module
from tracekit.profile.failure import describe_failure


def launch_local(nproc: int, module: str, env: dict[str, str], run_dir: Path, timeout_s: float) -> str | None:
    """Run ``nproc`` ranks of ``python -m module``; None on success, else a one-line error."""
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        launch_module(nproc, module, {"TRACEKIT_BENCH_RUN_DIR": str(run_dir), **env}, timeout_s, "tracekit-bench")
    except Exception as e:  # noqa: BLE001 - a failed rank (ChildFailedError), rendezvous and agent errors
        return _describe(run_dir, e)
    return None


def _describe(run_dir: Path, exc: Exception) -> str:
    rank, line = describe_failure(run_dir, exc)
    return line if rank is None else f"rank {rank}: {line}"
