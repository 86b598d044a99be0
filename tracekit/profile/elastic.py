"""Start N local ranks of ``python -m <module>`` with torch's elastic launcher (``torchrun --standalone``).

Shared by ``tracekit profile`` and ``tracekit bench``: ``elastic_launch`` with a c10d
rendezvous on port 0 and ``max_restarts=0``, so when one rank fails the agent stops the
others and nothing hangs. Failure reporting (which rank, which error) is the caller's.
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tracekit.cpus import usable_cpus
from tracekit.profile.env import CHILD_MARKER


@contextmanager
def scoped_env(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def quiet_elastic() -> Iterator[None]:
    """The elastic agent logs every phase at INFO/WARNING; keep the console to our summary."""
    lg = logging.getLogger("torch.distributed.elastic")
    saved = lg.level
    lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        lg.setLevel(saved)


def local_launch_config(nproc: int, timeout_s: float, run_prefix: str) -> Any:
    """Elastic ``LaunchConfig`` for ``nproc`` ranks on this host, as ``torchrun --standalone``.

    ``max_restarts=0``: one failing rank stops the others, so nothing hangs.
    """
    from torch.distributed.launcher.api import LaunchConfig

    return LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        run_id=f"{run_prefix}-{uuid.uuid4().hex[:8]}",
        rdzv_backend="c10d",
        # Port 0, as torchrun --standalone: the OS picks a free port when the store
        # binds, so two runs can never race for a port we picked earlier.
        rdzv_endpoint="localhost:0",
        rdzv_configs={"timeout": int(min(timeout_s, 900))},
        max_restarts=0,
        monitor_interval=0.1,
        start_method="spawn",
    )


def launch_module(nproc: int, module: str, env: dict[str, str], timeout_s: float, run_prefix: str) -> None:
    """Run ``nproc`` ranks of ``python -m module`` with ``env`` added; raise what the elastic agent raises.

    Children inherit this process's stdout/stderr. ``OMP_NUM_THREADS`` defaults to the
    cores per rank: N ranks x all cores of oversubscription would starve a small CPU box.
    """
    from torch.distributed.launcher.api import elastic_launch

    lc = local_launch_config(nproc, timeout_s, run_prefix)
    child_env = {
        CHILD_MARKER: "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(max(1, usable_cpus() // nproc))),
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    with scoped_env(child_env), quiet_elastic():
        elastic_launch(lc, sys.executable)("-m", module)
