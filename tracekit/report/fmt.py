"""Table formatting shared by every text renderer."""

from __future__ import annotations

from typing import Any

import numpy as np

from tracekit.report.safe import safe_text
from tracekit.traces import cols as C

#: longest cell of a text or markdown table; longer ones (inductor's fused kernel names run to 300+
#: characters) keep their start and end around an ellipsis. JSON and CSV keep every value whole.
MAX_CELL = 120


def tabulate(*args: Any, **kwargs: Any) -> str:
    """``tabulate.tabulate``, imported on first use: ``--format json`` and ``csv`` never load it (with wcwidth,
    ~30 ms of a command's start)."""
    from tabulate import tabulate as _tabulate  # noqa: PLC0415 - deferred on purpose (see above)

    return _tabulate(*args, **kwargs)


def shorten(text: str, limit: int = MAX_CELL) -> str:
    """``text`` if it fits ``limit`` characters, else its first and last characters around ``…``."""
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    return f"{text[:head]}…{text[len(text) - (limit - 1 - head):]}"


def table(t: Any, fmt: str, *, empty: str = "(none)") -> str:
    """A table (:data:`~tracekit.traces.cols.Cols` or a DataFrame) as a tabulate table (``markdown`` -> github
    style, else simple); ``empty`` when it is missing or has no rows or no columns.

    Rows go to tabulate as Python objects so int columns stay ints (tabulate would
    upcast a 2-D array to float) and NaN/None print as ``-``.
    """
    t = C.as_cols(t) if t is not None else None
    if t is None or not len(t) or not C.nrows(t):
        return empty
    # names escaped per cell, before tabulate (it would take a CR for a line break)
    columns = [[shorten(safe_text(v)) if isinstance(v, str) else v for v in cell_values(a)] for a in t.values()]
    return tabulate(list(map(list, zip(*columns))), headers=[safe_text(str(c)) for c in t],
                    tablefmt="github" if fmt == "markdown" else "simple",
                    floatfmt=[float_format(str(c)) for c in t], missingval="-")


def cell_values(a: np.ndarray) -> list[Any]:
    """A column as Python values for a text table, missing ones (NaN, None) as None: what
    ``df.astype(object).where(df.notna(), None)`` made of it (numbers as Python ints and floats)."""
    a = np.asarray(a)
    miss = C.isna(a)
    if not miss.any():
        return a.tolist()
    out = a.astype(object)
    out[miss] = None
    return out.tolist()


#: columns that hold a ratio (``profiled / unprofiled``): printed as the run summary prints them (``0.74x``)
RATIO_COLUMNS = frozenset({"ratio"})


def float_format(column: str) -> str:
    """The format of a float column in the text tables: 2 decimals for ratios, else 1."""
    return ".2f" if column in RATIO_COLUMNS or column.endswith("_ratio") else ".1f"
