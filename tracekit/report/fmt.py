"""Table formatting shared by every text renderer."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tracekit.report.safe import safe_text

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


def table(df: pd.DataFrame | None, fmt: str, *, empty: str = "(none)") -> str:
    """A DataFrame as a tabulate table (``markdown`` -> github style, else simple).

    Rows go to tabulate as Python objects so int columns stay ints (tabulate would
    upcast a DataFrame's ``.values`` to float) and NaN/None print as ``-``.
    """
    if df is None or df.empty:
        return empty
    obj = df.astype(object).where(df.notna(), None)
    # names escaped per cell, before tabulate (it would take a CR for a line break); on the
    # Python rows, as DataFrame.map would re-infer dtypes (ints with a None become floats)
    rows = [[shorten(safe_text(v)) if isinstance(v, str) else v for v in row] for row in obj.values.tolist()]
    return tabulate(rows, headers=[safe_text(str(c)) for c in df.columns],
                    tablefmt="github" if fmt == "markdown" else "simple",
                    floatfmt=[float_format(str(c)) for c in df.columns], missingval="-")


#: columns that hold a ratio (``profiled / unprofiled``): printed as the run summary prints them (``0.74x``)
RATIO_COLUMNS = frozenset({"ratio"})


def float_format(column: str) -> str:
    """The format of a float column in the text tables: 2 decimals for ratios, else 1."""
    return ".2f" if column in RATIO_COLUMNS or column.endswith("_ratio") else ".1f"
