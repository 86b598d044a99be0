"""A scan over every committed run folder (sample_traces/, tests/data/): the per-step figures never exceed the
step, and every finding's figures are the values of the table columns it declares (``Finding.QUOTES``)."""

from __future__ import annotations

import math
import re
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tracekit
from tracekit.analyses.findings import Quote, as_dicts, kinds

REPO = Path(__file__).resolve().parents[2]
#: every folder holding rank trace files
RUNS = sorted({p.parent.relative_to(REPO).as_posix() for root in ("sample_traces", "tests/data")
               for p in (REPO / root).rglob("*.json*") if "trace" in p.name and p.name != "run.json"})
#: rounding slack: evidence is rounded to 0.1 (µs, %, counts), means are compensated sums
TOL = 0.051


@cache
def _result(run: str):  # noqa: ANN202
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return tracekit.analyze(REPO / run)
        except tracekit.TracekitError:
            return None


def _where(rows: pd.DataFrame, where: str | None) -> pd.DataFrame:
    """The rows a Quote's ``where`` keeps (tracekit.analyses.findings.Quote)."""
    if where is None:
        return rows
    if m := re.fullmatch(r"(\w+)=(min|max)@(\w+)", where):
        col, pick, by = m.groups()
        return rows[rows[col] == rows.groupby(by)[col].transform(pick)]
    if m := re.fullmatch(r"(\w+)>=(-?[\d.]+)", where):
        return rows[rows[m.group(1)] >= float(m.group(2))]
    if where.startswith("!"):
        return rows[~rows[where[1:]].astype(bool)]
    return rows[rows[where].astype(bool)]


def _total(rows: pd.DataFrame, expr: str) -> float:
    """Σ of a column, or of ``x-y``: Σx − Σy (missing values skipped)."""
    parts = expr.split("-")
    total = rows[parts[0]].astype(float).sum()
    return float(total - sum(rows[c].astype(float).sum() for c in parts[1:]))


def _expected(res, quote, rank: int) -> float:  # noqa: ANN001
    """The value of ``quote`` (a Quote) over table rows of ``rank``: computed here with pandas, apart from the
    findings' own code."""
    table, column, how, _, where, scale = quote
    t = res.tables[table]
    every = t[t["rank"] == rank]
    rows = _where(every, where)
    if how in ("ratio", "pct"):
        num, den = column.split("/")
        v = _total(rows, num) / _total(rows, den) if _total(rows, den) else float("nan")
        v *= 100.0 if how == "pct" else 1.0
    elif how == "share_pct":
        whole = _total(every, column)
        v = 100.0 * _total(rows, column) / whole if whole else 0.0
    else:
        col = rows[column]
        v = {"mean": lambda: col.astype(float).mean(), "median": lambda: col.astype(float).median(),
             "sum": lambda: col.astype(float).sum(), "rows": lambda: float(len(rows)),
             "nunique": lambda: float(col.nunique()),
             "per_step": lambda: col.astype(float).sum() / max(rows["step"].nunique(), 1),
             "rows_per_step": lambda: len(rows) / max(rows["step"].nunique(), 1)}[how]()
    return float(v) * scale


def test_the_scan_covers_the_committed_runs() -> None:
    assert len(RUNS) > 100 and "sample_traces/fixtures/inductor_no_optimization" in RUNS


def test_every_finding_declares_what_it_quotes() -> None:
    hows = {"mean", "median", "sum", "per_step", "rows", "rows_per_step", "nunique", "ratio", "pct", "share_pct"}
    for kind in kinds():
        for field, q in kind.QUOTES.items():
            assert field in kind.__struct_fields__ and field not in kind.FACTS, (kind, field)
            assert isinstance(q, Quote) and q.how in hows and q.table and q.column, (kind, field, q)
            assert q.rank is None or q.rank in kind.__struct_fields__, (kind, field, q)
        assert set(kind.FACTS) <= set(kind.__struct_fields__), kind


@pytest.mark.parametrize("run", RUNS)
def test_per_step_figures_never_exceed_the_step(run: str) -> None:
    res = _result(run)
    if res is None:
        pytest.skip("not analysable (its own test says why)")
    s = res.steps
    for col in ("busy_us", "compute_us", "comm_us", "memory_us", "exposed_comm_us", "span_us"):
        bad = s[s[col] > s["step_us"] + 1e-6]
        assert bad.empty, f"{run}: {col} above step_us in {bad[['rank', 'step', col, 'step_us']].to_dict('records')}"
    idle = res.tables.get("gpu_idle")
    if idle is not None and len(idle):
        assert (idle["gpu_busy_us"] <= idle["step_us"] + 1e-6).all(), run
    ev = res.tables.get("bucket_events")
    if ev is not None and len(ev) and len(s):
        step = s.groupby("rank")["step_us"].mean()
        for r, comm in zip(ev["rank"], ev["trace_comm_us_per_step"].astype(float)):
            if math.isfinite(comm) and r in step.index:
                assert comm <= step[r] + 1e-6, (run, r, comm, step[r])
    _bucket_times_inside_steps(run, res)


def _bucket_times_inside_steps(run: str, res) -> None:  # noqa: ANN001
    """The bucket timeline is on the device's clock: its times of one step span at most the step."""
    tl = res.tables.get("bucket_timeline")
    if tl is None or not len(tl):
        return
    step = res.steps.set_index(["rank", "step"])["step_us"]
    times = tl[["ready_us", "launch_us", "start_us", "end_us"]].to_numpy(dtype=float)
    lo, hi = np.fmin(np.nanmin(times, axis=1), 0.0), np.nanmax(times, axis=1)
    for r, s, a, b in zip(tl["rank"], tl["step"], lo, hi):
        if (r, s) in step.index and math.isfinite(b):
            assert b - a <= step[(r, s)] + 1e-3, (run, r, s, a, b, step[(r, s)])


def _quoted(res, f: dict, kind) -> dict[str, float]:  # noqa: ANN001
    """{field: the table value it quotes} of one finding (``f``: a findings-table row as a dict), None where
    the quote's rank is unknown."""
    ev = f["evidence"]
    out = {}
    for field, q in kind.QUOTES.items():
        rank = ev.get(q.rank) if q.rank else (f["rank"] if f["rank"] is not None else ev.get("worst_rank"))
        out[field] = None if rank is None else _expected(res, q, int(rank))
    return out


#: message parts that carry no figure of the run: dynamo's own words, a documented default
FREE_TEXT = (r"dynamo's reasons: .*", r"dynamo skipped .*", r"dynamo says .*", r"\(dynamo's reason was not recorded.*",
             r"DDP caps it at 1 MB by default", r"docs/\S+",
             r"\[\[[\d, \[\]]*\]\]")  # (an op's recorded input shapes: the trace's text, no figure of the run)
#: evidence fields that hold ranks (a message names them)
RANK_FIELDS = ("ranks", "worst_rank", "straggler", "makes_wait", "last_loaded_arrival", "bucket_events_disagree",
               "idle_rank")


def _printed(message: str) -> list[tuple[float, float, str]]:
    """Each figure the message prints: (value, half its last printed digit, unit after it)."""
    out = []
    for m in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*(ms|µs|MB|MiB|%|×))?", message):
        text, unit = m.group(1), m.group(2) or ""
        decimals = len(text.split(".")[1]) if "." in text else 0
        out.append((float(text), 0.5 * 10.0 ** -decimals, unit))
    return out


def _message_figures_are_quoted(run: str, res, f: dict, kind) -> None:  # noqa: ANN001
    ev = f["evidence"]
    quoted = _quoted(res, f, kind)
    message = f["message"]
    distorted = re.search(r" \[measured under a distorted window: the profiled step is ([\d.]+)× the unprofiled one\]",
                          message)
    if distorted:  # the qualifier's ratio: the run's
        assert float(distorted.group(1)) == pytest.approx(res.meta["profiler_distortion"]["ratio"], abs=0.005)
        message = message[:distorted.start()] + message[distorted.end():]
    for pattern in FREE_TEXT:
        message = re.sub(pattern, "", message)
    values = [v for v in quoted.values() if v is not None and math.isfinite(v)]
    values += [float(ev[k]) for k in kind.FACTS if isinstance(ev.get(k), (int, float))]
    values += [float(v) for k in kind.FACTS if isinstance(ev.get(k), list)  # (a list of entries, one per row)
               for e in ev[k] if isinstance(e, dict) for v in e.values() if isinstance(v, (int, float))]
    ranks = {f["rank"]} | {ev.get(k) for k in RANK_FIELDS if isinstance(ev.get(k), int)}
    ranks |= {r for k in RANK_FIELDS if isinstance(ev.get(k), list) for r in ev[k]}
    for value, half, unit in _printed(message):
        if unit == "" and value in ranks:
            continue
        scales = (1e-3,) if unit == "ms" else (1.0, 1e-6) if unit == "MB" else (1.0,)  # (MB of a bytes figure)
        ok = any(abs(value - v * k) <= half + TOL * max(k, 1e-3) + 1e-9 for v in values for k in scales)
        assert ok, (run, f["code"], value, unit, f["message"], quoted)


@pytest.mark.parametrize("run", RUNS)
def test_finding_figures_are_their_tables_values(run: str) -> None:
    res = _result(run)
    if res is None:
        pytest.skip("not analysable (its own test says why)")
    by_code = {k.__struct_config__.tag: k for k in kinds()}
    for f in as_dicts(res.tables["findings"]):
        kind, ev = by_code[f["code"]], f["evidence"]
        for field, want in _quoted(res, f, kind).items():
            if field not in ev:  # a field set only in some cases (e.g. the figures of one late cause)
                continue
            got = ev[field]
            if want is None or not np.isfinite(want):
                assert got is None, (run, f["code"], field, got, want)
                continue
            assert got is not None and got == pytest.approx(want, abs=TOL), (run, f["code"], field, kind.QUOTES[field])
        _message_figures_are_quoted(run, res, f, kind)


@pytest.mark.parametrize("run", ["sample_traces/fixtures/inductor_no_optimization", "sample_traces/fixtures/eager_ddp"])
def test_diff_per_rank_figures_are_the_ranks_table(run: str) -> None:
    from tracekit.compare.diff import diff_runs

    res = _result(run)
    d = diff_runs(res, res)["ranks"]
    r = res.ranks.set_index("rank")
    for metric in ("compute_per_step_us", "comm_per_step_us", "exposed_comm_per_step_us", "idle_per_step_us"):
        rows = d[d["metric"] == metric]
        assert len(rows) == len(r)
        for rank, a in zip(rows["rank"], rows["a"]):
            assert a == pytest.approx(r.loc[rank, metric]), (run, metric, rank)
        # ... and the mean over the rank's steps of the steps table's column
        col = metric.replace("_per_step_us", "_us")
        assert r[metric].to_numpy() == pytest.approx(res.steps.groupby("rank")[col].mean().loc[r.index].to_numpy())


def test_html_findings_quote_the_same_figures() -> None:
    # the HTML report lists analyze's findings: the same message, and the cost of evidence.cost_us
    from tracekit.report import html
    from tracekit.runner.pipeline import load_and_analyze

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traces, res = load_and_analyze(["sample_traces/fixtures/inductor_no_optimization"])
    found = as_dicts(res.tables["findings"])
    items = html._findings(html.run_view("a", traces, res), "fig")
    assert len(items) == len(found) > 0
    for item, f in zip(items, found):
        assert item["message"] == f["message"] and item["cost"] == f"{f['evidence']['cost_us']:.0f} µs/step"
    # and the cost is the steps table's exposed communication per step (allreduce_after_backward)
    assert found[0]["code"] == "allreduce_after_backward"
    assert found[0]["evidence"]["cost_us"] == pytest.approx(
        res.ranks.set_index("rank")["exposed_comm_per_step_us"].loc[found[0]["evidence"]["worst_rank"]], abs=TOL)
