"""A rank read for the per-rank map keeps the decoder's columns (no event table unless asked):
every column, category, GPU and step table, and every rank table must be what the event table gives.

The engine's workers build RankTraces from :class:`~tracekit.traces.decode.Columns`; ``tracekit.load``
builds them from the event table. Both must agree exactly, on committed GPU, CPU/gloo and public traces.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tracekit.analyses import registry
from tracekit.traces.cols import factorize
from tracekit.traces import loader, schema
from tracekit.traces.decode import DENSE_COLUMNS, SPARSE_COLUMNS, SPARSE_INT_COLUMNS, Columns
from tracekit.traces.frames import frame, stack
from tracekit.traces.table import categorical
from tracekit.traces.traceset import RankTrace, _codes_dtype, _step_numbers, events_frame

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    ROOT / "sample_traces/fixtures/eager_ddp/rank1.trace.json.gz",
    ROOT / "sample_traces/examples/inductor_graph_break/rank0.trace.json.gz",
    ROOT / "sample_traces/whatif/cpu16_gloo_scenarios/b/ws4/rank1.trace.json.gz",  # CPU/gloo: no GPU activity
    *sorted((ROOT / "tests/data/external").rglob("*.json.gz"))[:2],
]


def _reference_events(cols: Columns) -> pd.DataFrame:
    """The event table as tracekit built it before ranks kept their columns (its definition, written out
    independently of RankTrace): dense columns, end = start + duration, sparse ints -1 where absent,
    Categorical names (first-seen order) and collective args (sorted)."""
    data: dict = {c: cols.dense[c] for c in DENSE_COLUMNS}
    data["end_ns"] = data["ts_ns"] + data["dur_ns"]
    for col in SPARSE_INT_COLUMNS:
        dense = np.full(cols.n, -1, dtype=np.int64)
        dense[cols.sparse_idx] = cols.sparse[col]
        data[col] = dense
    data["name"] = pd.Categorical.from_codes(cols.name_codes, categories=pd.Index(cols.names, dtype=object))
    for col in SPARSE_COLUMNS:
        sparse = categorical(cols.sparse[col])
        codes = np.full(cols.n, -1, dtype=sparse.codes.dtype)
        codes[cols.sparse_idx] = sparse.codes
        data[col] = pd.Categorical.from_codes(codes, dtype=sparse.dtype)
    return frame({c: data[c] for c in schema.EVENT_COLUMNS}, copy=False)


def _pair(path: Path) -> tuple[RankTrace, RankTrace]:
    """The rank from its columns (the engine's way) and from the reference event table."""
    decoded = loader.decode_file(path)
    assert not isinstance(decoded, Exception), decoded
    meta, cols = decoded
    a = RankTrace.from_decoded(path, dict(meta), cols)
    b = RankTrace.from_decoded(path, dict(meta), _reference_events(cols), (cols.op_idx, cols.op_args))
    a.rank = b.rank = 0
    return a, b


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_columns_are_the_event_table(path: Path) -> None:
    cols, frame_ = _pair(path)
    for c in schema.EVENT_COLUMNS:
        got, want = cols.column(c), frame_.column(c)
        assert got.dtype == want.dtype and np.array_equal(got, want), c
        assert cols.categories(c) == frame_.categories(c), c
    assert cols.name_categories() == frame_.name_categories()
    assert "events" not in cols.__dict__, "reading columns built the event table"
    for name in ("gpu", "steps"):
        pd.testing.assert_frame_equal(getattr(cols, name), getattr(frame_, name), check_exact=True,
                                      check_categorical=True, check_index_type=True)
    pd.testing.assert_frame_equal(cols.events, frame_.events, check_exact=True, check_categorical=True)
    decoded = loader.decode_file(path)
    pd.testing.assert_frame_equal(events_frame(decoded[1]), frame_.events, check_exact=True, check_categorical=True)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rank_tables_from_columns_are_those_from_the_event_table(path: Path) -> None:
    opts = registry.AnalyzeOptions()
    specs = [t for t in registry.selected(opts) if t.scope == "rank"]
    out = []
    pair = _pair(path)
    for rt in pair:
        tables = registry.compute_rank_tables(rt, specs=specs, options=opts, world_size=2, manifest=None)
        out.append({t.name: stack([tables[t.name]], tuple(t.column_names)) for t in specs})
    # the point of the columns: no analysis of the per-rank map builds the event or GPU table
    assert "events" not in pair[0].__dict__ and "gpu" not in pair[0].__dict__
    for name in out[0]:
        pd.testing.assert_frame_equal(out[0][name], out[1][name], check_exact=True, check_index_type=True)
    assert any(len(t) for t in out[0].values())


def test_codes_dtype_is_pandas_codes_dtype() -> None:
    for n in (1, 126, 127, 128, 32766, 32767, 40000):
        cats = pd.Index([f"c{i}" for i in range(n)], dtype=object)
        assert pd.Categorical.from_codes(np.zeros(1, dtype=np.int64), categories=cats).codes.dtype == _codes_dtype(n)


def test_sparse_categories_are_sorted_strings() -> None:
    path = ROOT / "sample_traces/fixtures/eager_ddp/rank1.trace.json.gz"
    cols, frame_ = _pair(path)
    for c in SPARSE_COLUMNS:
        cats = cols.categories(c)
        assert cats == sorted(cats) and cats == frame_.categories(c)


@pytest.mark.parametrize("texts", [["1", "20", "3"], ["7", "x", "-2", "3.5", " 4", "1e3"], [], ["٣"]])
def test_step_numbers_are_to_numeric(texts: list[str]) -> None:
    parsed, num = _step_numbers(texts)
    want = pd.to_numeric(pd.Series(texts, dtype=str), errors="coerce")
    assert parsed.tolist() == want.notna().tolist()
    assert num[parsed].tolist() == want[want.notna()].astype(np.int64).tolist()


@pytest.mark.parametrize("n", [5, 3000])  # the Python dict path, and the hashed one above the size limit
def test_factorize_is_pandas_factorize(n: int) -> None:
    values = np.empty(n, dtype=object)
    values[:] = [("b", None, "a", np.nan, "b", np.float64("nan"), "c")[i % 7] for i in range(n)]
    codes, uniques = factorize(values)
    want_codes, want_uniques = pd.factorize(values)
    assert codes.tolist() == want_codes.tolist() and list(uniques) == list(want_uniques)


def test_ranks_with_the_same_names_share_one_categorical_dtype() -> None:
    """Two ranks decoded from one file build their frames with the same dtype objects (one Index and dtype per
    distinct name list in a process), and the frames are still the reference's."""
    path = FILES[0]
    (a, ref), (b, _) = _pair(path), _pair(path)
    assert a._category_dtype("name") is b._category_dtype("name")
    assert a._category_dtype("pg_name") is b._category_dtype("pg_name")
    other, _ = _pair(FILES[1])  # another name list: another dtype
    assert other._category_dtype("name") is not a._category_dtype("name")
    for rt in (a, b):
        pd.testing.assert_frame_equal(rt.events, ref.events, check_exact=True, check_categorical=True)
