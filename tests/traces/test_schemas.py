"""Older and other kineto schemas give the same numbers as today's: 2021 TensorBoard-plugin
traces (capitalised categories, ``Operator`` steps, lower-case ``external id``, string tids),
``cuda_driver`` launches, ROCm traces (HIP runtime names, RCCL kernels)."""

from __future__ import annotations

import json

import pytest

from tracekit.runner.run import analyze
from tracekit.traces import schema
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder

#: 2021 kineto (torch 1.8.1/1.9, TensorBoard plugin samples) category spellings
OLD_CATS = {"kernel": "Kernel", "gpu_memcpy": "Memcpy", "gpu_memset": "Memset", "cpu_op": "Operator",
            "cuda_runtime": "Runtime", "cuda_driver": "Runtime", "user_annotation": "Operator"}


def build(kernel="gemm", comm_kernel=None, launch="cudaLaunchKernel"):  # noqa: ANN001, ANN201
    """One step: compute 20 µs [10, 30), allreduce 10 µs [40, 50), memcpy 5 µs [60, 65): 35 µs of GPU time."""
    tb = TraceBuilder(rank=0, world_size=1, distributed=False)
    tb.step(1, 0, 100)
    tb.kernel(kernel, 10, 20, launch_at_us=5, launch_name=launch)
    tb.nccl_allreduce(40, 10, launch_at_us=30, nelems=1000, kernel_name=comm_kernel)
    tb.memcpy(60, 5, launch_at_us=55)
    return tb


def to_2021(doc):  # noqa: ANN001, ANN201
    """The trace as torch 1.8.1 wrote it: capitalised categories, ``external id``, tids as strings."""
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") not in OLD_CATS:
            continue
        e["cat"] = OLD_CATS[e["cat"]]
        a = e.get("args") or {}
        if e["cat"] in ("Kernel", "Memcpy", "Memset", "Runtime") and "External id" in a:
            a["external id"] = a.pop("External id")
        e["tid"] = f"stream {e['tid']}" if e["cat"] in ("Kernel", "Memcpy", "Memset") else str(e["tid"])
    return doc


def numbers(path):  # noqa: ANN001, ANN201
    res = analyze(load(path))
    r = res.ranks.iloc[0]
    return {"steps": res.meta["steps"], "compute_us": r["compute_total_us"], "comm_us": r["comm_total_us"],
            "memory_us": r["memory_total_us"]}


EXPECTED = {"steps": [1], "compute_us": 20, "comm_us": 10, "memory_us": 5}


def test_today_schema(tmp_path):
    assert numbers(build().write(tmp_path / "t.json")) == EXPECTED


@pytest.mark.filterwarnings("ignore:.*took rank 0 from the file name")  # kineto's worker<N> name, as in 2021
def test_2021_schema(tmp_path):
    doc = to_2021(build().to_dict())
    cats = {e.get("cat") for e in doc["traceEvents"]}
    assert {"Kernel", "Memcpy", "Runtime", "Operator"} <= cats and "kernel" not in cats
    p = tmp_path / "worker0.1623143089861.pt.trace.json"
    p.write_text(json.dumps(doc))
    assert numbers(p) == EXPECTED
    # the collective kernel is comm through its lower-case 'external id' link, not only its name
    rt = load(p).ranks[0]
    assert (rt.events["kind"] == schema.ANNOTATION).sum() == 1  # ProfilerStep#1, an Operator in 2021
    assert (rt.gpu["external_id"] >= 0).sum() == 1  # the allreduce kernel, linked to its op
    assert (rt.events.loc[rt.events["kind"] == schema.CPU_OP, "tid"] == 1000).all()  # "1000" read as 1000


def test_2021_comm_by_enclosing_op_only(tmp_path):
    """A collective kernel with no NCCL name is comm because its launch's 'external id' is a record_param_comms."""
    doc = to_2021(build(comm_kernel="my_allreduce_kernel").to_dict())
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    assert numbers(p) == EXPECTED


@pytest.mark.parametrize("launch", ["cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",
                                    "hipExtModuleLaunchKernel", "hipModuleLaunchKernel"])
def test_launch_call_names(tmp_path, launch):
    p = build(launch=launch).write(tmp_path / "t.json")
    rt = load(p).ranks[0]
    assert not rt.gpu["pre_window"].any()  # every kernel found its launch
    assert numbers(p) == EXPECTED


@pytest.mark.parametrize("comm_kernel", ["ncclDevKernel_Generic_4", "rcclGenericKernel", "ncclKernel_AllReduce_RING_LL_Sum_float"])
def test_rocm_rccl_kernels(tmp_path, comm_kernel):
    tb = build(comm_kernel=comm_kernel, launch="hipLaunchKernel")
    doc = tb.to_dict()
    for e in doc["traceEvents"]:  # a collective kernel with no link to its op: only the name says comm
        if e.get("cat") == "kernel" and e["name"] == comm_kernel:
            e["args"].pop("External id", None)
        if e.get("cat") == "cuda_driver":
            e["cat"], e["name"] = "cuda_runtime", "hipExtLaunchKernel"
            e["args"].pop("External id", None)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    assert numbers(p) == EXPECTED


@pytest.mark.parametrize("cat", ["gpu_user_annotation", "gpu_user_Annotation"])
def test_gpu_user_annotation_spellings(tmp_path, cat):
    tb = build()
    tb.raw({"ph": "X", "cat": cat, "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 10.0, "dur": 60.0})
    p = tb.write(tmp_path / "t.json")
    ev = load(p).ranks[0].events
    assert (ev["kind"] == schema.GPU_ANNOTATION).sum() == 1
    assert numbers(p) == EXPECTED
