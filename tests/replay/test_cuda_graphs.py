"""``whatif --cuda-graphs`` (tracekit.replay.changes.cuda_graphs) on hand-built traces: a launch-bound compiled
graph of ten kernels replayed as one graph launch; what it keeps as launched; where it does not apply."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracekit
from tracekit.errors import ScenarioError
from tracekit.replay import scenarios as sc
from tracekit.replay.changes import cuda_graphs

from tests.replay.test_scenarios import _kernel_end, _scenario, _step_us
from tests.tracebuilder import TraceBuilder

#: a replay's host time in these tests: 20 µs + 1 µs per GPU operation (the module's figures patched, so the
#: arithmetic does not follow them); the graphs here launch ten kernels, so G = 30 µs
G_US = 20 + 10 * 1


@pytest.fixture(autouse=True)
def _replay_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_graphs, "GRAPH_REPLAY_NS", 20_000)
    monkeypatch.setattr(cuda_graphs, "GRAPH_REPLAY_PER_OP_NS", 1_000)


def test_a_replay_costs_more_the_more_operations_its_graph_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    # the shipped line: 80 µs + 2 µs per operation (two reduce-overhead traces, 2 to 132 operations per replay)
    assert [cuda_graphs.replay_ns(k) for k in (0, 5, 132)] == [80_000, 90_000, 344_000]


def _graph_run(tmp_path: Path, *, sync_inside: bool = False, eager: bool = False) -> Path:
    """One rank, step [0, 120] µs: a compiled graph (CompiledFunction [10, 110]) launches ten kernels, kernel k
    by a 2 µs launch call at 10 + 10k; each starts 3 µs after its launch and lasts 2 µs (ends at 15 + 10k): the GPU
    waits for the host's launches. The host synchronizes at [110, 112] (the last kernel ended at 105) and works
    8 µs more."""
    tb = TraceBuilder(rank=0, world_size=1)
    tmp_path.mkdir(parents=True, exist_ok=True)
    tb.step(1, 0, 120)
    if not eager:
        tb.cpu_op("CompiledFunction", 10, 100)
    for k in range(10):
        tb.kernel(f"triton_{k}", 13 + 10 * k, 2, launch_at_us=10 + 10 * k)
    if sync_inside:
        tb.launch(106, 991, name="cudaStreamSynchronize", dur_us=2)
    tb.launch(110, 990, name="cudaDeviceSynchronize", dur_us=2)
    return tb.write(tmp_path / "rank0.trace.json.gz")


def test_ten_launches_become_one_graph_launch(tmp_path: Path) -> None:
    base, out, start, end = _scenario([_graph_run(tmp_path)], sc.Scenario(cuda_graphs=True))
    # the graph's host work (100 µs) becomes one launch of G; the ten kernels start 3 µs (their launch latency)
    # after it, back to back: the last ends at 10 + G + 3 + 10 x 2; the sync wakes 3 µs later (the default wake-up:
    # the recorded sync found the GPU done), then 8 µs of work
    assert _kernel_end(out, end, 0, 13) == 10 + G_US + 3 + 2
    assert _kernel_end(out, end, 0, 103) == 10 + G_US + 3 + 20
    assert _step_us(out, start, end) == [10 + G_US + 3 + 20 + 3 + 8]


def test_a_graph_with_a_sync_inside_stays_launched(tmp_path: Path) -> None:
    base, out, start, end = _scenario([_graph_run(tmp_path, sync_inside=True)], sc.Scenario(cuda_graphs=True))
    assert _step_us(out, start, end) == _step_us(base, *sc.simulate.evaluate(base))


def test_an_eager_or_cpu_run_says_it_does_not_apply(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no compiled graph in the trace"):
        tracekit.whatif(_graph_run(tmp_path / "eager", eager=True), cuda_graphs=True)
    (tmp_path / "cpu").mkdir()
    cpu = TraceBuilder(rank=0, world_size=1)
    cpu.step(1, 0, 50)
    cpu.cpu_op("CompiledFunction", 10, 20)
    with pytest.raises(ScenarioError, match="no GPU activity"):
        tracekit.whatif(cpu.write(tmp_path / "cpu" / "rank0.trace.json.gz"), cuda_graphs=True)


def test_the_notes_say_what_was_replaced(tmp_path: Path) -> None:
    w = tracekit.whatif(_graph_run(tmp_path), cuda_graphs=True)
    (row,) = w.scenarios
    assert row["name"] == "cuda-graphs" and row["changes"] == {"cuda_graphs": True}
    assert any("1 of 1 compiled-graph executions" in n and "30 us of host time each (20 us + 1 us per GPU "
               "operation" in n and "not on this run" in n for n in w.notes)
    w = tracekit.whatif(_graph_run(tmp_path / "sync", sync_inside=True), cuda_graphs=True)
    assert any("kept as launched: 1 with a blocking call inside" in n for n in w.notes)


def test_a_launch_bound_gpu_idle_finding_asks_for_cuda_graphs() -> None:
    from tracekit.replay import advice

    bound = {"code": "gpu_idle", "evidence": {"cpu_bound": True}}
    assert advice.candidates([bound]) == [sc.Scenario(cuda_graphs=True)]
    assert advice.candidates([{"code": "gpu_idle", "evidence": {"cpu_bound": False}}]) == []
    quoted = advice.quote([bound], [{"name": "cuda-graphs", "changes": {"cuda_graphs": True}, "predicted_step_us": 80.0,
                                     "delta_us": -20.0, "delta_pct": -20.0}], {})
    assert quoted[0]["evidence"]["whatif"]["predicted_saving_us"] == 20.0


def test_a_replayed_cuda_graph_shows_in_the_graph_break_table(tmp_path: Path) -> None:
    """Step [0, 100]: one cudaGraphLaunch [10, 15] (correlation 500) replays three kernels [20, 30], [30, 40],
    [40, 50] inside a CompiledFunction [5, 18]; one more kernel is launched on its own."""
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.cpu_op("CompiledFunction", 5, 13)
    tb.launch(10, 500, name="cudaGraphLaunch", dur_us=5)
    for k in range(3):
        tb.kernel(f"triton_{k}", 20 + 10 * k, 10, correlation=500, pre_window=True)
    tb.kernel("eager", 60, 5, launch_at_us=55)
    res = tracekit.analyze(tb.write(tmp_path / "rank0.trace.json.gz"))
    gb = res.tables["graph_breaks"]
    assert list(gb["graph_launches"]) == [1] and list(gb["graph_kernels"]) == [3]
    # a run already replaying its graphs: --cuda-graphs keeps them, measured at their own host time
    w = tracekit.whatif(tmp_path, cuda_graphs=True)
    assert any("kept as launched: 1 already replayed as a CUDA graph" in n for n in w.notes)


def test_it_combines_with_other_changes_and_on_the_command_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tests.replay.test_optimize_ddp import _one_graph_run
    from tracekit.cli import main

    w = tracekit.whatif(_one_graph_run(tmp_path / "ddp"), cuda_graphs=True, optimize_ddp="ddp_optimizer",
                        sweep=["bandwidth-x=1,2"])
    assert [s["name"] for s in w.scenarios] == ["bandwidth-x=1 cuda-graphs optimize-ddp=ddp_optimizer",
                                                "bandwidth-x=2 cuda-graphs optimize-ddp=ddp_optimizer"]
    assert w.scenarios[1]["predicted_step_us"] <= w.scenarios[0]["predicted_step_us"]
    assert any("compiled-graph executions" in n for n in w.notes) and any("split at DDP's 3 buckets" in n
                                                                         for n in w.notes)
    cpu = TraceBuilder(rank=0, world_size=1)
    cpu.step(1, 0, 50)
    cpu.cpu_op("CompiledFunction", 10, 20)
    (tmp_path / "cpu").mkdir()
    cpu.write(tmp_path / "cpu" / "rank0.trace.json.gz")
    res = CliRunner().invoke(main, ["whatif", str(tmp_path / "cpu"), "--cuda-graphs"])
    assert res.exit_code == 2 and "CUDA graphs do not apply" in res.output and "Traceback" not in res.output


def test_a_graph_whose_host_time_only_waits_is_kept_for_that_reason(tmp_path: Path) -> None:
    """Step [0, 120] µs: a compiled graph (CompiledFunction [10, 80]) on the main thread, which waits inside it for
    another thread (an operator [20, 79] on thread 2000 ends 1 µs before it: the replay's wait); the graph's one
    kernel is launched at its end (launch [80, 82], kernel [85, 95]). It has GPU work but no host work to replace."""
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 120)
    tb.cpu_op("CompiledFunction", 10, 70)
    tb.cpu_op("aten::mm", 20, 59, tid=2000)
    tb.kernel("triton_0", 85, 10, launch_at_us=80)
    tb.launch(110, 990, name="cudaDeviceSynchronize", dur_us=2)
    w = tracekit.whatif(tb.write(tmp_path / "rank0.trace.json.gz"), cuda_graphs=True)
    assert any("0 of 1 compiled-graph executions" in n for n in w.notes)
    assert any("kept as launched: 1 without host work to replace (only waits inside)" in n for n in w.notes)
    assert not any("without GPU work" in n for n in w.notes)


def test_only_the_inductor_call_is_replaced_and_its_wrappers_stay(tmp_path: Path) -> None:
    """CompiledFunction [10, 130]: 20 µs of AOT wrapper work, then the inductor call (``## Call CompiledFxGraph
    ##`` [30, 120]) that launches the ten kernels (kernel k by a 2 µs launch at 30 + 9k, running [33 + 9k,
    35 + 9k]), then 10 µs of wrapper work. reduce-overhead still runs the wrappers: only the call's 90 µs become
    one graph launch of G."""
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 150)
    tb.cpu_op("CompiledFunction", 10, 120)
    tb.cpu_op("## Call CompiledFxGraph fabc ##", 30, 90)
    for k in range(10):
        tb.kernel(f"triton_{k}", 33 + 9 * k, 2, launch_at_us=30 + 9 * k)
    tb.launch(140, 990, name="cudaDeviceSynchronize", dur_us=2)
    run = tb.write(tmp_path / "rank0.trace.json.gz")
    base, out, start, end = _scenario([run], sc.Scenario(cuda_graphs=True))
    # the ten kernels follow the one launch at 30 (its G µs, then their 3 µs launch latency), back to back
    assert _kernel_end(out, end, 0, 33) == 30 + G_US + 3 + 2
    assert _kernel_end(out, end, 0, 33 + 81) == 30 + G_US + 3 + 20
    # the host reaches the sync at 30 + G + 10 (the wrapper after the call) + 10; the GPU ends at 30 + G + 23 and the
    # sync wakes 3 µs later (the default wake-up), then 8 µs more
    assert _step_us(out, start, end) == [30 + G_US + 23 + 3 + 8]


def test_a_real_reduce_overhead_run_shows_its_replays() -> None:
    """The committed ResNet-18 run with reduce-overhead (1 x H100): run.json's compile facts say 6 graphs were
    recorded, none skipped; each step of its trace replays those 6 (3 forward, 3 backward subgraphs: DDPOptimizer
    split the model in 3), and ``--cuda-graphs`` keeps them as they are."""
    run = Path(__file__).resolve().parents[2] / "sample_traces/whatif/h100_cuda_graphs/resnet18/reduce-overhead"
    res = tracekit.analyze(run)
    facts = res.meta["manifest"].compile.per_rank[0].cudagraphs
    assert (facts["mode"], facts["graphs_recorded"], facts["skips"], facts["rerecords"]) == ("reduce-overhead", 6, 0, 0)
    gb = res.tables["graph_breaks"]
    assert list(gb["graph_launches"]) == [6, 6, 6]
    assert list(gb["fwd_subgraphs"] + gb["bwd_subgraphs"]) == [6, 6, 6]
    w = tracekit.whatif(run, cuda_graphs=True)
    assert any("18 already replayed as a CUDA graph" in n for n in w.notes)
