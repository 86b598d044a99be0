"""The what-if page's figure tables, written from the code that quotes them (docs/whatif.md).

``tracekit whatif`` quotes the trust regimes and the scenario checks and rankings, read from the committed
evidence files (:mod:`tracekit.replay.evidence`); the tests recompute those from the committed result files. The page shows the same tables between markers
(``<!-- whatif:NAME:begin -->`` ... ``<!-- whatif:NAME:end -->``, NAME one of :data:`SECTIONS`), generated here,
so the page cannot drift from what the tool prints; ``tests/replay/test_docs_tables.py`` fails when it does::

    python -m tracekit.replay.docs_tables --write docs/whatif.md
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

from tracekit.analyses.registry import rewrite_page
from tracekit.replay import evidence


def _md(headers: list[str], rows: list[list[object]]) -> str:
    """A Markdown (GitHub) table; a ``|`` inside a cell is escaped, or it would end the cell."""
    def esc(v: object) -> str:
        return str(v).replace("|", "\\|")

    return tabulate([[esc(v) for v in r] for r in rows], headers=[esc(h) for h in headers], tablefmt="github",
                    disable_numparse=True)


def _range(low: float, high: float) -> str:
    """An idle-share range as the page writes it."""
    if low <= 0.0 and high > 100.0:
        return "any"
    if low <= 0.0:
        return f"< {high:g} %"
    return f"≥ {low:g} %"


def trust_table() -> str:
    """The regimes: their idle shares, runs, |error| median and max, and the multi-rank runs' lean."""
    rows = []
    data = evidence.regimes()
    for r in data.regimes:
        m = r.multi_rank or evidence.MultiRank(0, 0, float("nan"))
        rows.append([f"`{r.name}`", _range(r.idle_pct_low, r.idle_pct_high),
                     _range(r.window_idle_pct_low, r.window_idle_pct_high), r.runs, f"{r.error_pct_median:.1f} %",
                     f"{r.error_pct_max:.1f} %", m.runs, m.below, f"{m.error_pct_median:+.1f} %"])
    cpu = data.cpu_runs
    rows.append(["CPU (gloo): none", "–", "–", cpu.runs, f"{cpu.error_pct_median:.1f} %", f"{cpu.error_pct_max:.1f} %",
                 "–", "–", "–"])
    return _md(["regime", "predicted GPU idle", "window GPU idle", "runs", "|error| median", "|error| max",
                "of them multi-rank", "predicted below measured", "multi-rank median signed error"], rows)


def _pts(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}"


def checks_table() -> str:
    """One row per scenario check: the change, where it was made for real, runs, delta error, verdict."""
    rows = [[f"`{c.change.replace('_', '-')}`", c.setting, c.runs or "–", _pts(c.delta_error_pp_median),
             _pts(c.delta_error_pp_max), c.verdict] for c in evidence.checks()]
    return _md(["change", "where it was made for real", "runs", "median points", "max points", "verdict"], rows)


def rankings_table() -> str:
    """One row per paired setting: the separated pairs the predictions ordered as measured."""
    rows = [[k.setting, f"{k.ranked} of {k.pairs}", k.misses] for k in evidence.rankings()]
    return _md(["paired timings", "ranked as measured", "the pairs missed"], rows)


#: the generated sections of the page, by marker name
SECTIONS: dict[str, Callable[[], str]] = {"trust": trust_table, "checks": checks_table, "rankings": rankings_table}


def markers(name: str) -> tuple[str, str]:
    return f"<!-- whatif:{name}:begin -->", f"<!-- whatif:{name}:end -->"


def update(text: str) -> str:
    """``text`` (the page) with each section between its markers regenerated; a missing marker is an error."""
    for name, make in SECTIONS.items():
        begin, end = markers(name)
        i, j = text.find(begin), text.find(end)
        if i < 0 or j < i:
            raise ValueError(f"the page has no {begin} ... {end} markers")
        text = text[:i] + f"{begin}\n\n{make()}\n\n" + text[j:]
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write the what-if page's figure tables (trust regimes, scenario "
                                             "checks, rankings) between its markers. Example: "
                                             "python -m tracekit.replay.docs_tables --write docs/whatif.md")
    ap.add_argument("--write", type=Path, required=True)
    args = ap.parse_args(argv)
    print(f"{'updated' if rewrite_page(args.write, update) else 'unchanged'}: {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
