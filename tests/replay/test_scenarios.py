"""What-if scenarios (tracekit.replay.scenarios) on hand-built traces: every expected time is arithmetic."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tracekit
from tracekit.analyses.classify import COMM, classify_gpu
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze
from tracekit.cli import main
from tracekit.errors import ConfigError, ScenarioError
from tracekit.traces.manifest import read_manifest
from tracekit.replay import costs as cost_model
from tracekit.replay import ddp, network, simulate
from tracekit.replay import scenarios as sc
from tracekit.replay.api import whatif_traces
from tracekit.replay.graph import COLL, GPU_OP

from tests.replay.test_replay import _late_rank_run, _step_us
from tests.profile.test_run import _env
from tests.tracebuilder import TraceBuilder

US = 1000
MIB = 1 << 20


def _scenario(paths, scenario: sc.Scenario):
    """(base graph, scenario graph, its start, end) with no profiler cost taken out."""
    traces, res = load_and_analyze([str(p) for p in paths], RunOptions.of(keep_events=True))
    coll = res.tables.get("collectives")
    g = simulate.build(traces, coll, cost_model.NONE)
    comm = {rt.rank: np.asarray(classify_gpu(rt).array == COMM) if rt.has_gpu_activity else np.zeros(0, bool)
            for rt in traces}
    ctx = sc.context(g, traces, coll, None, comm)
    out, _, notes = sc.apply(g, ctx, scenario)
    return g, out, *simulate.evaluate(out)


def _kernel_end(g, end, rank: int, orig_start_us: float) -> float:
    origin = min(g.orig_start)
    v = next(v for v in range(len(g.dur)) if g.kind[v] == GPU_OP and g.rank[v] == rank
             and g.orig_start[v] - origin == orig_start_us * US)
    return end[v] / US


def test_alpha_beta_fit_and_scaling():
    # 1 MB in 1100 ns, 2 MB in 2100 ns: 100 ns latency + 1 ns per kB
    ab = network.fit(np.array([1e6, 2e6, 1e6]), np.array([1100.0, 2100.0, 1100.0]))
    assert ab.alpha_ns == pytest.approx(100.0) and ab.ns_per_byte == pytest.approx(1e-3)
    assert ab.transfer_ns(4e6) == pytest.approx(4100.0)
    # one size: latency not separable, everything scales
    one = network.fit(np.array([1e6, 1e6]), np.array([1000.0, 1200.0]))
    assert one.alpha_ns == 0 and one.ns_per_byte == pytest.approx(1.1e-3) and one.note
    assert network.ring(2) == 1.0 and network.ring(4) == 1.5 and network.ring(1) == 0.0


def _queued_run(tmp_path: Path) -> list[Path]:
    """Two identical ranks, one step [0, 600] µs: four 1 MiB allreduces launched at 3, 5, 7, 9 (their
    cuLaunchKernelEx) on stream 17, queued behind each other: [5, 105], [110, 210], [215, 315], [415, 515]
    (5, 5 and 100 µs after the one before ends: an NCCL kernel waits for SMs a GEMM holds); a gemm launched
    at 20 on stream 7 runs [23, 33]; the host synchronizes at [520, 530]."""
    paths = []
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 600)
        for launch, start in ((2, 5), (4, 110), (6, 215), (8, 415)):
            tb.nccl_allreduce(start, 100, launch_at_us=launch, nelems=MIB // 4, op_dur_us=1)
        tb.kernel("gemm", 23, 10, stream=7, launch_at_us=20)
        tb.launch(520, 990, name="cudaDeviceSynchronize", dur_us=10)
        paths.append(tb.write(tmp_path / f"rank{rank}.trace.json.gz"))
    return paths


def test_a_queued_collective_follows_the_one_before_it_not_its_launch(tmp_path):
    # launch-bound ops (stream idle at launch): the first allreduce (latency 5 - 3 = 2 µs) and the gemm (3 µs):
    # the rank's typical latency is 2.5 µs. The other three allreduces were launched while their stream was busy
    # (queued): their recorded latencies (105, 208 and 406 µs) are not launch latencies. Their gaps after the one
    # before (5, 5, 100 µs) are kept when the recording is replayed; the prediction keeps at most 3 x their
    # median, 15 µs
    paths = _queued_run(tmp_path)
    traces, res = load_and_analyze([str(p) for p in paths])
    g = simulate.build(traces, res.tables.get("collectives"), cost_model.NONE)
    rec = g.recorded()
    start, end = simulate.evaluate(rec)
    assert [_kernel_end(rec, end, 0, s) for s in (5, 110, 215, 415)] == [105, 210, 315, 515]
    start, end = simulate.evaluate(g)
    assert [_kernel_end(g, end, 0, s) for s in (5, 110, 215, 415)] == [105, 210, 315, 315 + 15 + 100]
    # twice the bandwidth: 50 µs each, 5, 5 and 15 µs apart (were every op that started over 1 µs after the one
    # before counted as launch-bound, they would stay at [110, 160], [215, 265], [415, 465])
    _, out, start, end = _scenario(paths, sc.Scenario(bandwidth_x=2.0))
    assert [_kernel_end(out, end, r, s) for r in (0, 1) for s in (5, 110, 215, 415)] == [55, 110, 165, 230] * 2


def test_bandwidth_and_world_size_scale_the_transfer(tmp_path, monkeypatch):
    # the late-rank run: the allreduce's transfer is 10 µs (rank 1 arrives at 52, both end at 62); one
    # message size, so the whole transfer is the bandwidth term
    paths = _late_rank_run(tmp_path)
    g, out, start, end = _scenario(paths, sc.Scenario(bandwidth_x=2.0))
    assert _kernel_end(out, end, 0, 12) == _kernel_end(out, end, 1, 52) == 52 + 10 / 2
    _, out, start, end = _scenario(paths, sc.Scenario(world_size=4))  # ring 2(n-1)/n: 1.5 / 1.0
    assert _kernel_end(out, end, 0, 12) == 52 + 10 * 1.5
    _, out, start, end = _scenario(paths, sc.Scenario(world_size=4, bandwidth_x=2.0))
    assert _kernel_end(out, end, 1, 52) == 52 + 10 * 1.5 / 2
    _, out, start, end = _scenario(paths, sc.Scenario(world_size=1))  # no peer: no transfer, no wait
    assert _kernel_end(out, end, 0, 12) == 12 and _kernel_end(out, end, 1, 52) == 52
    from tracekit.replay import hook

    monkeypatch.setattr(hook, "HOOK_CPU_NS", 0.0)  # the transfer alone (the hook's CPU work: test_whatif_hook_launch)
    _, out, start, end = _scenario(paths, sc.Scenario(comm_hook="bf16"))  # fp32 allreduce: half the bytes
    assert _kernel_end(out, end, 0, 12) == 52 + 10 / 2
    assert g.dur == simulate.build(*_loaded(paths), cost_model.NONE).dur  # the base graph is not edited


def _loaded(paths):
    traces, res = load_and_analyze([str(p) for p in paths], RunOptions.of(keep_events=True))
    return traces, res.tables.get("collectives")


def _bucket_run(tmp_path: Path, rebuilt: str = "0 1, 2 3") -> Path:
    """Two identical ranks, one step [0, 300]; backward [10, 200] makes 4 gradients of 1 MiB, ready (end of
    AccumulateGrad) at 40, 60, 80, 100, each computed by a 5 µs kernel ending 5 µs before. Recorded cap 2 MiB: buckets {p0, p1} and {p2, p3}, launched 1 µs after
    their last gradient; kernels start 3 µs after it and take 20 µs: [63, 83] and [103, 123]."""
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 300)
        tb.annotation("tracekit.backward", 10, 190)
        for ready in (40, 60, 80, 100):
            tb.kernel("gemm_bwd", ready - 10, 5, launch_at_us=ready - 12)  # the gradient's compute
            tb.cpu_op("torch::autograd::AccumulateGrad", ready - 5, 5)
        for ready in (60, 100):
            tb.nccl_allreduce(ready + 3, 20, launch_at_us=ready + 1, nelems=MIB // 2, op_dur_us=1)
        tb.launch(250, 990, name="cudaDeviceSynchronize", dur_us=1)
        tb.write(tmp_path / f"rank{rank}.trace.json.gz")
    (tmp_path / "run.json").write_text(json.dumps({
        "schema_version": 1, "run": {"world_size": 2, "device": "cuda", "backend": "nccl"},
        "buckets": {"reducer": {"bucket_cap_bytes": 2 * MIB, "rebuilt_bucket_sizes_bytes": [2 * MIB, 2 * MIB],
                                "rebuilt_per_bucket_param_indices": rebuilt, "param_bytes": [MIB] * 4}}}))
    return tmp_path


def _new_buckets(base, out, start, end, rank: int = 0) -> list[tuple[float, float]]:
    return [(start[v] / US, end[v] / US) for v in range(len(base.dur), len(out.dur))
            if out.kind[v] == GPU_OP and out.rank[v] == rank]


def test_bucket_regrouping_moves_the_allreduces(tmp_path):
    paths = [_bucket_run(tmp_path)]  # the folder: its run.json has the layout
    assert ddp.assign([MIB] * 4, 2 * MIB) == [[0, 1], [2, 3]]  # DDP's rule reproduces the recorded layout
    # 20 µs per 2 MiB (one size: no latency term) -> 10 µs per MiB; a bucket starts 3 µs after its last gradient
    base, out, start, end = _scenario(paths, sc.Scenario(bucket_cap_mb=2))
    assert _new_buckets(base, out, start, end) == [(63, 83), (103, 123)]  # the recorded layout, reproduced
    base, out, start, end = _scenario(paths, sc.Scenario(bucket_cap_mb=1))
    assert _new_buckets(base, out, start, end) == [(43, 53), (63, 73), (83, 93), (103, 113)]
    assert _new_buckets(base, out, start, end, rank=1) == [(43, 53), (63, 73), (83, 93), (103, 113)]
    base, out, start, end = _scenario(paths, sc.Scenario(bucket_cap_mb=4))
    assert _new_buckets(base, out, start, end) == [(103, 143)]
    base, out, start, end = _scenario(paths, sc.Scenario(bucket_cap_mb=4, first_bucket_cap_mb=1))
    assert _new_buckets(base, out, start, end) == [(43, 53), (103, 133)]
    # with twice the bandwidth too: 5 µs per MiB
    base, out, start, end = _scenario(paths, sc.Scenario(bucket_cap_mb=4, bandwidth_x=2.0))
    assert _new_buckets(base, out, start, end) == [(103, 123)]
    # the recorded kernels keep no transfer; the last one ends with the last new bucket (what waited for the
    # backward's allreduces waits for the new ones)
    origin = min(out.orig_start)
    k0, k1 = (next(v for v in range(len(base.dur)) if out.kind[v] == GPU_OP and out.rank[v] == 0
                   and out.orig_start[v] - origin == t * US) for t in (63, 103))
    assert (end[k0] / US, end[k1] / US) == (63, 123) and out.dur[k0] == out.dur[k1] == 0 and out.notes == []


def test_whatif_sweep_json_and_csv(tmp_path):
    run = _bucket_run(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(run, sweep=["bucket-cap-mb=1,4"])
    assert [s["name"] for s in r.scenarios] == ["bucket-cap-mb=1", "bucket-cap-mb=4"]
    assert [s["changes"] for s in r.scenarios] == [{"bucket_cap_mb": 1.0}, {"bucket_cap_mb": 4.0}]
    for s in r.scenarios:
        assert s["delta_us"] == pytest.approx(s["predicted_step_us"] - r.baseline["predicted_step_us"])
        assert s["delta_pct"] == pytest.approx(100 * s["delta_us"] / r.baseline["predicted_step_us"])
        assert {"compute_us", "exposed_comm_us", "idle_us", "delta_exposed_comm_us"} <= set(s)
    # one 4 MiB bucket after the backward exposes more communication than four 1 MiB ones
    assert r.scenarios[1]["exposed_comm_us"] > r.scenarios[0]["exposed_comm_us"]
    res = CliRunner().invoke(main, ["whatif", str(run), "--sweep", "bucket-cap-mb=1,4", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    assert [s["predicted_step_us"] for s in doc["scenarios"]] == pytest.approx(
        [s["predicted_step_us"] for s in r.scenarios])
    assert set(doc["scenario_ranks"][0]) >= {"scenario", "rank", "predicted_step_us"}
    res = CliRunner().invoke(main, ["whatif", str(run), "--bucket-cap-mb", "1", "--format", "csv"])
    assert res.exit_code == 0 and res.output.splitlines()[0].startswith("name,predicted_step_us,delta_us")
    # the timeline drawn by --html: both ranks' step 1, window and prediction, the two allreduces
    tl = r.timeline
    assert set(tl["source"]) == {"window", "predicted"} and set(tl["rank"]) == {0, 1}
    comm = tl[(tl["source"] == "window") & (tl["lane"] == "GPU comm") & (tl["rank"] == 0)]
    assert comm[["start_us", "end_us"]].values.tolist() == [[63.0, 83.0], [103.0, 123.0]]
    page = tmp_path / "w.html"
    res = CliRunner().invoke(main, ["whatif", str(run), "--sweep", "bucket-cap-mb=1,4", "--html", str(page)])
    assert res.exit_code == 0, res.output
    text = page.read_text()
    assert text.count("Plotly.newPlot") == 2 and "bucket-cap-mb=4" in text


def test_scenarios_in_forked_processes_equal_the_serial_ones(monkeypatch):
    """A committed 2-rank NCCL run (bucket layout in run.json): the scenarios of a sweep spread over two
    processes (the node threshold set to 0; the CPU count to 2) give exactly the serial result: figures,
    per-rank table and notes."""
    run = next(p for p in sorted((Path(__file__).parents[2] / "sample_traces").rglob("run.json"))
               if "whatif/h200x2_nccl_scenarios" in str(p)).parent
    opts = {"sweep": ["bucket-cap-mb=1,5,100", "comm-hook=bf16,fp16"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        serial = tracekit.whatif(run, **opts).to_dict()
        monkeypatch.setattr(sc, "PARALLEL_MIN_NODES", 0)
        monkeypatch.setattr(sc, "usable_cpus", lambda: 2)
        calls = []
        real = sc.map_forked
        monkeypatch.setattr(sc, "map_forked", lambda fn, items, workers: calls.append(workers) or real(fn, items, workers))
        forked = tracekit.whatif(run, **opts).to_dict()
    assert calls == [2]
    assert json.dumps(forked, sort_keys=True, default=str) == json.dumps(serial, sort_keys=True, default=str)
    assert len(forked["scenarios"]) == 6


def test_map_forked_keeps_order_and_raises_as_serially():
    from tracekit.runner.per_rank import map_forked

    assert map_forked(lambda x: (x, x * x), list(range(7)), 3) == [(x, x * x) for x in range(7)]
    assert map_forked(lambda x: x + 1, [5], 4) == [6]

    def boom(x: int) -> int:
        if x == 3:
            raise ScenarioError(f"no {x}")
        return x
    with pytest.raises(ScenarioError, match="no 3"):
        map_forked(boom, list(range(6)), 2)  # item 3 runs in the child (this process takes 0, 2 and 4)


def test_scenarios_that_cannot_apply(tmp_path):
    (tmp_path / "b").mkdir()
    run = _bucket_run(tmp_path / "b")
    # no graph break to remove: a note when another scenario applies, exit 2 when none does
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(run, sweep=["bandwidth-x=2"], no_graph_breaks=False)
    assert len(r.scenarios) == 1
    res = CliRunner().invoke(main, ["whatif", str(run), "--no-graph-breaks"])
    assert res.exit_code == 2 and "no-graph-breaks" in res.output and "no graph break" in res.output
    assert len(res.output.strip().splitlines()) == 1 and str(run) in res.output
    res = CliRunner().invoke(main, ["whatif", str(run), "--sweep", "world-size=1,2", "--comm-hook", "bf16",
                                    "--format", "json"])
    assert res.exit_code == 0  # NCCL: the hook applies
    # bucket scenario on a trace without run.json; comm hook on gloo
    (tmp_path / "late").mkdir()
    paths = _late_rank_run(tmp_path / "late")
    with pytest.raises(ScenarioError, match="late: scenario bucket-cap-mb=5 cannot be predicted: no run.json"):
        tracekit.whatif(tmp_path / "late", bucket_cap_mb=5)
    traces, res = load_and_analyze([str(tmp_path / "late")], RunOptions.of(keep_events=True))
    r = whatif_traces(traces, res.tables["collectives"], res.meta,
                      scenarios=[sc.Scenario(bucket_cap_mb=5), sc.Scenario(bandwidth_x=2)])
    assert [s["name"] for s in r.scenarios] == ["bandwidth-x=2"]
    assert "scenario bucket-cap-mb=5 cannot be predicted: no run.json" in r.notes
    assert len(paths) == 2
    with pytest.raises(ConfigError):
        tracekit.whatif(run, sweep=["nonsense=1"])
    with pytest.raises(ConfigError):
        tracekit.whatif(run, bandwidth_x=0)
    with pytest.raises(ScenarioError, match="gloo"):
        network.hook_factor("bf16", "gloo", "none")


def _break_run(tmp_path: Path, accumulate: bool = False) -> Path:
    """One rank, step [0, 100]: graph A (region 0/0 [5, 35], CompiledFunction [10, 30]) breaks; eager code
    [32, 48]; graph B (region 1/0 [50, 85], CompiledFunction [52, 78]) launches a 10 µs kernel at 60 (runs
    [62, 72]). What a merged graph would not run is the CPU work from A's last launch (none: A's end, 30)
    to B's first launch (60): the eager code, B's region entry and B's prologue, 30 µs."""
    tb = TraceBuilder(rank=0, world_size=1)
    tmp_path.mkdir(exist_ok=True)
    tb.step(1, 0, 100)
    tb.cpu_op("Torch-Compiled Region: 0/0", 5, 30)
    tb.cpu_op("CompiledFunction", 10, 20)
    tb.cpu_op("aten::mul", 32, 16)
    if accumulate:  # work that runs without the break too: kept
        tb.cpu_op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 40, 5)
    tb.cpu_op("Torch-Compiled Region: 1/0", 50, 35)
    tb.cpu_op("CompiledFunction", 52, 26)
    tb.kernel("triton_fwd", 62, 10, launch_at_us=60)
    return tb.write(tmp_path / "rank0.trace.json.gz")


def test_no_graph_breaks_removes_the_gap(tmp_path):
    path = _break_run(tmp_path)
    base, out, start, end = _scenario([path], sc.Scenario(no_graph_breaks=True))
    assert _step_us(out, start, end) == [100.0 - 30.0]
    assert _kernel_end(out, end, 0, 62) == 72 - 30
    base, out, start, end = _scenario([_break_run(tmp_path / "acc", accumulate=True)], sc.Scenario(no_graph_breaks=True))
    assert _step_us(out, start, end) == [100.0 - 30.0 + 5.0]


def _gloo_bucket_manifest(tmp_path: Path) -> None:
    """run.json of the two-rank gloo runs below: cap 2 MiB given, buckets {p0, p1} and {p2, p3} of 1 MiB each."""
    (tmp_path / "run.json").write_text(json.dumps({
        "schema_version": 1, "run": {"world_size": 2, "device": "cpu", "backend": "gloo"},
        "config": {"bucket_cap_mb": 2},
        "buckets": {"reducer": {"bucket_cap_bytes": 2 * MIB, "rebuilt_bucket_sizes_bytes": [2 * MIB, 2 * MIB],
                                "rebuilt_per_bucket_param_indices": "0 1, 2 3", "param_bytes": [MIB] * 4}}}))


def _gloo_backward(rank: int) -> TraceBuilder:
    """One of two CPU/gloo ranks, one step [0, 300]; backward [10, 200] makes 4 gradients of 1 MiB (the
    ``AccumulateGrad`` ops end at 40, 60, 80, 100)."""
    tb = TraceBuilder(rank=rank, world_size=2, backend="gloo")
    tb.step(1, 0, 300)
    tb.annotation("tracekit.backward", 10, 190)
    for ready in (40, 60, 80, 100):
        tb.cpu_op("torch::autograd::AccumulateGrad", ready - 5, 5)
    return tb


def _gloo_bucket_run(tmp_path: Path) -> Path:
    """Two identical CPU/gloo ranks, one step [0, 300]; backward [10, 200] makes 4 gradients of 1 MiB, ready at
    40, 60, 80, 100. Recorded cap 2 MiB: buckets {p0, p1} and {p2, p3}, launched (``record_param_comms``) 1 µs
    after their last gradient; one gloo worker runs them 2 µs later, 40 µs each: [63, 103], then the second,
    queued behind the first, [105, 145] (its worker's 2 µs between them is work, not a wait)."""
    for rank in (0, 1):
        tb = _gloo_backward(rank)
        for launch, start in ((61, 63), (101, 105)):
            tb.collective("allreduce", start, 40, launch, MIB // 2, with_kernel=False, op_dur_us=1)
            tb.annotation("gloo:all_reduce", start, 40, tid=2000)
        tb.write(tmp_path / f"rank{rank}.trace.json.gz")
    _gloo_bucket_manifest(tmp_path)
    return tmp_path


def test_a_regrouped_gloo_bucket_is_not_launched_by_its_workers_queue(tmp_path):
    """Cap 1 MiB: the new bucket {p3} completes the recorded second bucket, whose worker picked it up after the
    first; the first, ending at 103, waits for the new buckets ready before then (all four). Taking the second's
    start edges whole (the worker's segment after the first) made {p3} wait for itself: a dependency cycle.
    Each new bucket is launched 1 µs after its gradient and starts 2 µs later (the recorded medians) or, once a
    worker is free, 2 µs after the one before it ended (one worker recorded); 20 µs each (40 µs per 2 MiB, one
    size: no latency term)."""
    paths = [_gloo_bucket_run(tmp_path)]
    base, out, start, end = _scenario(paths, sc.Scenario(bucket_cap_mb=1))
    assert out.notes == []
    new = [(start[v] / US, end[v] / US) for v in range(len(base.dur), len(out.dur))
           if out.kind[v] == COLL and out.rank[v] == 0]
    # one worker thread ran the recorded buckets: a new one starts 2 µs after the one before it ends, or later
    assert new == [(40 + 3, 63), (63 + 2, 85), (85 + 2, 107), (107 + 2, 129)]
    base, out, start, end = _scenario(paths, sc.Scenario(bucket_cap_mb=2))  # the recorded layout, as recorded
    new = [(start[v] / US, end[v] / US) for v in range(len(base.dur), len(out.dur))
           if out.kind[v] == COLL and out.rank[v] == 0]
    assert new == [(63, 103), (105, 145)] and out.notes == []


def test_ddp_default_caps_have_a_1_mib_first_bucket():
    """DDP left at its default cap (run.json ``config.bucket_cap_mb`` null) cuts its first bucket at 1 MiB
    (``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``); a cap given explicitly caps the first bucket too. Params
    in ready order: a 2 KiB bias, a 1 MiB weight, three times: the default cuts {b, w} (1 MiB + 2 KiB >= 1 MiB)
    and the rest (< 25 MiB)."""
    from tracekit.replay.buckets import _scenario_first_cap
    from tracekit.traces.manifest import Buckets, Manifest, Reducer

    kib = 1024
    sizes = [MIB + 2 * kib, 2 * (MIB + 2 * kib)]
    red = Reducer(bucket_cap_bytes=25 * MIB, rebuilt_bucket_sizes_bytes=sizes,
                  rebuilt_per_bucket_param_indices="5 4, 3 2 1 0", param_bytes=[MIB, 2 * kib] * 3)
    lay = ddp.layout(Manifest(buckets=Buckets(reducer=red), config={"bucket_cap_mb": None}))
    assert (lay.first_cap_bytes, lay.first_cap_default) == (MIB, True)
    again = [sum(lay.param_bytes[k] for k in b) for b in ddp.assign(lay.param_bytes, lay.cap_bytes, lay.first_cap_bytes)]
    assert again == sizes
    # a scenario that gives a cap drops the default first bucket (as DDP does); one that gives the first cap keeps it
    assert _scenario_first_cap(sc.Scenario(bucket_cap_mb=25), lay) is None
    assert _scenario_first_cap(sc.Scenario(first_bucket_cap_mb=5), lay) == 5 * MIB
    assert _scenario_first_cap(sc.Scenario(world_size=4), lay) == MIB
    explicit = ddp.layout(Manifest(buckets=Buckets(reducer=red), config={"bucket_cap_mb": 25}))
    assert (explicit.first_cap_bytes, explicit.first_cap_default) == (None, False)
    assert ddp.first_cap([5, 25], {"bucket_cap_mb": 25}) == (5 * MIB, False)
    assert ddp.first_cap(None, {"bucket_cap_mb": 25, "first_bucket_cap_mb": 2}) == (2 * MIB, False)
    assert ddp.first_cap(None, {}) == (None, False)  # no config recorded: not assumed


@pytest.mark.slow
def test_gloo_two_rank_sweep(tmp_path):
    """A real 2-process gloo run with 2 buckets (cap 0.5 MiB over 4 layers of 0.5 MiB), swept over caps: run.json
    records the per-parameter sizes, DDP's rule reproduces the recorded layout, and every cap is predicted."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = _env()  # (no launcher variables of an outer job; this checkout on the path)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "tracekit", "profile", "--nproc", "2", "--device", "cpu", "--out", str(out),
           "--width", "256", "--depth", "4", "--batch-size", "8", "--warmup", "2", "--steps", "3",
           "--profile-wait", "0", "--profile-warmup", "1", "--profile-steps", "2", "--timeout", "60",
           "--bucket-cap-mb", "0.5", "--no-calibrate-profiler", "--no-bucket-timing"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env, cwd=repo)
    assert proc.returncode == 0, proc.stderr[-2000:]
    red = json.loads((out / "run.json").read_text())["buckets"]["reducer"]
    assert red["param_bytes"] == [256 * 256 * 4, 256 * 4] * 4
    lay = ddp.layout(read_manifest(out))
    assert lay.exact and len(lay.sizes) == 2
    assert [sum(lay.param_bytes[k] for k in b) for b in ddp.assign(lay.param_bytes, lay.cap_bytes)] == lay.sizes
    res = CliRunner().invoke(main, ["whatif", str(out), "--sweep", "bucket-cap-mb=0.25,0.5,4", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    assert [s["name"] for s in doc["scenarios"]] == ["bucket-cap-mb=0.25", "bucket-cap-mb=0.5", "bucket-cap-mb=4"]
    assert all(s["predicted_step_us"] > 0 for s in doc["scenarios"])
    assert any("1 bucket of 1.0 MiB" in n for n in doc["notes"])  # cap 4 MiB: one bucket for everything
    assert any("4 buckets" in n for n in doc["notes"])  # cap 0.25 MiB: one per layer


def test_layout_without_param_sizes_keeps_recorded_buckets_whole():
    from tracekit.traces.manifest import Buckets, Manifest, Reducer

    red = Reducer(bucket_cap_bytes=2 * MIB, rebuilt_bucket_sizes_bytes=[3 * MIB, 1 * MIB],
                  rebuilt_per_bucket_param_indices="2 1, 0")
    lay = ddp.layout(Manifest(buckets=Buckets(reducer=red)))
    assert not lay.exact and lay.param_bytes == [0, 3 * MIB, 1 * MIB] and lay.bucket_of == [0, 0, 1]
    assert ddp.assign(lay.param_bytes, 1 * MIB) == [[0, 1], [2]]  # a smaller cap cannot split a recorded bucket
    assert ddp.assign(lay.param_bytes, 8 * MIB) == [[0, 1, 2]]  # a larger one merges them
    with pytest.raises(ScenarioError, match="no DDP reducer layout"):
        ddp.layout(Manifest())


def test_advice_quotes_the_best_scenario_and_ranks_by_it():
    from tracekit.replay import advice

    found = [{"code": "graph_break", "rank": None, "message": "m1", "evidence": {"cost_us": 50.0}},
             {"code": "exposed_last_bucket", "rank": None, "message": "m2", "evidence": {"cost_us": 10.0}},
             {"code": "rank_waiting", "rank": 1, "message": "m3", "evidence": {"cost_us": 900.0}}]
    rows = [{"name": "no-graph-breaks", "changes": {}, "predicted_step_us": 990.0, "delta_us": -10.0, "delta_pct": -1.0},
            {"name": "bucket-cap-mb=1", "changes": {}, "predicted_step_us": 960.0, "delta_us": -40.0, "delta_pct": -4.0},
            {"name": "bucket-cap-mb=100", "changes": {}, "predicted_step_us": 1100.0, "delta_us": 100.0,
             "delta_pct": 10.0}]
    assert sc.Scenario(bucket_cap_mb=1.0) in advice.candidates(found)
    out = advice.quote(found, rows, {"predicted_step_us": 1000.0})
    assert [f["code"] for f in out] == ["exposed_last_bucket", "graph_break", "rank_waiting"]
    w = out[0]["evidence"]["whatif"]
    assert (w["scenario"], w["predicted_saving_us"], w["predicted_saving_pct"]) == ("bucket-cap-mb=1", 40.0, 4.0)
    assert "whatif" not in out[2]["evidence"] and "whatif" not in found[1]["evidence"]  # the input is not edited


def test_sweep_expansion():
    base = sc.Scenario(bandwidth_x=2.0)
    out = sc.expand(base, ["bucket-cap-mb=1,5", "--world-size=2,4"])
    assert [s.name for s in out] == ["bucket-cap-mb=1 bandwidth-x=2 world-size=2", "bucket-cap-mb=1 bandwidth-x=2 "
                                     "world-size=4", "bucket-cap-mb=5 bandwidth-x=2 world-size=2",
                                     "bucket-cap-mb=5 bandwidth-x=2 world-size=4"]
    assert sc.expand(sc.Scenario()) == [] and sc.expand(base) == [base]
    with pytest.raises(ConfigError, match="world-size"):
        sc.expand(base, ["world-size=two"])


def _split_run(tmp_path: Path, layer_mib: int) -> Path:
    """One rank, step [0, 200], two compiled regions of two DDPOptimizer subgraphs each, broken between them.
    Region 0/0 [5, 90]: A1 [10, 30] launches at 15 (kernel [18, 28]), A2 [40, 60] at 50 ([53, 63]); eager
    [92, 100]; region 1/0 [105, 190]: B1 [110, 130] at 120 ([123, 133]), B2 [140, 160] at 150 ([153, 163]).
    Launch calls last 2 µs, so the CPU work from one subgraph's last launch to the next one's first is 33 µs
    (A1|A2, a split), 68 µs (A2|B1, the break) and 28 µs (B1|B2, a split). run.json records the four
    subgraphs, one parameter of ``layer_mib`` MiB each, DDP's bucket cap 25 MiB."""
    tb = TraceBuilder(rank=0, world_size=1)
    tmp_path.mkdir(exist_ok=True)
    tb.step(1, 0, 200)
    for region, lo, dur in (("0/0", 5, 85), ("1/0", 105, 85)):
        tb.cpu_op(f"Torch-Compiled Region: {region}", lo, dur)
    for start, launch in ((10, 15), (40, 50), (110, 120), (140, 150)):
        tb.cpu_op("CompiledFunction", start, 20)
        tb.kernel("triton_fwd", launch + 3, 10, launch_at_us=launch)
    tb.cpu_op("aten::mul", 92, 8)
    tb.write(tmp_path / "rank0.trace.json.gz")
    names = [f"l{i}.weight" for i in range(4)]
    cuts = ("ddp_split", "graph_break", "ddp_split", "end")
    graphs = [{"index": i, "kind": "forward", "compile_id": ("0/0", "0/0", "1/0", "1/0")[i], "params": [names[i]],
               "cut": {"kind": cuts[i]}} for i in range(4)]
    manifest = {"graphs": {"optimize_ddp": "ddp_optimizer", "reducer_params": names, "graphs": graphs},
                "buckets": {"reducer": {"bucket_cap_bytes": 25 << 20, "param_bytes": [layer_mib << 20] * 4}}}
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    return tmp_path


def test_no_graph_breaks_removes_the_splits_the_merged_graph_would_not_have(tmp_path):
    # 1 MiB layers: each region is cut after its first layer (DDPOptimizer's first bucket, 1 MiB, is full);
    # merged, only after the third (the rest fits in one 25 MiB bucket): the split A1|A2 goes with the break
    run = _split_run(tmp_path / "small", 1)
    base, out, start, end = _scenario([run], sc.Scenario(no_graph_breaks=True))
    assert _step_us(out, start, end) == [200.0 - 33.0 - 68.0]
    assert _kernel_end(out, end, 0, 153) == 163 - 33 - 68


def test_a_break_where_ddp_optimizer_cuts_anyway_keeps_a_splits_cost(tmp_path):
    # 30 MiB layers: every layer is a bucket of its own, so the merged graph is cut at the break too;
    # the break's 68 µs shrink to the median split of the pass, (33 + 28) / 2 = 30.5 µs
    run = _split_run(tmp_path / "big", 30)
    base, out, start, end = _scenario([run], sc.Scenario(no_graph_breaks=True))
    assert _step_us(out, start, end) == [pytest.approx(200.0 - (68.0 - 30.5), abs=0.01)]


def test_without_recorded_graphs_only_the_break_goes(tmp_path):
    run = _split_run(tmp_path / "bare", 1)
    (run / "run.json").unlink()
    base, out, start, end = _scenario([run], sc.Scenario(no_graph_breaks=True))
    assert _step_us(out, start, end) == [200.0 - 68.0]


def test_profiler_probe_option_picks_a_recorded_probe_or_fails_in_one_line():
    run = Path(__file__).resolve().parents[2] / "sample_traces" / "whatif/h100_compiled_probe" / "toy-mid-break"
    res = CliRunner().invoke(main, ["whatif", str(run), "--profiler-probe", "eager", "--format", "json"])
    assert res.exit_code == 0, res.output
    pc = json.loads(res.output)["profiler_cost"]
    assert pc["source"] == "run.json (probe eager)" and pc["scale"] == 2.5
    assert pc["cpu_op_ns"] == pytest.approx(json.loads((run / "run.json").read_text())
                                            ["profiler_cost"]["probes"]["eager"]["cpu_op_ns"])
    res = CliRunner().invoke(main, ["whatif", str(run), "--profiler-probe", "nope"])
    assert res.exit_code == 2
    assert res.output.strip() == "error: run.json has no profiler calibration probe 'nope' (it has: eager, inductor)"


def _one_rank_ddp_run(tmp_path: Path) -> Path:
    """One rank of DDP over NCCL (H200), step [0, 300]: gradient kernels [30, 35], [50, 55], [70, 75], [90, 95]
    (launched 2 µs before), DDP's allreduce calls of 2 MiB (``record_param_comms``, group of one: no kernel)
    at [61, 62] and [101, 102], the optimizer's kernel launched at 110 running [115, 125], a device synchronize
    at [127, 128]."""
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 300)
    for start in (30, 50, 70, 90):
        tb.kernel("gemm_bwd", start, 5, launch_at_us=start - 2)
    for at in (61, 101):
        tb.collective("allreduce", 0, 0, at, MIB // 2, with_kernel=False, op_dur_us=1, group_size=1, pg_ranks=[0])
    tb.kernel("sgd", 115, 10, launch_at_us=110)
    tb.launch(127, 990, name="cudaDeviceSynchronize", dur_us=1)
    tb.write(tmp_path / "rank0.trace.json.gz")
    (tmp_path / "run.json").write_text(json.dumps({
        "schema_version": 1, "run": {"world_size": 1, "device": "cuda", "backend": "nccl"},
        "hardware": {"ranks": [{"rank": 0, "gpu_name": "NVIDIA H200"}]}}))
    return tmp_path


def test_one_rank_grown_to_two_gets_its_allreduces(tmp_path, monkeypatch):
    """``--world-size 2`` from one rank: a new NCCL kernel per allreduce call, 20 µs per 2 MiB at 2 ranks (the
    interconnect default patched to no latency and 2 MiB / 20 µs of bus bandwidth; x 1.5 at 4 ranks). Each
    starts when its call returns, after the one before and the compute launched before the call: [62, 82],
    [102, 122]; the optimizer's kernel, the first launched after the last call, waits for them: [122, 132].
    The gradient kernel [70, 75] ran wholly beside the first: 5 µs x 1.28."""
    from tracekit.replay import grow

    monkeypatch.setattr(grow, "NVLINK4_ALLREDUCE", {2: (0.0, 2 * MIB / 20_000)})
    base, out, start, end = _scenario([_one_rank_ddp_run(tmp_path)], sc.Scenario(world_size=2))
    new = [(start[v] / US, end[v] / US) for v in range(len(base.dur), len(out.dur))]
    assert new == [(62, 82), (102, 122)]
    assert _kernel_end(out, end, 0, 115) == 122 + 10
    gemm = next(v for v in range(len(base.dur)) if out.kind[v] == GPU_OP and out.orig_start[v] - min(out.orig_start)
                == 70 * US)
    assert out.dur[gemm] == round(5 * US * grow.CONTENTION_SLOWDOWN) and base.dur[gemm] == 5 * US
    base, out, start, end = _scenario([tmp_path], sc.Scenario(world_size=4))  # more ranks than measured: the largest
    assert [(start[v] / US, end[v] / US) for v in range(len(base.dur), len(out.dur))] == [(62, 92), (102, 132)]
    res = CliRunner().invoke(main, ["whatif", str(tmp_path), "--world-size", "2", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    # the synchronize waits for the optimizer's kernel, now later: so does the step (the CLI sheds the default
    # profiler cost, so the figure is not the graph's above)
    assert doc["scenarios"][0]["delta_us"] > 0 and any("1-rank trace" in n for n in doc["notes"])


def test_the_runs_own_world_size_is_the_reference_row_of_a_sweep(tmp_path):
    """``--sweep world-size=1,2`` on one rank (and ``world-size=2`` on two): the run's own world size changes
    nothing, so its row is the baseline prediction (delta 0), not a scenario that cannot be predicted."""
    (tmp_path / "one").mkdir()
    res = CliRunner().invoke(main, ["whatif", str(_one_rank_ddp_run(tmp_path / "one")), "--sweep", "world-size=1,4",
                                    "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    rows = {r["name"]: r for r in doc["scenarios"]}
    assert set(rows) == {"world-size=1", "world-size=4"}
    assert rows["world-size=1"]["predicted_step_us"] == doc["baseline"]["predicted_step_us"]
    assert rows["world-size=1"]["delta_us"] == 0 and rows["world-size=4"]["delta_us"] > 0
    assert any("world-size=1 is the run's own world size" in n for n in doc["notes"])
    (tmp_path / "two").mkdir()
    paths = _late_rank_run(tmp_path / "two")
    base, out, start, end = _scenario(paths, sc.Scenario(world_size=2))
    assert out.dur == base.dur and _kernel_end(out, end, 0, 12) == 62  # the recorded transfer: [52, 62]


def test_one_rank_grown_without_a_known_interconnect_says_why(tmp_path):
    run = _one_rank_ddp_run(tmp_path)
    doc = json.loads((run / "run.json").read_text())
    doc["hardware"]["ranks"][0]["gpu_name"] = "NVIDIA A10"
    (run / "run.json").write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["whatif", str(run), "--world-size", "2"])
    assert res.exit_code == 2 and "allreduce speed of NVIDIA A10 is not known here" in res.output
    res = CliRunner().invoke(main, ["whatif", str(run), "--world-size", "2", "--bucket-cap-mb", "5"])
    assert res.exit_code == 2


def test_a_bus_bandwidth_given_replaces_the_fitted_or_default_one(tmp_path, monkeypatch):
    """``--busbw-gbps X``: the late-rank run's 4 MiB allreduce takes 10 µs (one size: all bandwidth, 4 MiB / 10 µs
    of bus bandwidth at 2 ranks), so X = 4 MiB / 20 µs makes it 20 µs; from one rank of an unknown GPU, X = 2 MiB /
    20 µs gives its 2 MiB allreduces 20 µs each (latency patched to 0)."""
    from tracekit.replay import grow

    (tmp_path / "late").mkdir()
    (tmp_path / "one").mkdir()
    paths = _late_rank_run(tmp_path / "late")
    _, out, start, end = _scenario(paths, sc.Scenario(busbw_gbps=4 * MIB / 20_000))
    assert _kernel_end(out, end, 0, 12) == _kernel_end(out, end, 1, 52) == pytest.approx(52 + 20)
    monkeypatch.setattr(grow, "NVLINK4_ALLREDUCE", {2: (0.0, 1.0)})
    run = _one_rank_ddp_run(tmp_path / "one")
    doc = json.loads((run / "run.json").read_text())
    doc["hardware"]["ranks"][0]["gpu_name"] = "NVIDIA A10"
    (run / "run.json").write_text(json.dumps(doc))
    base, out, start, end = _scenario([run], sc.Scenario(world_size=2, busbw_gbps=2 * MIB / 20_000))
    assert [(start[v] / US, end[v] / US) for v in range(len(base.dur), len(out.dur))] == [(62, 82), (102, 122)]
    res = CliRunner().invoke(main, ["whatif", str(run), "--world-size", "2", "--busbw-gbps", "100"])
    assert res.exit_code == 0 and "bus bandwidth 100 GB/s as given" in res.output
    res = CliRunner().invoke(main, ["whatif", str(run), "--busbw-gbps", "100", "--bandwidth-x", "2"])
    assert res.exit_code == 2 and "give one" in res.output
    res = CliRunner().invoke(main, ["whatif", str(run), "--busbw-gbps", "0"])
    assert res.exit_code == 2 and "--busbw-gbps must be > 0" in res.output and "Traceback" not in res.output


def test_a_regrouped_gloo_bucket_launched_late_is_not_awaited_by_a_recorded_one_that_ended_before(tmp_path):
    """One gloo worker ran bucket {p0, p1} over [63, 120]; the main thread waited for it (idle [102, 125], woken by
    its end), ran an op [125, 127], and that woke the worker for bucket {p2, p3} ([130, 170]). Cap 1 MiB: {p3} is
    launched as that recorded bucket was, after the main thread's op, so it could start at 130 in the recording;
    the first recorded bucket (ended at 120) must not wait for it, or the main thread's wait for that bucket would
    come before the op that launches {p3}: a cycle."""
    for rank in (0, 1):
        tb = _gloo_backward(rank)
        tb.collective("allreduce", 63, 57, 61, MIB // 2, with_kernel=False, op_dur_us=1)
        tb.annotation("gloo:all_reduce", 63, 57, tid=2000)
        tb.collective("allreduce", 130, 40, 101, MIB // 2, with_kernel=False, op_dur_us=1)
        tb.cpu_op("aten::add", 125, 2)
        tb.annotation("gloo:all_reduce", 130, 40, tid=2000)
        tb.write(tmp_path / f"rank{rank}.trace.json.gz")
    _gloo_bucket_manifest(tmp_path)
    base, out, start, end = _scenario([tmp_path], sc.Scenario(bucket_cap_mb=1))
    assert out.notes == []
    new = [(start[v] / US, end[v] / US) for v in range(len(base.dur), len(out.dur))
           if out.kind[v] == COLL and out.rank[v] == 0]
    # transfer 24.25 µs per MiB (57 and 40 µs per 2 MiB, one size); launched 1 µs after the gradient, picked up
    # 6 µs later (median of 2 and 10), one worker: each new bucket after the one before; {p3} as the recorded
    # bucket: the main thread's wait ends 5 µs after the first recorded bucket, which now ends with the new
    # buckets that hold its parameters and could start before 120 ({p0}, {p1}: 101.5), its op takes 2 µs, the
    # worker would wake 3 µs after it (111.5), but the one worker runs {p2} until 131.75: picked up 6 µs later
    xfer = 48.5 / 2
    assert new == [(40 + 1 + 6, 47 + xfer), (71.25 + 6, 77.25 + xfer), (101.5 + 6, 107.5 + xfer),
                   (131.75 + 6, 137.75 + xfer)]
    assert 101.5 + 5 + 2 + 3 < 131.75 + 6


def _nccl_launch_block_run(tmp_path: Path) -> list[Path]:
    """Two identical ranks, step [0, 200] µs, CPU-bound: ``record_param_comms`` [10, 50] with NCCL's range
    ``nccl:all_reduce`` [10, 45] holding its launch block -- the launch ``cuLaunchKernelEx`` [11, 13] of the
    allreduce (kernel [60, 70]) and NCCL's join ``cudaEventRecord`` [20, 21] + ``cudaStreamWaitEvent`` [22, 23]
    -- then PyTorch's own ``cudaStreamIsCapturing`` [30, 31]; op ``work`` [50, 190] launches a kernel at 185
    (it runs [187, 189]) and the step's last CPU work ends at 200."""
    paths = []
    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2)
        tb.step(1, 0, 200)
        tb.nccl_allreduce(60, 10, launch_at_us=10, nelems=1 << 20, op_dur_us=40)
        tb.annotation("nccl:all_reduce", 10, 35)
        tb.launch(20, 901, name="cudaEventRecord", dur_us=1)
        tb.launch(22, 902, name="cudaStreamWaitEvent", dur_us=1)
        tb.launch(30, 903, name="cudaStreamIsCapturing", dur_us=1)
        tb.cpu_op("work", 50, 140)
        tb.kernel("gemm", 187, 2, launch_at_us=185)
        paths.append(tb.write(tmp_path / f"rank{rank}.trace.json.gz"))
    return paths


def test_one_rank_sheds_nccls_kernel_launch_from_the_cpu(tmp_path):
    from tracekit.replay import enqueue

    paths = _nccl_launch_block_run(tmp_path)
    traces, _ = _loaded(paths)
    rt = traces.ranks[0]
    t0 = int(rt.column("ts_ns").min())  # the step's start: 0 µs
    # the block: from the range's first runtime call (the launch, 11) through the join right after it (23)
    blocks = enqueue.launch_blocks(rt, np.asarray(classify_gpu(rt).array == COMM))
    assert [(b.lo - t0, b.hi - t0) for b in blocks] == [(11 * US, 23 * US)]
    base, out, start, end = _scenario(paths, sc.Scenario(world_size=1))
    b_start, b_end = simulate.evaluate(base)
    assert _step_us(base, b_start, b_end) == [200.0]
    # 12 µs of CPU work gone from the block ([11, 23]); PyTorch's call at [30, 31] stays; no transfer left
    assert _step_us(out, start, end, 0) == _step_us(out, start, end, 1) == [200.0 - 12]
    _, out2, start2, end2 = _scenario(paths, sc.Scenario(world_size=4))  # more ranks: the launches stay
    assert _step_us(out2, start2, end2) == [200.0]


@pytest.mark.parametrize("run", [
    "whatif/cpu16_paired/a/cap25",  # gloo: the first range of each worker thread anchored to the window's start
    "whatif/cpu16_gloo_scenarios/a/cap25",
    "whatif/cpu16_gloo_scenarios/a/cap1",  # gloo, 2 workers: a recorded bucket joins only the new ones holding its grads
    "whatif/h200x4_nccl_scenarios/tfm1024/cap25",
    "fixtures/inductor_no_optimization",  # NCCL: each bucket queued behind the one before with its recorded gap
    "examples/h200x2_default_inductor",  # DDP's default 1 MiB first bucket: given explicitly, it is the recorded layout
])
def test_the_runs_own_layout_regrouped_replays_as_its_baseline(run):
    path = Path(__file__).resolve().parents[2] / "sample_traces" / run
    lay = ddp.layout(read_manifest(path))
    first = lay.first_cap_bytes if lay.first_cap_bytes is not None else lay.cap_bytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(path, bucket_cap_mb=lay.cap_bytes / MIB, first_bucket_cap_mb=first / MIB)
    assert r.scenarios[0]["predicted_step_us"] == r.baseline["predicted_step_us"]


def test_a_grown_run_refuses_bucket_and_hook_changes_each_in_its_own_family(tmp_path, monkeypatch):
    """A 1-rank run grown to 2 ranks has no recorded bucket transfer: the bucket family refuses a cap, the network
    family the hook, each naming its own change."""
    from tracekit.replay import grow

    monkeypatch.setattr(grow, "NVLINK4_ALLREDUCE", {2: (0.0, 2 * MIB / 20_000)})
    run = _one_rank_ddp_run(tmp_path)
    with pytest.raises(ScenarioError, match="grown to 2 ranks takes no bucket change"):
        tracekit.whatif(run, world_size=2, bucket_cap_mb=5.0)
    with pytest.raises(ScenarioError, match="grown to 2 ranks takes no hook change"):
        tracekit.whatif(run, world_size=2, comm_hook="bf16")


def test_the_hook_compresses_new_buckets_only_with_fp32_backward_collectives(monkeypatch):
    """The regrouped buckets get the hook's factor only where the run has backward collectives, all fp32 allreduces
    (a forward-only fp32 allreduce says nothing of the gradients)."""
    import pandas as pd
    from types import SimpleNamespace

    from tracekit.replay import buckets
    from tracekit.replay.changes import buckets as family

    got = []
    monkeypatch.setattr(buckets, "regroup", lambda g, ctx, comm, s, factor, drop: got.append(factor) or (
        np.zeros(len(ctx.colls), dtype=bool), [], [(0, 1, 0, 1.0)]))
    for phases, fp32, want in ((["forward"], [True], 1.0), (["backward", "backward"], [True, True], 0.5),
                               (["backward", "forward"], [False, True], 1.0), ([], [], 1.0)):
        ctx = SimpleNamespace(colls=pd.DataFrame({"phase": pd.Series(phases, dtype=object)}),
                              fp32=np.array(fp32, dtype=bool))
        ed = SimpleNamespace(sc=sc.Scenario(bucket_cap_mb=5.0), grown=False, network_factor=1.0, hook_factor=0.5,
                             g=None, comm={}, notes=[])
        family.regroup(ctx, ed)
        assert got[-1] == want and (ed.added != []) == (want == 0.5), (phases, fp32)
