"""Older and partial traces: what torch 2.0-2.3 wrote, and traces that lost part of their records.

Hand-built (tests/tracebuilder.py): each trace holds exactly the naming of one torch version, and the
expected figures are counts of what was written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tracekit
from tracekit.report import render
from tests.tracebuilder import TraceBuilder
from tracekit.traces.loader import TraceLoadWarning

STEP_US = 1000.0


def _compiled_inference(folder: Path, region: str | None, subgraph: bool = False) -> Path:
    """One rank, two steps of a compiled model run under no_grad: per step one compiled region named
    ``region`` (None: torch 2.0 writes none) with a cache lookup, and three Triton kernels."""
    tb = TraceBuilder(rank=0, world_size=1)
    for i in range(2):
        t = i * STEP_US
        tb.step(i + 1, t, t + STEP_US)
        tb.cpu_op("TorchDynamo Cache Lookup", t + 5, 3)
        if region is not None:
            tb.cpu_op(region, t + 10, 600)
        if subgraph:
            tb.cpu_op("CompiledFunction", t + 20, 100)
            tb.cpu_op("CompiledFunction", t + 300, 100)
        for k in range(3):
            tb.kernel(f"triton_poi_fused_add_{k}", t + 100 + 200 * k, 150, launch_at_us=t + 30 + 10 * k)
    folder.mkdir(parents=True, exist_ok=True)
    tb.write(folder / "rank0.json")
    return folder


def _codes(res) -> list[str]:  # noqa: ANN001
    return list(res.findings["code"])


@pytest.mark.parametrize("region", ["Torch-Compiled Region", "Torch-Compiled Region: 0/1"])
def test_compiled_region_of_every_naming_is_counted(tmp_path: Path, region: str) -> None:
    res = tracekit.analyze(_compiled_inference(tmp_path / "run", region))
    gb = res.tables["graph_breaks"]
    assert gb["regions"].tolist() == [1, 1]
    assert gb["triton_kernels"].tolist() == [3, 3]
    assert not gb["compile_skipped"].any()
    assert "compile_skipped" not in _codes(res)


def test_triton_kernels_alone_are_evidence_of_compilation(tmp_path: Path) -> None:
    """torch 2.0 wrote no region: a cache lookup (compilation requested) and Triton kernels, no subgraph
    range under no_grad. Compiled code ran: not compile_skipped."""
    res = tracekit.analyze(_compiled_inference(tmp_path / "run", None))
    gb = res.tables["graph_breaks"]
    assert gb["compile_requested"].all() and not gb["compile_skipped"].any()
    assert "compile_skipped" not in _codes(res)


def test_subgraphs_without_regions_are_not_called_graph_breaks(tmp_path: Path) -> None:
    """torch 2.0: two CompiledFunction per step and no region: a DDPOptimizer split or a graph break,
    the trace cannot say which (unknown), and no graph_break finding claims "0 compiled regions"."""
    res = tracekit.analyze(_compiled_inference(tmp_path / "run", None, subgraph=True))
    bnd = res.tables["break_boundaries"]
    assert bnd["kind"].tolist() == ["unknown", "unknown"]
    assert res.tables["graph_breaks"]["real_breaks"].tolist() == [0, 0]
    assert "graph_break" not in _codes(res)


def _launches_without_kernels(folder: Path) -> Path:
    """Two steps of launches whose kernel records were lost: every kernel event removed from the trace."""
    tb = TraceBuilder(rank=0, world_size=1)
    for i in range(2):
        t = i * STEP_US
        tb.step(i + 1, t, t + STEP_US)
        tb.cpu_op("aten::mm", t + 10, 50)
        tb.kernel("ampere_sgemm_128x64_tn", t + 100, 300, launch_at_us=t + 20)
    tb.events = [e for e in tb.events if e.get("cat") != "kernel"]
    folder.mkdir(parents=True, exist_ok=True)
    tb.write(folder / "rank0.json")
    return folder


def test_lost_kernel_records_are_not_called_cpu_only(tmp_path: Path) -> None:
    with pytest.warns(TraceLoadWarning, match="kernel records missing: 2 device launches"):
        res = tracekit.analyze(_launches_without_kernels(tmp_path / "run"))
    notes = " ".join(res.meta["notes"])
    assert "kernel records missing: 2 device launches" in notes
    assert "CPU-only" not in notes.replace("not a CPU-only run", "")
    assert "Per-rank breakdown (kernel records missing" in render.render(res, "table")


def test_next_line_names_the_program_as_it_was_run(tmp_path: Path) -> None:
    """``profile``'s ``next:`` line works as printed: the path tracekit was run by when that is not the
    ``tracekit`` on PATH, ``python -m tracekit`` when run as a module."""
    from tracekit.cli.common import invoked_as

    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "tracekit").write_text("#!/bin/sh\n")
    assert invoked_as(".venv/bin/tracekit") == ".venv/bin/tracekit"
    assert invoked_as(str(venv / "tracekit")) == str(venv / "tracekit")
    assert invoked_as("/usr/lib/python3/__main__.py", str(venv / "python")).endswith(f"{venv / 'python'} -m tracekit")
    assert invoked_as("dir with space/tracekit") == "'dir with space/tracekit'"


def test_whatif_replays_a_capture_without_steps_as_one_step(tmp_path: Path) -> None:
    """A plain ``with profile():`` capture (no ProfilerStep range): the window is replayed as one step, from the main
    thread's first event (0 µs) to the end of the last GPU work it launched (400 + 300 = 700 µs), and a note says
    so."""
    tb = TraceBuilder(rank=0, world_size=1, distributed=False)
    tb.cpu_op("aten::mm", 0, 100)
    tb.kernel("ampere_sgemm_128x64_tn", 50, 300)  # launched 1 µs before it starts
    tb.cpu_op("aten::mm", 350, 100)
    tb.kernel("ampere_sgemm_128x64_tn", 400, 300)
    (tmp_path / "run").mkdir()
    tb.write(tmp_path / "run" / "trace.json")
    r = tracekit.whatif(tmp_path / "run")
    assert r.baseline["steps"] == 1
    assert r.baseline["profiled_step_us"] == pytest.approx(700.0)
    assert r.baseline["replayed_step_us"] == pytest.approx(700.0)
    assert any("no ProfilerStep ranges" in n and "replayed as one step" in n for n in r.notes)


def _torch20_collectives(folder: Path) -> Path:
    """What torch 2.0 records of NCCL collectives: ``record_param_comms`` without message args, the c10d op and
    the ``nccl:*`` range around the launch carrying the tensors' shapes and dtypes, the kernel without args.
    Per step: an allreduce of a 1024 x 256 bf16 gradient (a TensorList on the c10d op: no shape there) and an
    allgather of 8192 x 64 floats into 16384 x 64."""
    tb = TraceBuilder(rank=0, world_size=2)
    for i in range(2):
        t = i * STEP_US
        tb.step(i + 1, t, t + STEP_US)
        tb.cpu_op("c10d::allreduce_", t + 100, 40, **{"Input Dims": [[], [], [], []],
                                                       "Input type": ["TensorList", "", "", "Scalar"]})
        tb.annotation("nccl:all_reduce", t + 105, 30)["args"].update(
            {"Input Dims": [[1024, 256]], "Input type": ["c10::BFloat16"]})
        ext = tb.next_external_id()
        tb.cpu_op("record_param_comms", t + 110, 20, external_id=ext,
                  **{"Input Dims": [[], [], [], [], [], []], "Input type": ["Scalar"] * 3 + [""] * 3})
        tb.kernel("ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, ncclWork*)", t + 200, 100,
                  stream=17, launch_at_us=t + 115, external_id=ext)
        tb.cpu_op("c10d::_allgather_base_", t + 400, 40, **{"Input Dims": [[16384, 64], [8192, 64], []],
                                                             "Input type": ["float", "float", ""]})
        tb.annotation("nccl:_all_gather_base", t + 405, 30)["args"].update(
            {"Input Dims": [[8192, 64]], "Input type": ["float"]})
        tb.kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", t + 500, 100,
                  stream=17, launch_at_us=t + 415)
    folder.mkdir(parents=True, exist_ok=True)
    tb.write(folder / "rank0.json")
    return folder


def test_message_size_and_dtype_from_the_ops_shapes(tmp_path: Path) -> None:
    res = tracekit.analyze(_torch20_collectives(tmp_path / "run"))
    c = res.tables["collectives"]
    ar, ag = c[c["coll_name"] == "allreduce"], c[c["coll_name"] == "allgather"]
    assert len(ar) == 2 and len(ag) == 2
    assert ar["nelems"].tolist() == [1024 * 256] * 2 and ar["dtype"].tolist() == ["BFloat16"] * 2
    assert ar["bytes"].tolist() == [1024 * 256 * 2] * 2
    # the c10d op holds the output too: bytes are max(in, out), as nccl-tests count them
    assert ag["nelems"].tolist() == [16384 * 64] * 2 and ag["bytes"].tolist() == [16384 * 64 * 4] * 2
    # bus bandwidth follows: allreduce 2(n-1)/n of 524288 bytes in 100 µs over 2 ranks
    assert ar["busbw_incl_wait_gbps"].tolist() == pytest.approx([524288 / 100e-6 / 1e9] * 2)


def test_process_group_id_names_the_group(tmp_path: Path) -> None:
    """torch 2.1's record_param_comms wrote "Process Group ID" where later versions write "Process Group Name"."""
    tb = TraceBuilder(rank=0, world_size=2)
    tb.step(1, 0, STEP_US)
    ext = tb.next_external_id()
    tb.cpu_op("record_param_comms", 100, 20, external_id=ext, **{"Collective name": "allreduce", "dtype": "Float",
                                                                 "In msg nelems": 1000, "Out msg nelems": 1000,
                                                                 "Group size": 2, "Process Group ID": 0})
    tb.kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 200, 100, stream=17,
              launch_at_us=105, external_id=ext)
    (tmp_path / "run").mkdir()
    tb.write(tmp_path / "run" / "rank0.json")
    c = tracekit.analyze(tmp_path / "run").tables["collectives"]
    assert c["pg_name"].tolist() == ["0"] and c["bytes"].tolist() == [4000.0]


def _with_profiler_cost(tmp_path: Path, ns: float | None) -> Path:
    """A committed CPU-bound H200 run (the profiler cost decides its prediction) with its run.json's calibration set
    to ``ns`` per event (None: removed)."""
    import json
    import shutil

    run = tmp_path / f"run_{ns}"
    shutil.copytree(Path(__file__).parents[2] / "sample_traces" / "whatif/h200_compiled_probe" / "toy-cpubound-break", run)
    doc = json.loads((run / "run.json").read_text())
    if ns is None:
        doc.pop("profiler_cost", None)
    else:
        doc["profiler_cost"] = {**(doc.get("profiler_cost") or {}), "cpu_op_ns": ns, "runtime_ns": ns,
                                "device": "cuda", "probes": {}}
    (run / "run.json").write_text(json.dumps(doc))
    return run


def test_a_calibration_the_profiler_cannot_cost_is_not_used(tmp_path: Path) -> None:
    """9 ns per event (one H100 run measured it; 808 ns to 12 µs on every other CUDA run): the prediction is the
    one without a calibration at all (the documented default), and a note says why."""
    import warnings

    from tracekit.replay.costs import DEFAULT_CPU_OP_NS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bad = tracekit.whatif(_with_profiler_cost(tmp_path, 9.0))
        none = tracekit.whatif(_with_profiler_cost(tmp_path, None))
        good = tracekit.whatif(_with_profiler_cost(tmp_path, 1500.0))
    assert bad.profiler_cost["cpu_op_ns"] == DEFAULT_CPU_OP_NS and bad.profiler_cost["source"] == "default"
    assert bad.baseline["predicted_step_us"] == none.baseline["predicted_step_us"]
    assert good.profiler_cost["cpu_op_ns"] == 1500.0
    note = next(n for n in bad.notes if n.startswith("profiler cost:"))
    assert "measured 9 ns per CPU operator, outside what the profiler can cost" in note and "defaults instead" in note


def test_profile_warns_when_it_records_such_a_calibration() -> None:
    from tracekit.cli.profile import format_summary

    m = {"run": {"device": "cuda", "world_size": 1}, "profiler_cost": {"cpu_op_ns": 9.0, "runtime_ns": 9.0},
         "_out_dir": "runs/x"}
    text = format_summary(m)
    assert "warning: the calibration measured 9 ns per CPU operator" in text and "profile again" in text
    m["profiler_cost"] = {"cpu_op_ns": 2000.0, "runtime_ns": 2000.0}
    assert "warning: the calibration" not in format_summary(m)


def test_whatif_quotes_each_ranks_own_kind(tmp_path: Path) -> None:
    """Rank 0's GPU is busy 900 of each 1000 µs step, rank 1's 100: a GPU-bound and a CPU-bound rank. The mean
    over ranks (50 % idle) called the whole run CPU-bound; each rank now gets its own kind (column ``bound``) and
    the trust line quotes each kind's benchmark figures for its rank."""
    import warnings

    from tracekit.replay import trust
    from tracekit.report.whatif_render import render_text

    run = tmp_path / "run"
    run.mkdir()
    for rank, busy in ((0, 900.0), (1, 100.0)):
        tb = TraceBuilder(rank=rank, world_size=2)
        for i in range(3):
            t = i * STEP_US
            tb.step(i + 1, t, t + STEP_US)
            tb.cpu_op("aten::mm", t + 2, 10)
            tb.kernel("ampere_sgemm_128x64_tn", t + 10, busy, launch_at_us=t + 5)
        tb.write(run / f"rank{rank}.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(run)
    assert r.ranks["bound"].tolist() == ["gpu-bound", "cpu-bound"]
    # analyze's gpu_idle finding names rank 1 only: the rank whatif classes as waiting, never a GPU-bound one
    findings = tracekit.analyze(run).findings
    assert findings.loc[findings["code"] == "gpu_idle", "rank"].tolist() == [1]
    kinds = {k["name"]: k["ranks"] for k in r.baseline["rank_regimes"]}
    assert kinds == {"gpu-bound": [0], "cpu-bound": [1]}
    text = render_text(r)
    gpu, cpu = (next(x for x in trust.REGIMES if x.name == n) for n in ("gpu-bound", "cpu-bound"))
    assert f"rank 0 a GPU-bound step (GPU idle" in text and f"on {gpu.runs} benchmark runs" in text
    assert f"rank 1 a CPU-bound step (GPU idle" in text and f"on {cpu.runs} benchmark runs" in text


def test_whatif_on_lost_kernel_records_does_not_call_it_a_cpu_run(tmp_path: Path) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(_launches_without_kernels(tmp_path / "run"))
    assert any(n.startswith("kernel records missing") for n in r.notes)
    assert not any("CPU run" in n for n in r.notes)
