"""Progress bars on stderr for long loads (tqdm), off when stderr is not a terminal.

:func:`bar` is what the loader and the engines call. It shows nothing unless
it is enabled (``enabled=True``, or ``None`` = "stderr is a terminal") *and*
the work takes longer than :data:`DELAY_S`: a short analysis prints no bar, a
load of many ranks or large files does. Bars count bytes of trace files, so a
2-rank × 70 MB load and a 2048-rank × 40 KB load both move smoothly.
"""

from __future__ import annotations

import sys
from typing import Any

#: seconds before a bar appears (tqdm's ``delay``): quick runs stay silent
DELAY_S = 1.0


class _Silent:
    """The bar when progress is off: same calls, no output, no tqdm import."""

    def update(self, n: float = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def wanted(enabled: bool | None) -> bool:
    """``enabled``, or with ``None`` whether stderr is a terminal."""
    if enabled is not None:
        return enabled
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # closed or odd stream
        return False


def bar(total_bytes: int, desc: str, enabled: bool | None = None) -> Any:
    """A byte-counting progress bar on stderr (``update(nbytes)``, ``close()``; a context manager)."""
    if not wanted(enabled) or total_bytes <= 0:
        return _Silent()
    from tqdm import tqdm

    class Bar(tqdm):
        # no monitor thread: tracekit forks worker processes while a bar is open, and
        # forking a process with extra threads risks children that hang on a lock
        monitor_interval = 0

    return Bar(total=total_bytes, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr,
                delay=DELAY_S, leave=False, dynamic_ncols=True)
