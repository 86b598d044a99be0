"""The one output path: every command's result goes out through :data:`RENDERERS`, one map from format
name to renderer, with the same choices everywhere (:data:`FORMATS`; the CLI's ``--format`` option is
:func:`tracekit.cli.common.format_options`).

A command wraps its result in an :class:`Output` -- how to write it as text (``table`` / ``markdown``), as a
JSON document, as a CSV table -- and :func:`render` picks the format. A new format is one entry in
:data:`RENDERERS` (and in :data:`FORMATS`), for every command at once. This module stays light (no pandas at
import): the CLI imports :data:`FORMATS` at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracekit.jsonout import dumps

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("table", "markdown", "json", "csv")


def tablefmt(fmt: str) -> str:
    """tabulate's style for a text format: ``github`` for ``markdown``, ``simple`` for ``table``."""
    return "github" if fmt == "markdown" else "simple"


@dataclass(frozen=True)
class Output:
    """A command's result, ready for every format.

    ``text(fmt)``: the human report, ``fmt`` ``table`` or ``markdown``. ``document()``: JSON-safe Python, what
    ``--format json`` prints (written by :func:`tracekit.jsonout.dumps` with ``json_indent``). ``frame()``:
    the table ``--format csv`` prints, unless ``csv()`` writes its own CSV text.
    """

    text: Callable[[str], str]
    document: Callable[[], Any]
    frame: Callable[[], pd.DataFrame] | None = None
    csv: Callable[[], str] | None = None
    json_indent: int = 1


def _csv(out: Output) -> str:
    if out.csv is not None:
        return out.csv()
    assert out.frame is not None, "an Output needs frame or csv"
    return out.frame().to_csv(index=False)


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
