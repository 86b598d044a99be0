"""The table registry: declarations, the library result equals ``--format json``, every table in every format."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import tracekit
from tracekit.analyses import registry
from tracekit.analyses.registry import Column, RegistryError, Table
from tracekit.cli import main
from tracekit.report.render import FORMATS, render

ROOT = Path(__file__).parents[2]
#: every committed trace set (a folder holding rank files)
SAMPLES = sorted({p.parent for p in [*ROOT.glob("sample_traces/**/rank*.trace.json*"),
                                     *ROOT.glob("tests/data/reference/**/rank*.trace.json*")]})
REF = ROOT / "tests" / "data" / "reference"


def _cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def eager() -> tracekit.analyses.registry.AnalysisResult:
    return tracekit.analyze(REF / "eager")


# -- declarations --------------------------------------------------------------------------------


def test_every_table_is_declared_with_documented_units() -> None:
    tabs = registry.tables()
    assert {"ranks", "steps", "collectives", "buckets", "instances", "waits", "bucket_timeline", "graph_breaks",
            "break_boundaries", "manifest_check", "findings", "hta"} <= set(tabs)
    for t in tabs.values():
        assert t.title and t.columns
        for c in t.columns:
            assert c.unit in registry.UNITS and c.doc.strip(), (t.name, c.name)


def _t(name: str, scope: str = "run", needs: tuple[str, ...] = (), cols: tuple[str, ...] = ("rank", "x_us")) -> Table:
    return Table(name=name, scope=scope, title=name, columns=tuple(Column(c, "us", c) for c in cols),
                 compute=lambda ctx: pd.DataFrame(), needs=needs)


def test_compute_order_and_cycles() -> None:
    a, b, c = _t("a", needs=("b",)), _t("b", needs=("c",)), _t("c")
    assert [t.name for t in registry.compute_order([a, b, c])] == ["c", "b", "a"]
    with pytest.raises(RegistryError, match="cycle"):
        registry.compute_order([_t("a", needs=("b",)), _t("b", needs=("a",))])
    with pytest.raises(RegistryError, match="cannot need run table"):
        registry._validate({"r": _t("r", scope="rank", needs=("x",)), "x": _t("x")})
    with pytest.raises(RegistryError, match="unknown unit"):
        Column("x", "furlongs", "x")


def test_conform_rejects_undeclared_or_missing_columns() -> None:
    t = _t("t")
    assert list(registry.conform(t, pd.DataFrame({"x_us": [1.0], "rank": [0]})).columns) == ["rank", "x_us"]
    assert list(registry.conform(t, pd.DataFrame()).columns) == ["rank", "x_us"]  # empty: gets the columns
    with pytest.raises(RegistryError, match="undeclared \\['y'\\]"):
        registry.conform(t, pd.DataFrame({"rank": [0], "x_us": [1.0], "y": [2]}))
    with pytest.raises(RegistryError, match="missing \\['x_us'\\]"):
        registry.conform(t, pd.DataFrame({"rank": [0]}))


# -- the library result is what --format json prints --------------------------------------------


def _same(a: object, b: object) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b)) or b is pd.NA
    if isinstance(a, float) or isinstance(b, float):
        return b is not None and math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
    return a == b


@pytest.mark.parametrize("folder", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_library_result_is_the_json_report(folder: Path) -> None:
    res = tracekit.analyze(folder)
    code, out, _ = _cli("analyze", str(folder), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == ["meta", *res.tables]  # every table, nothing else
    assert set(res.tables) == set(registry.public_names(registry.AnalyzeOptions()))
    assert doc["meta"]["ranks"] == res.meta["ranks"] and doc["meta"]["steps"] == res.meta["steps"]
    for name, df in res.tables.items():
        rows = doc[name]
        assert len(rows) == len(df), name
        if not len(df):
            continue
        assert list(rows[0]) == list(df.columns), name
        lib = df.astype(object).where(df.notna(), None).to_dict(orient="records")
        for got, want in zip(rows, lib):
            bad = [c for c in df.columns if not _same(got[c], want[c])]
            assert not bad, (name, bad, {c: (got[c], want[c]) for c in bad[:3]})


# -- every table in every format ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_table_renders_in_every_format(eager, fmt: str) -> None:
    for name, df in eager.tables.items():
        text = render(eager, fmt, table=name)
        if fmt == "json":
            assert set(json.loads(text)) == {"meta", name} and len(json.loads(text)[name]) == len(df)
        elif fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(text)))
            assert len(rows) == len(df) and (not rows or list(rows[0]) == list(df.columns))
        else:
            assert registry.tables()[name].title in text
            assert len(df) == 0 or all(c in text for c in df.columns)


def test_default_text_report_has_every_section(eager) -> None:
    text = render(eager, "table", per_step=True)
    for title in ("Run summary", "Findings", "Per-rank breakdown", "Per-step breakdown", "Collectives",
                  "DDP buckets", "Cross-rank wait", "Largest arrival skew", "Bucket timeline, step 4"):
        assert title in text


def test_csv_exports_explain_tables_and_findings_evidence_as_json() -> None:
    code, out, _ = _cli("analyze", str(REF / "inductor_nosplit"), "--format", "csv", "--table", "findings")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert "allreduce_after_backward" in {r["code"] for r in rows}
    ev = json.loads(rows[0]["evidence"])
    assert isinstance(ev, dict) and "cost_us" in ev
    code, out, _ = _cli("analyze", str(REF / "inductor_nosplit"), "--format", "csv", "--table", "bucket_timeline")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 2 * 3 * 17 and "tail_exposed_us" in rows[0]


def test_unknown_or_disabled_table_is_a_one_line_error() -> None:
    code, out, err = _cli("analyze", str(REF / "eager"), "--table", "nope")
    assert code == 2 and out == ""
    assert err.startswith("error: --table 'nope': no such table; tables: findings, ranks") and err.count("\n") == 1
    assert "rank_totals" not in err  # internal tables are not offered
    code, _, err = _cli("analyze", str(REF / "eager"), "--format", "csv", "--table", "hta")
    assert code == 2 and "needs --hta" in err and "Traceback" not in err


def test_text_table_option_prints_one_full_table(eager) -> None:
    code, out, _ = _cli("analyze", str(REF / "eager"), "--table", "waits")
    assert code == 0 and out.startswith(registry.tables()["waits"].title)
    assert out.count("\n") >= len(eager.waits) + 3 and "Run summary" not in out
