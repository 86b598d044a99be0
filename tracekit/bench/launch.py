"""Start N local ranks of a ``python -m <module>`` worker with torch's elastic launcher.

Same machinery as :func:`tracekit.profile.launcher.run_profile` (``elastic_launch`` with a
standalone c10d rendezvous on port 0, ``max_restarts=0``): when one rank fails the
agent stops the others, so a failing point never hangs the sweep. Workers write
``rank<R>.error.txt`` into ``run_dir`` on an exception; :func:`launch_local` turns the
earliest one into a one-line error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tracekit.profile.env import CHILD_MARKER
from tracekit.profile.failure import describe_failure
from tracekit.profile.launcher import _quiet_elastic, _scoped_env, local_launch_config


def launch_local(nproc: int, module: str, env: dict[str, str], run_dir: Path, timeout_s: float) -> str | None:
    """Run ``nproc`` ranks of ``python -m module``; None on success, else a one-line error."""
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import elastic_launch

    run_dir.mkdir(parents=True, exist_ok=True)
    lc = local_launch_config(nproc, timeout_s, "tracekit-bench")
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
    rank, line = describe_failure(run_dir, exc)
    return line if rank is None else f"rank {rank}: {line}"
