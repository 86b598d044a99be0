"""Compiled-autograd DDP (python reducer), replicate(), tensor parallel: options, analysis, structure.

Hand-built traces check the functional-collective bucket columns and the process-group split
with arithmetic; the real 2- and 4-rank gloo runs are in ``test_compiled_autograd_runs.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.runner.run import analyze
from tracekit.errors import ConfigError
from tracekit.profile.config import ProfileConfig
from tracekit.analyses.collectives import bucket_summary, collective_summary
from tracekit.traces import cols as C
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # pragma: no cover - run from tests/
    from tracebuilder import TraceBuilder

MESH_PGS = [
    {"pg_name": "0", "pg_desc": "default_pg", "pg_size": 4, "ranks": [0, 1, 2, 3]},
    {"pg_name": "1", "pg_desc": "mesh_dp", "pg_size": 2, "ranks": [0, 2]},
    {"pg_name": "3", "pg_desc": "mesh_tp", "pg_size": 2, "ranks": [0, 1]},
]


# -- options ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, msg", [
    ({"inductor_ddp_fusion": "concat"}, "need --dynamo inductor"),
    ({"dynamo": "aot_eager", "optimize_ddp": "python_reducer", "inductor_ddp_fusion": "concat"}, "need --dynamo inductor"),
    ({"dynamo": "inductor", "inductor_ddp_fusion": "coalesced"}, "python_reducer"),  # ddp_optimizer: no CA graph
    ({"dynamo": "inductor", "optimize_ddp": "python_reducer", "inductor_ddp_fusion": "none",
      "inductor_ddp_bucket_mb": 5}, "no effect"),
    ({"dynamo": "inductor", "optimize_ddp": "python_reducer", "inductor_ddp_bucket_mb": 0}, "positive"),
    ({"inductor_ddp_fusion": "fast"}, "must be one of"),
    ({"tp": 2}, "--replicate or --fsdp"),
    ({"tp": 2, "parallel": "replicate", "model": "resnet50"}, "built-in models"),
    ({"tp": 3, "parallel": "replicate", "width": 256}, "must divide --width"),
    ({"tp": 2, "parallel": "fsdp", "model": "transformer", "heads": 3, "width": 258}, "must divide"),
    ({"tp": 2, "parallel": "replicate", "nproc": 3}, "number of ranks"),
    ({"tp": 2, "parallel": "replicate", "dynamo": "inductor", "optimize_ddp": "python_reducer"}, "DTensor"),
    ({"tp": 0}, "at least 1"),
    ({"parallel": "fsdp", "comm_hook": "bf16"}, "only to --ddp/--replicate"),
    ({"activation_checkpointing": True}, "--fsdp or --replicate"),
])
def test_bad_combinations(kw: dict, msg: str) -> None:
    with pytest.raises(ConfigError, match=msg):
        ProfileConfig(**kw)


def test_good_combinations_and_labels() -> None:
    c = ProfileConfig(dynamo="inductor", optimize_ddp="python_reducer", inductor_ddp_fusion="coalesced",
                      inductor_ddp_bucket_mb=10)
    assert c.uses_python_reducer and c.mode_label() == "ddp-inductor-python_reducer-fuse_coalesced"
    r = ProfileConfig(parallel="replicate", dynamo="inductor", optimize_ddp="python_reducer_without_compiled_forward",
                      comm_hook="none", bucket_cap_mb=5)
    assert r.resolved_optimize_ddp == "python_reducer_without_compiled_forward" and r.uses_python_reducer
    assert ProfileConfig(parallel="replicate", dynamo="inductor").resolved_optimize_ddp == "ddp_optimizer"
    assert ProfileConfig(parallel="fsdp", dynamo="inductor").resolved_optimize_ddp is None
    t = ProfileConfig(parallel="replicate", tp=2, nproc=4, comm_hook="bf16", grad_accum=2,
                      activation_checkpointing=True)
    assert t.mode_label() == "replicate-tp2-eager"
    assert ProfileConfig(parallel="fsdp", tp=2, model="transformer").tp == 2


def test_tp_plan_pairs_layers() -> None:
    from tracekit.profile.models import build_workload, tp_plan

    cfg = ProfileConfig(parallel="replicate", tp=2, depth=5, width=16)
    model, _, _ = build_workload(cfg)
    plan = tp_plan(cfg, model)
    assert plan == {"front.0.0": "colwise", "front.1.0": "rowwise", "front.2.0": "colwise", "front.3.0": "rowwise"}
    cfg = ProfileConfig(parallel="fsdp", tp=2, model="transformer", depth=2, width=16, heads=4)
    model, _, _ = build_workload(cfg)
    assert sorted(tp_plan(cfg, model).values()).count("colwise") == 4  # qkv + mlp.0 in 2 blocks


# -- analysis on hand-built traces ---------------------------------------------------------------
def _functional_rank(rank: int) -> TraceBuilder:
    """One step whose backward runs a compiled-autograd region with two functional buckets on the
    data-parallel group, one tensor-parallel allreduce and two wait_tensor ops (times in µs)."""
    tb = TraceBuilder(rank=rank, world_size=4, pg_config=MESH_PGS)
    tb.step(1, 0, 1000)
    tb.annotation("tracekit.backward", 200, 400)
    tb.kernel("gemm", 300, 20, launch_at_us=240)                       # compute [300, 320)
    tb.cpu_op("_c10d_functional::all_reduce_coalesced_", 250, 20)
    tb.collective("allreduce_coalesced", 300, 40, launch_at_us=255, nelems=1000, pg="1", pg_desc="mesh_dp",
                  group_size=2, pg_ranks=[0, 2], op_dur_us=5)           # kernel [300, 340)
    tb.cpu_op("_c10d_functional::all_reduce_", 280, 20)
    tb.collective("allreduce", 340, 20, launch_at_us=285, nelems=500, pg="1", pg_desc="mesh_dp",
                  group_size=2, pg_ranks=[0, 2], op_dur_us=5)           # kernel [340, 360)
    tb.cpu_op("_c10d_functional::all_reduce", 302, 10)
    tb.collective("allreduce", 370, 10, launch_at_us=305, nelems=100, pg="3", pg_desc="mesh_tp",
                  group_size=2, pg_ranks=[0, 1], op_dur_us=5)           # TP: not a gradient bucket
    tb.cpu_op("_c10d_functional::wait_tensor", 330, 15)                 # [330, 345)
    tb.cpu_op("_c10d_functional::wait_tensor", 350, 5)                  # [350, 355)
    return tb


def test_functional_buckets_and_waits(tmp_path: Path) -> None:
    for r in range(4):
        _functional_rank(r).write(tmp_path / f"rank{r}.trace.json.gz")
    res = analyze(load(tmp_path))
    b = res.buckets[res.buckets["rank"] == 0].sort_values("bucket")
    assert b["launch_op"].tolist() == ["_c10d_functional::all_reduce_coalesced_", "_c10d_functional::all_reduce_"]
    assert b["pg_name"].tolist() == ["1", "1"] and b["bytes"].tolist() == [4000, 2000]
    # on the device's clock, to_device(t) = min(t + lag of the last launch at or before t, start of the next
    # launched): the backward start (200) has no launch before it (lag 0); the launch at 255 follows the gemm's
    # (240 -> 300: lag 60) and precedes its own kernel's (256 -> 300); the launch at 285 follows bucket 0's
    # (256 -> 300: lag 44), before its own (286 -> 340)
    assert b["launch_offset_us"].tolist() == [min(255 + 60, 300) - 200, min(285 + 44, 340) - 200]
    # first wait_tensor after each launch starts at 330, after the TP allreduce's launch (306 -> 370: lag 64)
    assert b["wait_offset_us"].tolist() == [330 + 64 - 200, 330 + 64 - 200]
    # time inside wait_tensor while in flight: bucket 0 [255, 340) meets [330, 345) for 10 µs;
    # bucket 1 [285, 360) meets [330, 345) and [350, 355): 15 + 5
    assert b["wait_cpu_us"].tolist() == [340 - 330, (345 - 330) + (355 - 350)]
    assert b["exposed_us"].tolist() == [40 - 20, 20]  # compute covers [300, 320) of bucket 0
    s = C.to_frame(bucket_summary(res.buckets))
    assert s.loc[s["rank"] == 0, "op"].tolist() == ["all_reduce_coalesced_", "all_reduce_"]
    # every table keeps the process groups apart
    cs = C.to_frame(collective_summary(res.collectives))
    assert sorted(cs.loc[cs["rank"] == 0, "pg"]) == ["1:mesh_dp", "1:mesh_dp", "3:mesh_tp"]
    # cross-rank matching: the same pg name on all four ranks (hand-built), 3 instances per step
    assert len(res.instances) == 3 and set(res.instances["pg_name"]) == {"1", "3"}


def test_gloo_groups_from_the_probe_map() -> None:
    from tracekit.analyses.functional import gloo_thread_groups
    from tracekit.profile.pg_probe import threads_by_group

    # a probe trace: two annotations on the main thread, the gloo ranges they caused on worker threads
    ev = [{"ph": "X", "name": "tracekit.pg_probe:1", "ts": 0, "dur": 100, "tid": 1},
          {"ph": "X", "name": "tracekit.pg_probe:3", "ts": 200, "dur": 100, "tid": 1},
          {"ph": "X", "name": "gloo:all_reduce", "ts": 10, "dur": 5, "tid": 50},
          {"ph": "X", "name": "gloo:all_reduce", "ts": 20, "dur": 5, "tid": 53},
          {"ph": "X", "name": "gloo:all_reduce", "ts": 210, "dur": 5, "tid": 51},
          {"ph": "X", "name": "gloo:all_reduce", "ts": 220, "dur": 5, "tid": 52},
          {"ph": "X", "name": "gloo:all_reduce", "ts": 230, "dur": 5, "tid": 53},   # 53 under both: dropped
          {"ph": "X", "name": "gloo:all_reduce", "ts": 150, "dur": 5, "tid": 54}]   # under none: unmapped
    tmap = threads_by_group(ev)
    assert tmap == {"50": "1", "51": "3", "52": "3"}

    class FakeRank:  # the one attribute gloo_thread_groups reads
        distributed_info = {"pg_config": MESH_PGS}

    import numpy as np
    names, descs = gloo_thread_groups(FakeRank(), np.array([50, 51, 53]), tmap)
    assert names.tolist() == ["1", "3", None] and descs.tolist() == ["mesh_dp", "mesh_tp", None]


def test_probe_repeats_until_every_group_shows_all_its_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch.distributed as dist
    from tracekit.profile import pg_probe

    def probe_trace(*threads: tuple[str, int]) -> list[dict]:
        ev = [{"ph": "X", "name": f"tracekit.pg_probe:{g}", "ts": 100 * i, "dur": 50, "tid": 1}
              for i, g in enumerate(("1", "3"))]
        return ev + [{"ph": "X", "name": "gloo:all_reduce", "ts": 100 * ("1", "3").index(g) + 10, "dur": 5,
                      "tid": t} for g, t in threads]

    # pass 1: one worker thread took all of group 1's allreduces; pass 2 sees the other; pass 3 must not run
    passes = [probe_trace(("1", 50), ("3", 52), ("3", 53)), probe_trace(("1", 51), ("3", 52), ("3", 53)),
              probe_trace(("1", 99))]
    sizes, agreed = [], []
    monkeypatch.setattr(pg_probe, "_probe_pass", lambda g, n, rounds: (sizes.append(rounds), passes.pop(0))[1])
    monkeypatch.setattr(dist, "all_reduce", lambda flag, op=None: agreed.append(int(flag.item())))
    groups = [type("G", (), {"group_name": "1"})(), type("G", (), {"group_name": "3"})()]
    tmap = pg_probe.gloo_thread_map(groups)
    assert tmap == {"50": "1", "51": "1", "52": "3", "53": "3"}
    assert agreed == [1, 0] and sizes == [pg_probe.ROUNDS, 2 * pg_probe.ROUNDS]


def test_gloo_group_only_when_unambiguous(tmp_path: Path) -> None:
    # gloo records no group args: with one group it is that group; with a mesh it stays unknown
    for pgs, want in (([{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": [0, 1]}], ["0", "0"]),
                      (MESH_PGS, [None, None])):
        for r in range(2):
            tb = TraceBuilder(rank=r, world_size=2, backend="gloo", pg_config=pgs)
            tb.step(1, 0, 1000)
            tb.annotation("tracekit.backward", 100, 800)
            tb.cpu_op("c10d::allreduce_", 200, 5)
            tb.annotation("gloo:all_reduce", 210, 30, tid=60)
            tb.cpu_op("c10d::allreduce_", 300, 5)
            tb.annotation("gloo:all_reduce", 310, 100, tid=50)
            tb.write(tmp_path / f"rank{r}.trace.json.gz")
        res = analyze(load(tmp_path))
        c = res.collectives[res.collectives["rank"] == 0].sort_values("launch_ts_ns")
        assert c["pg_name"].tolist() == want
        assert c["dur_us"].tolist() == [30, 100] and len(res.buckets[res.buckets["rank"] == 0]) == 2


# -- structure (issue 11 item 5; the import rules are tests/test_architecture.py) ----------------------
def test_profile_and_bench_share_option_definitions() -> None:
    from tracekit.cli.bench import ddp_command
    from tracekit.cli.profile import profile_command

    def opts(cmd) -> dict:  # noqa: ANN001
        return {p.name: (p.default, p.help) for p in cmd.params}

    prof, bench = opts(profile_command), opts(ddp_command)
    shared = {"device", "timeout_s", "seq_len", "heads", "bucket_cap_mb",
              "first_bucket_cap_mb", "static_graph", "gradient_as_bucket_view", "comm_hook", "amp", "dynamo",
              "optimize_ddp", "inductor_ddp_fusion", "inductor_ddp_bucket_mb"}
    assert shared <= set(prof) and shared <= set(bench)
    assert all(prof[k] == bench[k] for k in shared)
    # the model shape and batch are the same options, but profile resolves its defaults per model and
    # device (ProfileConfig: toy 2048 x 8, batch 4096 on cuda) where bench keeps a fixed 256 x 4, batch 32
    shape = {"width", "depth", "batch_size"}
    assert shape <= set(prof) and shape <= set(bench)
    assert all(prof[k][0] is None and bench[k][0] is not None for k in shape)


# -- committed GPU samples (benchmarks/gpu/compiled_autograd.sh, 2 x H200) ----------------------------
SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces" / "fixtures/h200x2_compiled_autograd"


def test_tp2_sample_has_no_gradient_buckets() -> None:
    import tracekit

    res = tracekit.analyze(SAMPLES / "tp2-replicate-transformer")
    man = res.meta["manifest"]
    assert man.config["tp"] == 2 and man.run.parallel_applied["tensor_parallel"]["colwise"] == 8
    c = res.collectives
    # mesh (1, 2): the tp dimension spans both ranks and reuses the default group; dp = 1 has no collectives
    assert set(c["pg_desc"]) == {"default_pg"} and (c["group_size"] == 2).all()
    per_step = c.groupby(["rank", "step", "phase"]).size()
    assert (per_step.xs("forward", level="phase") == 8).all()  # 4 blocks x (proj + mlp.2) rowwise outputs
    assert (per_step.xs("backward", level="phase") == 8).all()  # 4 blocks x (qkv + mlp.0) colwise input grads
    assert len(res.buckets) == 0 and "backward_comm_exposed" not in set(res.findings["code"])


def test_replicate_sample_breaks_are_in_the_wrapper() -> None:
    import json

    from tracekit.profile.compile_facts import _origin

    def breaks(name: str) -> dict:
        return json.loads((SAMPLES / name / "run.json").read_text())["compile"]["per_rank"][0]["graph_breaks"]

    # the same model compiled inside DDP has no break: replicate's breaks come from its forward hooks
    assert breaks("inductor")["total"] == 0
    rep = breaks("replicate-inductor")
    assert rep["total"] == 9 and rep["model"] == 6  # as recorded, before the markers below existed
    # the reasons carry no file; the classifier now knows replicate's lazy init and the reducer by name
    assert sum(r["count"] for r in rep["reasons"] if _origin(r["detail"]) == "ddp_wrapper") == 5


# -- python reducer + inductor on 2 x H200 (sample_traces/fixtures/h200x2_python_reducer, one --compare run) ---------
PR_SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces" / "fixtures/h200x2_python_reducer"


@pytest.mark.parametrize(("variant", "op", "per_step"), [
    ("inductor-python_reducer", "all_reduce_", 5),                     # concat fusion: 25 MB buckets
    # a bucket of one tensor (the last weight, 16.8 MB) stays a plain all_reduce_
    ("inductor-python_reducer-coalesced", "all_reduce_coalesced_|all_reduce_", 5),
    ("inductor-python_reducer-none", "all_reduce_", 16),               # no fusion: one allreduce per gradient
    ("replicate-inductor-python_reducer", "all_reduce_", 5),
])
def test_python_reducer_gpu_samples(variant: str, op: str, per_step: int) -> None:
    import json

    import tracekit

    man = json.loads((PR_SAMPLES / variant / "run.json").read_text())
    graphs = man["buckets"]["compiled_autograd"]["graphs"]
    # torch 2.11 + CUDA: fullgraph compile of the captured backward fails, the recorded fallback runs
    assert len(graphs) == 1 and graphs[0]["fullgraph"] is False
    assert graphs[0]["fullgraph_failed"] == "Attempt to trace generator"
    fused = man["buckets"]["compiled_autograd"]["inductor_ddp_fusion"]["fuse_ddp_communication"]
    assert fused is (not variant.endswith("-none"))
    res = tracekit.analyze(PR_SAMPLES / variant)
    b = res.buckets
    assert set(b["launch_op"]) == {f"_c10d_functional::{o}" for o in op.split("|")}
    # 8 x Linear(2048): 16 gradients of 16.8 MB (weights) and 8 KB (biases); 5 buckets hold all 134 MB
    assert (b.groupby(["rank", "step"]).size() == per_step).all()
    total_mb = b.groupby(["rank", "step"])["bytes"].sum() / 1e6
    assert ((total_mb - 8 * (2048 * 2048 + 2048) * 4 / 1e6).abs() < 0.01).all()


def test_fullgraph_failure_names_the_user_frames() -> None:
    import traceback

    from tracekit.profile.compiled_autograd import _user_frames

    e = RuntimeError("Attempt to trace generator")
    assert _user_frames(e) is None  # a torch that attaches no stack
    e.real_stack = traceback.StackSummary.from_list([("a.py", i, f"f{i}", None) for i in range(1, 9)])
    assert _user_frames(e) == [f"a.py:{i} in f{i}" for i in range(3, 9)]  # the innermost six


def test_root_cause_follows_the_exception_chain() -> None:
    from tracekit.profile.compiled_autograd import root_cause

    try:
        try:
            raise RuntimeError("aten::_local_scalar_dense() Expected a value of type 'Tensor'")
        except RuntimeError:
            raise ValueError("Attempt to trace generator")  # raised while handling: __context__
    except ValueError as e:
        assert str(root_cause(e)).startswith("aten::_local_scalar_dense()")
    lone = KeyError("x")
    assert root_cause(lone) is lone


def test_run_summary_names_the_fullgraph_failure_and_its_retry() -> None:
    from tracekit.traces.manifest import decode_manifest
    from tracekit.report.render import compiled_autograd_rows

    graph = {"graph": 0, "nodes": 191, "fullgraph": False, "dynamo_graphs": 1, "allreduce_calls": 16,
             "fullgraph_failed": "RuntimeError: aten::_local_scalar_dense() Expected a value of type 'Tensor'",
             "fullgraph_failed_masked_by": "Attempt to trace generator"}
    man = decode_manifest({"buckets": {"inductor_ddp_buckets": 5, "compiled_autograd": {"graphs": [graph]}}}, "run.json")
    ((key, line),) = compiled_autograd_rows(man)
    assert key == "compiled autograd (capture 0)"
    assert "1 dynamo graph(s), 16 allreduces before inductor's fusion, 5 buckets after it" in line
    assert "_local_scalar_dense" in line and "(reported as: Attempt to trace generator); retried" in line
    # a manifest written before the retry kept its counts: they are unknown, not zero
    old = decode_manifest({"buckets": {"compiled_autograd": {"graphs": [{**graph, "dynamo_graphs": 0,
                                                                         "allreduce_calls": 0}]}}}, "run.json")
    assert "not recorded" in compiled_autograd_rows(old)[0][1]
    assert compiled_autograd_rows(decode_manifest({}, "run.json")) == []
