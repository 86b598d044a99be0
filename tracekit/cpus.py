"""How many CPUs this process may use: the default for every worker count tracekit picks.

``os.cpu_count()`` is the host's count; under ``taskset``, a cgroup cpuset (containers, Kubernetes) or a
Slurm allocation the process may run on far fewer, and one worker per host CPU would oversubscribe the
ones it has (a 128-core node with an 8-core allocation: 128 workers on 8 cores).
"""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """CPUs this process may run on: its affinity mask where the OS has one (Linux), else the host's
    count; at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS and Windows have no affinity mask
        return os.cpu_count() or 1
