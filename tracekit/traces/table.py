"""Codes and categories of the decoder's string columns (the collective args), as the event table's
Categoricals hold them: :meth:`tracekit.traces.traceset.RankTrace.column` and ``.events`` use them.
Importing this module does not import pandas (:func:`categorical` does, when called).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def str_codes(values: list[Any]) -> tuple[np.ndarray, list[str]] | None:
    """``(codes, sorted distinct values)`` of a list of str/None (None: code -1), as int64; None when
    a value is neither (mixed types do not sort: the caller takes ``pd.Categorical``'s path)."""
    distinct = {v for v in values if v is not None}
    if not all(type(v) is str for v in distinct):  # checked before sorting: mixed types do not sort
        return None
    uniq = sorted(distinct)
    index = {v: i for i, v in enumerate(uniq)}
    codes = np.fromiter((-1 if v is None else index[v] for v in values), dtype=np.int64, count=len(values))
    return codes, uniq


def categorical(values: list[Any]) -> pd.Categorical:
    """``pd.Categorical(values)`` (categories sorted, None missing) for a list of str/None, without
    pandas' general factorize: five such columns per rank were most of this module's cost on small ranks."""
    import pandas as pd  # only for a caller that builds the event table, or for mixed-type values

    sc = str_codes(values)
    if sc is None:
        return pd.Categorical(values)
    codes, uniq = sc
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniq))
