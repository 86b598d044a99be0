"""The one output path: every command's result goes out through :data:`RENDERERS`, one map from format
name to renderer, with the same choices everywhere (:data:`FORMATS`; the CLI's ``--format`` option is
:func:`tracekit.cli.common.format_options`).

A command wraps its result in an :class:`Output` -- how to write it as text (``table`` / ``markdown``), as a
JSON document, as a CSV table -- and :func:`render` picks the format. A new format is one entry in
:data:`RENDERERS` (and in :data:`FORMATS`), for every command at once. This module stays light (no pandas at
import): the CLI imports :data:`FORMATS` at start-up.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracekit.json_writer import dumps

if TYPE_CHECKING:
    import numpy as np

FORMATS = ("table", "markdown", "json", "csv")


def tablefmt(fmt: str) -> str:
    """tabulate's style for a text format: ``github`` for ``markdown``, ``simple`` for ``table``."""
    return "github" if fmt == "markdown" else "simple"


@dataclass(frozen=True)
class Output:
    """A command's result, ready for every format.

    ``text(fmt)``: the human report, ``fmt`` ``table`` or ``markdown``. ``document()``: JSON-safe Python, what
    ``--format json`` prints (written by :func:`tracekit.json_writer.dumps` with ``json_indent``). ``frame()``:
    the table ``--format csv`` prints (a DataFrame, or :data:`~tracekit.traces.cols.Cols` written by
    :func:`csv_text`), unless ``csv()`` writes its own CSV text.
    """

    text: Callable[[str], str]
    document: Callable[[], Any]
    frame: Callable[[], Any] | None = None
    csv: Callable[[], str] | None = None
    json_indent: int = 1


def _csv(out: Output) -> str:
    if out.csv is not None:
        return out.csv()
    assert out.frame is not None, "an Output needs frame or csv"
    t = out.frame()
    return csv_text(t) if isinstance(t, Mapping) else t.to_csv(index=False)


def csv_text(t: Mapping[str, np.ndarray]) -> str:
    """A table of numpy columns as CSV text, byte for byte what ``DataFrame.to_csv(index=False)`` writes for the
    frame of those columns: a header row; floats as numpy spells them (shortest round trip, ``1e-05``), ints
    and flags as Python's ``str``, other values through the csv module (``str``); a missing value (NaN, None)
    an empty field; fields quoted only where needed."""
    import numpy as np  # here: the CLI imports this module at start-up (--help, profile), without numpy

    from tracekit.traces.cols import isna  # (and without tracekit.traces)

    names = list(t)
    columns = [_csv_column(np.asarray(t[k]), isna(np.asarray(t[k]))) for k in names]
    buf = io.StringIO()
    # pandas' writer: the csv module with these settings, lines ended by os.linesep
    w = csv.writer(buf, lineterminator=os.linesep, delimiter=",", quoting=csv.QUOTE_MINIMAL, quotechar='"',
                   doublequote=True, escapechar=None)
    w.writerow(names)
    w.writerows(zip(*columns))
    return buf.getvalue()


def _csv_column(a: np.ndarray, miss: np.ndarray) -> list[Any]:
    """One column's CSV fields (pandas' ``get_values_for_csv`` with its defaults: floats through
    ``astype(str)``, the rest as objects, missing values (``miss``) ``""``)."""
    if a.dtype.kind == "f":
        out = a.astype(str).astype(object)
    elif miss.any():
        out = a.astype(object)
    else:
        return a.tolist()
    out[miss] = ""
    return out.tolist()


#: format name -> renderer: the only place a format is turned into text
RENDERERS: dict[str, Callable[[Output], str]] = {
    "table": lambda out: out.text("table"),
    "markdown": lambda out: out.text("markdown"),
    "json": lambda out: dumps(out.document(), out.json_indent, default=str),
    "csv": _csv,
}


def render(out: Output, fmt: str) -> str:
    """``out`` in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return RENDERERS[fmt](out)
