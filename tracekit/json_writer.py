"""The one JSON writer of tracekit's outputs (``--format json`` of every command, ``bench --json`` files).

It takes JSON-safe Python (see :func:`tracekit.jsonable.jsonable` for results holding DataFrames or numpy
scalars) and writes UTF-8 JSON, indented, with msgspec. It imports nothing but msgspec, so the workload
side (``tracekit bench``) writes its files with it without pulling in pandas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec


def dumps(doc: Any, indent: int = 1, default: Callable[[Any], Any] | None = None) -> str:
    """``doc`` as indented JSON text. ``default`` converts what msgspec cannot encode (e.g. ``str``);
    without it such a value raises ``TypeError``."""
    return msgspec.json.format(msgspec.json.encode(doc, enc_hook=default).decode(), indent=indent)
