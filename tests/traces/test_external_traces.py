"""Real traces published by other projects (tests/data/external, origin in its README).

Each is accepted, gives plausible figures, and agrees with an independent computation:
the stdlib reads the gzip JSON, kernels are classified by name (``nccl*``/``rccl*`` =
communication) and intervals merged with a plain sorted sweep, nothing shared with
tracekit's loader or interval code. HTA's overlap is checked too where HTA runs.
"""

from __future__ import annotations

import gzip
import json
import warnings
from decimal import Decimal
from pathlib import Path

import pytest

import tracekit
from tracekit.traces import schema

from tests.independent import intersection, merge

EXT = Path(__file__).parents[1] / "data" / "external"
#: folder -> (has GPU activity, has comm kernels)
CORPUS = {
    "hta_distributed_info_unavailable": (False, False),
    "hta_amd_mi250": (True, False),
    "hta_trace_filter": (True, True),
    "kineto_tb_plugin_2021": (True, False),
    "tracelens_mi300_resnet18": (True, False),
    "tracelens_mi300_bert_small": (True, False),
    "hta_trace_compare_sampled": (True, False),
    "hta_cupti_profiler": (False, False),
    "hta_torch20_fsdp_16rank": (True, True),
    "tracelens_rocm_compile_triton": (True, False),
    "tracelens_mi210_gpu_only": (True, False),
}
GPU_CATS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "mem", "Memcpy": "mem",
            "gpu_memset": "mem", "Memset": "mem"}


def independent(path: Path) -> dict[str, float]:
    ev = json.load(gzip.open(path), parse_float=Decimal)["traceEvents"]

    def ns(x) -> int:
        return int(Decimal(x) * 1000)
    comm, comp = [], []
    for e in ev:
        if e.get("ph") == "X" and GPU_CATS.get(e.get("cat")) == "kernel":
            iv = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
            (comm if e["name"].lower().startswith(("nccl", "rccl")) else comp).append(iv)
    cm, cp = merge(comm), merge(comp)
    comm_ns = sum(e - s for s, e in cm)
    ov = intersection(cm, cp)
    return {"compute_us": sum(e - s for s, e in cp) / 1e3, "comm_us": comm_ns / 1e3,
            "overlap_pct": 100 * ov / comm_ns if comm_ns else float("nan")}


@pytest.fixture(scope="module")
def results():
    out = {}
    for name in CORPUS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out[name] = (tracekit.analyze(EXT / name), [str(w.message) for w in caught])
    return out


def _result(results, name):
    return results[name]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_accepted_with_plausible_figures(results, name):
    res, _ = _result(results, name)
    gpu, comm = CORPUS[name]
    r = res.ranks
    assert len(r) >= 1
    if not gpu:
        assert r["compute_total_us"].isna().all()
        return
    assert (r["compute_total_us"] > 0).all()
    for col in ("compute_total_us", "comm_total_us", "memory_total_us", "idle_total_us", "overlap_total_us"):
        assert (r[col].dropna() >= 0).all(), col
    assert (r["overlap_total_us"] <= r["comm_total_us"] + 1e-9).all()
    pct = r["overlap_pct"].dropna()
    assert ((pct >= 0) & (pct <= 100)).all()
    assert (r["comm_total_us"] > 0).all() == comm


@pytest.mark.parametrize("name", sorted(n for n, (gpu, _) in CORPUS.items() if gpu))
def test_matches_independent_computation(results, name):
    res, _ = _result(results, name)
    for rt_path, row in zip(sorted((EXT / name).glob("*.json.gz")), res.ranks.itertuples()):
        want = independent(rt_path)
        assert row.compute_total_us == pytest.approx(want["compute_us"], abs=1e-6)
        assert row.comm_total_us == pytest.approx(want["comm_us"], abs=1e-6)
        if want["comm_us"]:
            assert abs(row.overlap_pct - want["overlap_pct"]) < 1.0


def test_2021_schema_has_gpu_activity_and_steps(results):
    res, _ = _result(results, "kineto_tb_plugin_2021")
    row = res.ranks.iloc[0]
    # the figure: ~600 ms of kernels, six ProfilerSteps (written as Operator events then)
    assert 550_000 < row.compute_total_us < 650_000
    assert row.steps == 6
    assert res.steps["kernels"].sum() > 0  # kernels attributed to steps: launches linked by correlation


def test_wait_never_exceeds_comm(results):
    for name, (res, _) in results.items():
        r = res.ranks.dropna(subset=["wait_total_us"])
        assert (r["wait_total_us"] <= r["comm_total_us"] + 1e-6).all(), name


@pytest.mark.filterwarnings("ignore:world_size is 128 but no trace")  # HTA's test data: 2 ranks of 128
def test_hta_agrees_on_overlap():
    pytest.importorskip("hta")
    from tracekit.analyses.hta_check import hta_crosscheck, tracekit_overlap_in_hta_scope

    ts = tracekit.load(EXT / "hta_trace_filter")
    hta = hta_crosscheck(ts).set_index("rank")
    tk = tracekit_overlap_in_hta_scope(ts).set_index("rank")
    assert hta["hta_error"].isna().all(), hta["hta_error"].tolist()
    for r in ts.ranks:
        assert abs(hta.at[r, "hta_overlap_pct"] - tk.at[r, "tk_overlap_pct_launched"]) < 1.0


def test_2021_schema_decodes_categories_and_lowercase_external_id():
    # decode level (no rank inference): every 2021 spelling maps to a kind, "external id" is read
    from tracekit.traces.decode import decode_columns
    from tracekit.traces.traceset import RankTrace, events_frame

    path = EXT / "kineto_tb_plugin_2021" / "worker0.1623143089861.pt.trace.json.gz"
    meta, cols = decode_columns(path)
    rt = RankTrace.from_decoded(path, meta, events_frame(cols))
    kinds = rt.events["kind"].value_counts()
    # counts of the X events per category, as written in the file (Operator 23646, Runtime 11923, ...)
    # ProfilerStep#5..10 were Operators then: they are step annotations now
    assert kinds[schema.CPU_OP] + kinds[schema.ANNOTATION] == 23646 and kinds[schema.ANNOTATION] == 6
    assert kinds[schema.LAUNCH] == 11923
    assert kinds[schema.KERNEL] == 8772 and kinds[schema.MEMSET] == 312 and kinds[schema.MEMCPY] == 12
    g = rt.gpu
    assert (g["external_id"] >= 0).all() and not g["pre_window"].any()
    assert rt.steps["step"].tolist() == [5, 6, 7, 8, 9, 10]


def test_range_profiler_kernels_are_named_not_called_cpu_only(results):
    res, caught = _result(results, "hta_cupti_profiler")
    assert res.meta["device_metrics"] is False
    assert res.meta["unread_categories"] == {"cuda_profiler_range": 77}  # the file's 77 complete events of it
    assert sum("cuda_profiler_range (77)" in m for m in caught) == 1
    assert not any("CPU-only" in n for n in res.meta["notes"])


@pytest.mark.filterwarnings("ignore:world_size is 2 but no trace")
def test_a_sampled_trace_replays_with_no_negative_step():
    w = tracekit.whatif(EXT / "hta_trace_compare_sampled")
    steps = w.steps
    assert (steps["window_step_us"] >= 0).all() and (steps["predicted_step_us"] >= 0).all()
    assert w.baseline["profiled_step_us"] > 0
    assert any("no launch recorded ran after ones launched in the window" in n for n in w.notes)


def test_torch20_collectives_take_their_size_from_the_shapes(results):
    """torch 2.0 wrote no message args: every collective's size comes from the shapes of the ops around its launch.
    Independently: the allreduce bytes launched in the steps are the ``nccl:all_reduce`` ranges' float tensors
    (the c10d op holds a TensorList, no shape) inside the ProfilerStep ranges."""
    import math

    res, _ = _result(results, "hta_torch20_fsdp_16rank")
    c = res.tables["collectives"]
    in_steps = c[c["step"] >= 0]
    assert in_steps["bytes"].notna().all() and "send_recv" not in set(in_steps["coll_name"])
    assert set(in_steps["coll_name"]) == {"allreduce", "allgather", "reduce_scatter", "all_to_all"}
    ev = json.load(gzip.open(EXT / "hta_torch20_fsdp_16rank" / "rank0.json.gz"))["traceEvents"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
    want = sum(4 * math.prod(e["args"]["Input Dims"][0]) for e in ev
               if e.get("name") == "nccl:all_reduce" and any(a <= e["ts"] <= b for a, b in steps))
    assert in_steps.loc[in_steps["coll_name"] == "allreduce", "bytes"].sum() == want
    assert "graph_break" not in set(res.findings["code"]) and "compile_skipped" not in set(res.findings["code"])


def test_a_capture_without_steps_is_replayed_as_one_step():
    import warnings as w

    with w.catch_warnings():
        w.simplefilter("ignore")
        r = tracekit.whatif(EXT / "tracelens_rocm_compile_triton")
    assert r.baseline["steps"] == 1 and abs(r.baseline["replay_error_pct"]) < 2.0
    assert any("replayed as one step" in n for n in r.notes)
    with pytest.raises(tracekit.TracekitError, match="no CPU operators"):
        with w.catch_warnings():
            w.simplefilter("ignore")
            tracekit.whatif(EXT / "tracelens_mi210_gpu_only")
