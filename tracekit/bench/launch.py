"""Start N local ranks of a ``python -m <module>`` worker with torch's elastic launcher.

Same machinery as :func:`tracekit.profile.launcher.run_profile` (``elastic_launch`` with a
standalone c10d rendezvous on a free port, ``max_restarts=0``): when one rank fails the
agent stops the others, so a failing point never hangs the sweep. Workers write
``rank<R>.error.txt`` into ``run_dir`` on an exception; :func:`launch_local` turns the
earliest one into a one-line error.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

from tracekit.profile.env import CHILD_MARKER, free_port
from tracekit.profile.launcher import _last_line, _quiet_elastic, _scoped_env


def error_lines(run_dir: Path) -> list[tuple[int, str]]:
    """``(rank, last line)`` of every ``rank<R>.error.txt`` in ``run_dir``, earliest written first."""
    found = []
    for p in run_dir.glob("rank*.error.txt"):
        m = re.match(r"rank(\d+)\.error\.txt", p.name)
        if m:
            found.append((p.stat().st_mtime, int(m.group(1)), _last_line(p.read_text(errors="replace"))))
    return [(r, line) for _, r, line in sorted(found)]


def launch_local(nproc: int, module: str, env: dict[str, str], run_dir: Path, timeout_s: float) -> str | None:
    """Run ``nproc`` ranks of ``python -m module``; None on success, else a one-line error."""
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    run_dir.mkdir(parents=True, exist_ok=True)
    lc = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        run_id=f"tracekit-bench-{uuid.uuid4().hex[:8]}",
        rdzv_backend="c10d",
        rdzv_endpoint=f"127.0.0.1:{free_port()}",
        rdzv_configs={"timeout": int(min(timeout_s, 900))},
        max_restarts=0,
        monitor_interval=0.1,
        start_method="spawn",
    )
    child_env = {
        CHILD_MARKER: "1",
        "TRACEKIT_BENCH_RUN_DIR": str(run_dir),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc))),
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    # Children inherit this process's stdout/stderr: keep their chatter off our stdout table.
    with _scoped_env(child_env), _quiet_elastic():
        try:
            elastic_launch(lc, sys.executable)("-m", module)
        except ChildFailedError as e:
            return _describe(run_dir, e)
        except Exception as e:  # noqa: BLE001 - rendezvous and agent errors
            return _describe(run_dir, e)
    return None


def _describe(run_dir: Path, exc: Exception) -> str:
    errs = error_lines(run_dir)
    if errs:
        rank, line = errs[0]
        return f"rank {rank}: {line}"
    failures = getattr(exc, "failures", {}) or {}
    if failures:
        rank, f = min(failures.items(), key=lambda kv: getattr(kv[1], "timestamp", 0))
        msg = getattr(f, "message", "") or ""
        if isinstance(msg, dict):
            msg = msg.get("message", "") or str(msg)
        return f"rank {rank}: {_last_line(str(msg)) or 'exit code ' + str(getattr(f, 'exitcode', '?'))}"
    return f"{type(exc).__name__}: {_last_line(str(exc))}"


def write_error(run_dir: str | None, rank: int, exc: BaseException) -> None:
    """Called by a worker on failure: ``<run_dir>/rank<R>.error.txt`` with the traceback."""
    import traceback

    if not run_dir:
        return
    try:
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        (Path(run_dir) / f"rank{rank}.error.txt").write_text(text)
    except OSError:
        pass
