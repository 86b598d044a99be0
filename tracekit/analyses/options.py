"""What the tables compute: :class:`AnalyzeOptions` (kept apart from the registry so that the runner can
build one without importing pandas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class AnalyzeOptions:
    """Options every table may read (``ctx.options``).

    ``comm_pattern``: extra regex of kernel names that count as communication. ``align``: clock
    alignment across ranks -- ``auto`` aligns only when the manifest says the ranks ran on more than one
    host; ``on`` always, ``off`` never. ``hta``: also run HolisticTraceAnalysis (table ``hta``). ``peaks``: the
    device peaks of ``--peaks FILE`` (table ``ops``).
    """

    comm_pattern: str | None = None
    align: Literal["auto", "on", "off"] = "auto"
    hta: bool = False
    #: ``--peaks FILE``'s devices (:func:`tracekit.analyses.peaks.load_peaks`), tried before the built-in table
    peaks: tuple[Any, ...] | None = None
