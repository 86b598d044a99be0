"""The comparison arithmetic every comparison uses (``tracekit diff``, ``profile --compare``, ``bench diff``):
one definition of a change between a baseline A and a test B, and the long-form metric table.

- :func:`change_pct`: ``100 · (b − a) / |a|``, NaN when ``a`` is 0 or missing (a run diff's ``delta_pct``,
  the variants' ``vs_first_pct``); ``bench diff`` reports it with the sign flipped for sec/iter, so that
  positive means B is faster (:func:`speedup_pct`).
- :func:`long_form`: rows ``metric, a, b, delta, delta_pct`` from ``(metric, a, b)`` pairs.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

DIFF_COLUMNS = ("metric", "a", "b", "delta", "delta_pct")


def as_number(x: Any) -> float:
    """``x`` as a float; NaN for what is not a number (None, text)."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def change_pct(a: Any, b: Any) -> Any:
    """``100 · (b − a) / |a|`` (%, B against baseline A): scalars or aligned Series; NaN where ``a`` is 0."""
    if isinstance(a, pd.Series):
        return 100.0 * (b - a) / a.abs().where(a != 0)
    return 100.0 * (b - a) / abs(a) if a else float("nan")


def speedup_pct(a_sec: float, b_sec: float) -> float | None:
    """% change of a time per iteration from A to B with the sign flipped: positive = B is faster (None
    when A is not positive)."""
    return -change_pct(a_sec, b_sec) if a_sec > 0 else None


def long_form(pairs: list[tuple[str, Any, Any]]) -> pd.DataFrame:
    """The comparison table of ``(metric, a, b)`` pairs: :data:`DIFF_COLUMNS`, ``delta = b − a``,
    ``delta_pct`` = :func:`change_pct`."""
    df = pd.DataFrame([(m, as_number(a), as_number(b)) for m, a, b in pairs], columns=["metric", "a", "b"])
    df["delta"] = df["b"] - df["a"]
    df["delta_pct"] = change_pct(df["a"], df["b"])
    return df[list(DIFF_COLUMNS)]
