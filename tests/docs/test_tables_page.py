"""The docs' table reference (docs/reference/tables.md) is generated from the column declarations:
fail when they drift."""

from __future__ import annotations

from pathlib import Path

from tracekit.analyses import registry

PAGE = Path(__file__).parents[2] / "docs" / "reference" / "tables.md"


def test_docs_tables_match_the_column_docs() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text == registry.update_readme(text), (
        "docs/reference/tables.md differs from the column docs in tracekit/analyses/: "
        "run `python -m tracekit.analyses.registry --readme docs/reference/tables.md` and review the diff")


def test_every_public_column_is_on_the_page() -> None:
    section = registry.readme_section()
    for name in registry.public_names():
        t = registry.tables()[name]
        assert f"## `{name}`" in section
        for c in t.columns:
            assert f"| `{c.name}` | {c.unit} |" in section


def test_update_replaces_only_between_markers() -> None:
    doc = f"head\n{registry.README_BEGIN}\nstale\n{registry.README_END}\ntail\n"
    out = registry.update_readme(doc)
    assert out.startswith("head\n") and out.endswith("\ntail\n") and "stale" not in out
    assert "## `ranks`" in out
