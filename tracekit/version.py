"""tracekit's version, read once from the installed distribution's metadata.

A source checkout that was never installed (the package on ``sys.path`` only) has no metadata: then
``pyproject.toml``'s ``version`` is read, the one place the number is written.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path


@functools.cache
def version() -> str:
    """The version string, e.g. ``"0.1.0"`` (``"0+unknown"`` without metadata or ``pyproject.toml``)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("tracekit")
    except PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        found = re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.M) if pyproject.is_file() else None
        return found.group(1) if found else "0+unknown"
