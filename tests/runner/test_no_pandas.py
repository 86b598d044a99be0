"""``tracekit analyze`` never imports pandas (issue 27: importing it alone takes longer than analysing a small
trace): every output format, the parse path and the many-rank engine path, in a fresh interpreter each, with
one worker so that every per-rank table is computed in the process that is checked. The Python API
(``tracekit.analyze``) still hands out DataFrames, converted at the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

try:
    from tests.tracebuilder import write_skewed_ranks
except ImportError:  # tests/ not a package
    from tracebuilder import write_skewed_ranks

REPO = Path(__file__).resolve().parents[2]
#: heavy libraries the analyze path must not import (plotly and jinja2 belong to the HTML report, HTA to --hta)
HEAVY = ("pandas", "plotly", "jinja2", "hta", "torch", "dask", "distributed")


def _analyze_imports(args: list[str]) -> list[str]:
    code = ("import sys\nfrom tracekit.cli import main\n"
            f"try:\n    main({['analyze', *args, '--workers', '1']!r}, standalone_mode=False)\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 - our own repr of a list of names


@pytest.mark.parametrize("args", [
    ["sample_traces/fixtures/eager_ddp"],
    ["sample_traces/examples/inductor_graph_break", "--format", "json"],
    ["sample_traces/fixtures/h200x2_compiled_autograd/inductor", "--format", "markdown", "--per-step"],
    ["tests/data/external/hta_trace_compare_sampled", "--format", "csv", "--table", "collectives"],
    ["sample_traces/fixtures/h200x2_resnet50_inductor", "--timings"],
], ids=["text", "json", "markdown-per-step", "csv-table", "distorted"])
def test_analyze_never_imports_pandas(args: list[str]) -> None:
    assert _analyze_imports(args) == []


def test_many_rank_engine_path_never_imports_pandas(tmp_path: Path) -> None:
    from tracekit.runner.pipeline import ENGINE_MIN_FILES

    write_skewed_ranks(tmp_path, ENGINE_MIN_FILES + 2)
    assert _analyze_imports([str(tmp_path), "--format", "json"]) == []


def test_the_library_still_returns_frames() -> None:
    import pandas as pd

    import tracekit

    res = tracekit.analyze(str(REPO / "sample_traces" / "fixtures/eager_ddp"))
    assert all(isinstance(t, pd.DataFrame) for t in res.tables.values())
    assert isinstance(res.ranks, pd.DataFrame) and len(res.ranks) == len(res.meta["ranks"])
    assert list(res.columns) == list(res.tables)
    assert all(len(c["rank"]) == len(res.tables[n]) for n, c in res.columns.items() if "rank" in c)
