"""explain(): bucket timeline, graph-break impact, manifest check and findings."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import tracekit
from tests.explain_builders import load_run, manifest_for, write_run
from tracekit.analyses import graphbreaks, timeline
from tracekit.analyses.explain import explain
from tracekit.report.explain_render import render_explain

REF = Path(__file__).parents[1] / "data" / "reference"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


def _codes(out: dict) -> set[str]:
    return {f["code"] for f in out["findings"]}


def _explain(tmp_path: Path, name: str, **kw) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts, res = load_run(write_run(tmp_path / name, **kw))
        return explain(res)


@pytest.fixture(scope="module")
def ref() -> dict[str, dict]:
    out = {}
    for run in ("eager", "inductor", "inductor_nosplit", "inductor_break_in_loop"):
        ts = tracekit.load(REF / run)
        out[run] = explain(tracekit.analyze(ts))
    return out


# -- reference traces ---------------------------------------------------------------------------

def test_schema(ref: dict) -> None:
    out = ref["inductor"]
    assert set(out) >= {"bucket_timeline", "graph_breaks", "manifest_check", "findings"}
    assert list(out["bucket_timeline"].columns) == list(timeline.TIMELINE_COLUMNS)
    assert list(out["graph_breaks"].columns) == list(graphbreaks.GB_COLUMNS)
    for f in ref["inductor_nosplit"]["findings"]:
        assert set(f) == {"code", "severity", "rank", "message", "evidence"}
        assert f["severity"] in ("high", "medium", "low") and "cost_us" in f["evidence"]


def test_nosplit_allreduce_after_backward(ref: dict) -> None:
    out = ref["inductor_nosplit"]
    f = [x for x in out["findings"] if x["code"] == "allreduce_after_backward"]
    assert len(f) == 1 and f[0]["rank"] is None  # fires on both ranks, reported once
    assert f[0]["evidence"]["allreduces_per_step"] == 17 and f[0]["evidence"]["after_backward"] == 51
    assert "DDPOptimizer off" in f[0]["message"] and f[0]["severity"] == "high"
    tl = out["bucket_timeline"]
    assert tl["starts_after_backward"].all()
    gb = out["graph_breaks"]
    assert (gb["bwd_subgraphs"] == 1).all() and (gb["real_breaks"] == 0).all()
    assert "graph_break" not in _codes(out) and "compile_skipped" not in _codes(out)


def test_inductor_overlapped(ref: dict) -> None:
    out = ref["inductor"]
    assert "allreduce_after_backward" not in _codes(out)
    assert "graph_break" not in _codes(out) and "compile_skipped" not in _codes(out)
    gb = out["graph_breaks"]
    assert (gb["fwd_subgraphs"] == 16).all() and (gb["bwd_subgraphs"] == 16).all()
    assert (gb["ddp_splits"] == 15).all() and (gb["real_breaks"] == 0).all()
    tl = out["bucket_timeline"]
    assert (tl.groupby(["rank", "step"]).size() == 17).all()
    assert (tl["ready_source"] == "compiled_subgraph").all()
    assert tl["starts_after_backward"].mean() < 0.5
    assert (tl["ready_cpu_ns"] <= tl["launch_ns"]).all()


def test_break_in_loop_compile_skipped(ref: dict) -> None:
    out = ref["inductor_break_in_loop"]
    assert "compile_skipped" in _codes(out)
    assert "allreduce_after_backward" not in _codes(out) and "graph_break" not in _codes(out)
    gb = out["graph_breaks"]
    assert gb["compile_skipped"].all() and (gb["cache_lookups"] > 0).all()
    assert (out["bucket_timeline"]["ready_source"] == "autograd_op").all()


def test_eager_no_compile_findings(ref: dict) -> None:
    out = ref["eager"]
    assert not {"compile_skipped", "graph_break", "allreduce_after_backward", "rank_waiting"} & _codes(out)
    assert not out["graph_breaks"]["compile_requested"].any()
    assert out["manifest_check"].empty


def test_render(ref: dict) -> None:
    for fmt in ("table", "markdown"):
        text = render_explain(ref["inductor_nosplit"], fmt)
        assert "Findings" in text and "allreduce_after_backward" in text


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="sample_traces/ not generated yet")
def test_sample_traces_do_not_crash() -> None:
    runs = sorted({p.parent for p in SAMPLES.rglob("*.json*") if p.name not in ("run.json", "compiled_kernels.json")})
    for run in runs:
        ts = tracekit.load(run)
        out = explain(tracekit.analyze(ts))
        assert isinstance(out["findings"], list)
        if "eager" in run.name:
            assert not {"compile_skipped", "graph_break"} & _codes(out)


# -- hand-built: each finding firing and not ----------------------------------------------------

def test_after_backward_fires_and_not(tmp_path: Path) -> None:
    assert "allreduce_after_backward" in _codes(_explain(tmp_path, "a", mode="nosplit"))
    assert "allreduce_after_backward" not in _codes(_explain(tmp_path, "b", mode="split"))
    assert "allreduce_after_backward" not in _codes(_explain(tmp_path, "c", mode="eager"))


def test_rank_waiting_fires_and_not(tmp_path: Path) -> None:
    out = _explain(tmp_path, "w", mode="split", straggle_us=100, straggler=1)
    f = [x for x in out["findings"] if x["code"] == "rank_waiting"]
    assert len(f) == 1 and f[0]["rank"] == 0 and f[0]["evidence"]["straggler"] == 1
    assert "rank 0" in f[0]["message"] and "rank 1" in f[0]["message"]
    assert "rank_waiting" not in _codes(_explain(tmp_path, "nw", mode="split"))


def test_graph_break_fires_and_not(tmp_path: Path) -> None:
    man = manifest_for("break", breaks=1)
    out = _explain(tmp_path, "g", mode="break", manifest=man)
    f = [x for x in out["findings"] if x["code"] == "graph_break"]
    assert len(f) == 1
    ev = f[0]["evidence"]
    assert ev["breaks_per_step"] == 1 and ev["ddp_splits_per_step"] == 2
    assert ev["cost_us"] == pytest.approx(330.0) and "call_function graph_break" in ev["reasons"]
    # DDPOptimizer splits alone are not graph breaks
    assert "graph_break" not in _codes(_explain(tmp_path, "s", mode="split", manifest=manifest_for("split")))


def test_compile_skipped_fires_and_not(tmp_path: Path) -> None:
    out = _explain(tmp_path, "k", mode="skipped", manifest=manifest_for("skipped", skipped=True))
    f = [x for x in out["findings"] if x["code"] == "compile_skipped"]
    assert len(f) == 1 and "graph break in loop" in f[0]["message"] and f[0]["severity"] == "high"
    assert "compile_skipped" in _codes(_explain(tmp_path, "k2", mode="skipped"))  # from the trace alone
    # manifest asks for compile, trace has no lookups at all: still skipped
    assert "compile_skipped" in _codes(_explain(tmp_path, "k3", mode="eager", manifest=manifest_for("split")))
    assert "compile_skipped" not in _codes(_explain(tmp_path, "e", mode="eager", manifest=manifest_for("eager")))


def test_exposed_buckets_fire_and_not(tmp_path: Path) -> None:
    last = _explain(tmp_path, "l", mode="split", ar_us=[150, 150, 150, 600])
    assert "exposed_last_bucket" in _codes(last) and "exposed_first_bucket" not in _codes(last)
    first = _explain(tmp_path, "f", mode="split", compute_us=50, ar_us=[500, 20, 20, 10])
    assert "exposed_first_bucket" in _codes(first)
    ok = _explain(tmp_path, "o", mode="split")
    assert not {"exposed_first_bucket", "exposed_last_bucket"} & _codes(ok)
    # suppressed where allreduce_after_backward explains it
    assert not {"exposed_first_bucket", "exposed_last_bucket"} & _codes(_explain(tmp_path, "n", mode="nosplit"))


def test_findings_ranked_by_cost(tmp_path: Path) -> None:
    out = _explain(tmp_path, "m", mode="break", ar_us=[150, 150, 150, 600], straggle_us=100, straggler=1)
    order = {"high": 0, "medium": 1, "low": 2}
    keys = [(order[f["severity"]], -(f["evidence"]["cost_us"] or 1e18)) for f in out["findings"]]
    assert keys == sorted(keys) and len(keys) >= 2


def test_bucket_timeline_numbers(tmp_path: Path) -> None:
    tl = _explain(tmp_path, "t", mode="split")["bucket_timeline"]
    r0 = tl[(tl["rank"] == 0) & (tl["step"] == 1)].set_index("bucket")
    assert len(r0) == 4
    assert r0.loc[0, "launch_delay_us"] == pytest.approx(28.0)  # AccumulateGrad hook after subgraph end
    assert r0.loc[3, "tail_exposed_us"] == pytest.approx(10.0) and r0.loc[3, "starts_after_backward"]
    assert r0.loc[0, "tail_exposed_us"] == 0 and not r0.loc[0, "starts_after_backward"]


def test_manifest_check(tmp_path: Path) -> None:
    out = _explain(tmp_path, "mc", mode="split", manifest=manifest_for("split", bucket_bytes=4e6))
    chk = out["manifest_check"].set_index(["rank", "check"])
    assert chk.loc[(0, "backward_subgraphs_per_step"), "status"] == "match"
    assert chk.loc[(0, "allreduce_bytes"), "status"] == "match"
    assert chk.loc[(0, "allreduces_per_step"), "status"] == "match"
    bad = _explain(tmp_path, "mc2", mode="split", manifest=manifest_for("split", n_buckets=5, bucket_bytes=8e6))
    chk = bad["manifest_check"].set_index(["rank", "check"])
    assert chk.loc[(0, "backward_subgraphs_per_step"), "status"] == "mismatch"
    assert chk.loc[(0, "allreduce_bytes"), "status"] == "mismatch"


SAMPLE_VERDICTS = {
    # folder: (codes that must fire, codes that must not)
    "fixtures/inductor_no_optimization": ({"allreduce_after_backward"}, {"graph_break", "compile_skipped"}),
    "fixtures/inductor_ddp_optimizer": (set(), {"allreduce_after_backward", "graph_break", "compile_skipped"}),
    "examples/inductor_graph_break": ({"graph_break"}, {"allreduce_after_backward", "compile_skipped"}),
    "fixtures/eager_ddp": (set(), {"allreduce_after_backward", "graph_break", "compile_skipped"}),
}


@pytest.mark.parametrize("run", sorted(SAMPLE_VERDICTS))
def test_sample_trace_verdicts(run: str) -> None:
    from tracekit.runner.pipeline import analyze_paths

    must, must_not = SAMPLE_VERDICTS[run]
    codes = set(analyze_paths([str(SAMPLES / run)]).findings["code"])
    assert must <= codes, codes
    assert not (must_not & codes), codes
