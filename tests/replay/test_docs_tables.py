"""docs/whatif.md's figure tables are written from the code that quotes them (tracekit.replay.docs_tables), and
the README's one-line summary quotes the same figures: fail when either drifts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.replay import docs_tables, trust, validation

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "whatif.md"


def test_whatif_page_tables_match_the_code() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text == docs_tables.update(text), (
        "docs/whatif.md's tables differ from tracekit/replay/trust.py and validation.py: run "
        "`python -m tracekit.replay.docs_tables --write docs/whatif.md` and review the diff")


def test_the_tables_carry_the_figures() -> None:
    cpu = next(r for r in trust.REGIMES if r.name == "cpu-bound")
    row = next(line for line in docs_tables.trust_table().splitlines() if "`cpu-bound`" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:6] == [str(cpu.runs), f"{cpu.error_pct_median:.1f} %", f"{cpu.error_pct_max:.1f} %"]
    assert docs_tables.checks_table().count("\n") == len(validation.CHECKS) + 1  # header, rule, one row each


def test_update_needs_every_marker() -> None:
    with pytest.raises(ValueError, match="whatif:trust:begin"):
        docs_tables.update("no markers here")


def test_readme_quotes_the_trust_figures() -> None:
    """The README's what-if line: the benchmark runs behind the regimes, the GPU-bound and CPU-bound figures and
    the multi-rank lean, as trust.py has them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    gpu = next(r for r in trust.REGIMES if r.name == "gpu-bound")
    cpu = next(r for r in trust.REGIMES if r.name == "cpu-bound")
    total = sum(r.runs for r in trust.REGIMES)
    assert f"on {total} benchmark runs" in readme
    assert f"median {gpu.error_pct_median:.1f} % (max {gpu.error_pct_max:.1f} %) on GPU-bound steps" in readme
    assert f"{cpu.error_pct_median:.1f} % (max {cpu.error_pct_max:.0f} %" in readme
    assert f"several ranks lean fast, median {cpu.multi_rank.error_pct_median:+.1f} %".replace("-", "−") in readme
