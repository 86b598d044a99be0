"""Table formatting shared by every text renderer."""

from __future__ import annotations

import pandas as pd
from tabulate import tabulate


def table(df: pd.DataFrame | None, fmt: str, *, empty: str = "(none)") -> str:
    """A DataFrame as a tabulate table (``markdown`` -> github style, else simple).

    Rows go to tabulate as Python objects so int columns stay ints (tabulate would
    upcast a DataFrame's ``.values`` to float) and NaN/None print as ``-``.
    """
    if df is None or df.empty:
        return empty
    obj = df.astype(object).where(df.notna(), None)
    return tabulate(obj.values.tolist(), headers=[str(c) for c in df.columns],
                    tablefmt="github" if fmt == "markdown" else "simple", floatfmt=".1f", missingval="-")
