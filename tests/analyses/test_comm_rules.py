"""Communication that is not NCCL-named: kernels classified by name or by the enclosing collective
CPU op, the rule reported per kernel (table ``comm_rules``), ``--comm-pattern`` (alias ``--comm-regex``)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tracekit.analyses.classify import RULE_NAMES, comm_rule
from tracekit.analyses.options import AnalyzeOptions
from tracekit.runner.run import analyze
from tracekit.cli import main
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder


def build(path):  # noqa: ANN001, ANN201
    """Kernels (µs) and what makes them comm:

    - gemm [0, 10): compute;
    - ncclDevKernel allreduce [10, 20): nccl_kernel;
    - cross_device_reduce_1stage [20, 25): custom_kernel (launched inside vllm::all_reduce too);
    - ar_inner [30, 36): custom_op, launched at 28 inside vllm::all_reduce [26, 29) -> _C_custom_ar::all_reduce;
    - combine_plain [40, 44): custom_op, launched inside record_function deep_ep.low_latency_combine [38, 40);
    - nvshmemi_sync_kernel [50, 52): custom_kernel;
    - my_comm_kernel [60, 63): user_pattern only with --comm-pattern '^my_comm';
    - gemm_other_thread [70, 80): compute, launched at 27 while vllm::all_reduce runs, but on another thread;
    - gemm_after [90, 100): compute, launched at 30, just after vllm::all_reduce ended (29).
    """
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 200)
    tb.kernel("gemm", 0, 10, launch_at_us=0)
    tb.nccl_allreduce(10, 10, launch_at_us=1, nelems=1000)
    tb.cpu_op("vllm::all_reduce", 18, 2)
    tb.kernel("void vllm::cross_device_reduce_1stage<float, 8>(...)", 20, 5, launch_at_us=19)
    tb.cpu_op("vllm::all_reduce", 26, 3)
    ext = tb.next_external_id()
    tb.cpu_op("_C_custom_ar::all_reduce", 27.5, 1, external_id=ext)
    tb.kernel("ar_inner", 30, 6, launch_at_us=28, external_id=ext)
    tb.annotation("deep_ep.low_latency_combine", 38, 2)
    tb.kernel("combine_plain", 40, 4, launch_at_us=39)
    tb.kernel("nvshmemi_sync_kernel", 50, 2, launch_at_us=49)
    tb.kernel("my_comm_kernel", 60, 3, launch_at_us=59)
    tb.kernel("gemm_other_thread", 70, 10, launch_at_us=27, launch_tid=2000)
    tb.kernel("gemm_after", 90, 10, launch_at_us=30)
    return tb.write(path)


def rules_by_kernel(rt, pattern=None):  # noqa: ANN001, ANN201
    codes = comm_rule(rt, pattern)
    return {str(n): (RULE_NAMES[c] if c >= 0 else None) for n, c in zip(rt.gpu["name"], codes)}


def test_rule_per_kernel(tmp_path):
    rt = load(build(tmp_path / "t.json")).ranks[0]
    got = rules_by_kernel(rt)
    assert got == {
        "gemm": None,
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)": "nccl_kernel",
        "void vllm::cross_device_reduce_1stage<float, 8>(...)": "custom_kernel",
        "ar_inner": "custom_op",
        "combine_plain": "custom_op",
        "nvshmemi_sync_kernel": "custom_kernel",
        "my_comm_kernel": None,
        "gemm_other_thread": None,
        "gemm_after": None,
    }
    assert rules_by_kernel(rt, "^my_comm")["my_comm_kernel"] == "user_pattern"


def test_comm_time_and_rules_table(tmp_path):
    res = analyze(load(build(tmp_path / "t.json")), AnalyzeOptions(comm_pattern="^my_comm"))
    # comm: [10,20) + [20,25) + [30,36) + [40,44) + [50,52) + [60,63) = 10 + 5 + 6 + 4 + 2 + 3
    assert res.ranks["comm_total_us"].tolist() == [10 + 5 + 6 + 4 + 2 + 3]
    assert res.ranks["compute_total_us"].tolist() == [10 + 10 + 10]
    # one row per row of the rule table: per family, sum them
    t = res.comm_rules.groupby("rule").agg(kernels=("kernels", "sum"), kernel_total_us=("kernel_total_us", "sum"))
    assert t.loc["nccl_kernel", "kernels"] == 1 and t.loc["nccl_kernel", "kernel_total_us"] == 10
    assert t.loc["custom_kernel", "kernels"] == 2 and t.loc["custom_kernel", "kernel_total_us"] == 5 + 2
    lib = res.comm_rules.set_index("library")
    assert lib.loc["vLLM custom all-reduce", "top_kernel"].startswith("void vllm::cross_device_reduce")
    assert lib.loc["NVSHMEM", "top_kernel"] == "nvshmemi_sync_kernel" and lib.loc["NVSHMEM", "kernel_total_us"] == 2
    assert t.loc["custom_op", "kernels"] == 2 and t.loc["custom_op", "kernel_total_us"] == 6 + 4
    assert t.loc["user_pattern", "kernels"] == 1 and t.loc["user_pattern", "kernel_total_us"] == 3
    assert "collective_op" not in t.index  # the NCCL kernel was already matched by its name


@pytest.mark.parametrize("flag", ["--comm-kernel", "--comm-pattern", "--comm-regex"])
def test_cli_pattern_flag_and_text_section(tmp_path, flag):
    p = build(tmp_path / "t.json")
    r = CliRunner().invoke(main, ["analyze", str(p), flag, "^my_comm"])
    assert r.exit_code == 0, r.output
    assert "Communication kernels by classification rule" in r.output and "user_pattern" in r.output
    j = CliRunner().invoke(main, ["analyze", str(p), flag, "^my_comm", "--format", "json"])
    doc = json.loads(j.stdout)
    assert doc["meta"]["comm_pattern"] == "^my_comm"
    assert {row["rule"] for row in doc["comm_rules"]} == {"nccl_kernel", "custom_kernel", "custom_op", "user_pattern"}


def test_bad_pattern_is_one_line(tmp_path):
    p = build(tmp_path / "t.json")
    r = CliRunner().invoke(main, ["analyze", str(p), "--comm-pattern", "(["])
    assert r.exit_code == 2 and r.output.startswith("error: --comm-pattern") and len(r.output.strip().splitlines()) == 1


def test_plain_nccl_trace_has_no_rules_section(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 10, 20, launch_at_us=5)
    tb.nccl_allreduce(40, 10, launch_at_us=30, nelems=1000)
    r = CliRunner().invoke(main, ["analyze", str(tb.write(tmp_path / "t.json"))])
    assert r.exit_code == 0 and "classification rule" not in r.output
