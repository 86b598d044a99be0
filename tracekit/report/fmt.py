"""Table formatting shared by every text renderer."""

from __future__ import annotations

import pandas as pd
from tabulate import tabulate

from tracekit.report.safe import safe_text

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
    rows = [[safe_text(v) if isinstance(v, str) else v for v in row] for row in obj.values.tolist()]
    return tabulate(rows, headers=[safe_text(str(c)) for c in df.columns],
                    tablefmt="github" if fmt == "markdown" else "simple", floatfmt=".1f", missingval="-")
