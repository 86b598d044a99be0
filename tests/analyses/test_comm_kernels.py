"""Communication that is not NCCL (issue 23, item 1): the rule data table, DeepEP's kernels as the real
library names them, and ``--comm-kernel``.

The DeepEP trace is hand-built with the kernel and annotation names of DeepSeek's public DeepSeek-V3
training trace (github.com/deepseek-ai/profile-data ``train.json``, rank 0 of EP64; not committed: that
repository has no licence file). On that trace tracekit reported comm 0 µs before this change and
113030 µs after (notify 32578 + dispatch 31004 + combine 49448).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.errors import TraceLoadWarning

from tracekit.analyses.classify import RULE_NAMES, comm_rule
from tracekit.analyses.comm_kernels import COMM_RULES, join_patterns, markdown_table
from tracekit.runner.run import analyze
from tracekit.cli import main
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder

REPO = Path(__file__).resolve().parents[2]
NOTIFY = ("void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int, int, int const*, int const*, "
          "int*, void*, void**, int**, int, int, int, int*, bool, int)")
NOTIFY_DISPATCH = "void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int, int const*, int*)"
DISPATCH = ("void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*, float*, "
            "dpsk::ep::internode::SourceMeta*, int4 const*)")
COMBINE = ("void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*, "
           "dpsk::ep::internode::SourceMeta const*)")
LAYOUT = "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)"
CAST = ("void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128, false, 128, false>(__nv_bfloat16 const*, "
        "int, unsigned char*, float*, int, int, int, int, bool, float, __nv_fp8_interpretation_t)")
OPEN_DEEPEP = ("void deep_ep::intranode::dispatch<8, 768, 6144>(int4*, float*, int*)",
               "void deep_ep::internode_ll::combine<false, 7168>(void*, void const*)",
               "void deep_ep::internode_ll::clean_low_latency_buffer<32>(int*, int, int*, int)",
               "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)",
               "void ep::intranode::notify_dispatch<8>(int const*, int*)")


def deepseek_rank0(path: Path) -> Path:
    """Rank 0 of 64, one step [0, 1000) µs, the shape of DeepSeek's ``dispatch(F)`` / ``combine(B)`` ranges
    (stream 27: comm; stream 7: compute):

    - ``dispatch(F)`` [100, 400): get_dispatch_layout [110, 117) (compute), notify_dispatch [120, 250),
      dispatch [250, 400);
    - ``combine(B)`` [500, 800): FP8 cast [505, 520) (compute), cached_notify [520, 600), combine [600, 800);
    - a grouped GEMM [300, 700) on stream 7, overlapping dispatch and combine.
    """
    tb = TraceBuilder(rank=0, world_size=64)
    tb.step(1, 0, 1000)
    tb.annotation("dispatch(F)", 100, 300)
    tb.kernel(LAYOUT, 110, 7, 27, launch_at_us=101)
    tb.kernel(NOTIFY_DISPATCH, 120, 130, 27, launch_at_us=102)
    tb.kernel(DISPATCH, 250, 150, 27, launch_at_us=103)
    tb.kernel("void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(Params)", 300, 400, 7,
              launch_at_us=290)
    tb.annotation("combine(B)", 500, 300)
    tb.kernel(CAST, 505, 15, 27, launch_at_us=501)
    tb.kernel(NOTIFY, 520, 80, 27, launch_at_us=502)
    tb.kernel(COMBINE, 600, 200, 27, launch_at_us=503)
    return tb.write(path)


def _load_rank0_of_64(tmp_path):
    """The one rank of a 64-rank trace set: the loader says the other 63 are missing (expected here)."""
    with pytest.warns(TraceLoadWarning, match=r"world_size is 64 but no trace for rank\(s\) \[1-63\]"):
        return load(deepseek_rank0(tmp_path / "rank0.json"))


def test_deepep_kernels_are_communication_and_layout_and_casts_are_not(tmp_path):
    rt = _load_rank0_of_64(tmp_path).ranks[0]
    codes = comm_rule(rt)
    got = {str(n): (COMM_RULES[c].kind if c >= 0 else None) for n, c in zip(rt.gpu["name"], codes)}
    assert got[NOTIFY_DISPATCH] == got[NOTIFY] == "notify (all-to-all layout exchange)"
    assert got[DISPATCH] == "dispatch (all-to-all)" and got[COMBINE] == "combine (all-to-all)"
    assert got[LAYOUT] is None and got[CAST] is None  # inside dispatch(F) / combine(B), but compute
    assert {RULE_NAMES[c] for c in codes if c >= 0} == {"custom_kernel"}


def test_deepep_comm_time_and_rules_table(tmp_path):
    res = analyze(_load_rank0_of_64(tmp_path))
    r = res.ranks.iloc[0]
    assert r["comm_total_us"] == 130 + 150 + 80 + 200  # notify_dispatch, dispatch, cached_notify, combine
    assert r["compute_total_us"] == 7 + 400  # a union: the FP8 cast [505, 520) lies inside the GEMM
    # overlap with the GEMM [300, 700): dispatch [300, 400) + cached_notify [520, 600) + combine [600, 700)
    assert r["overlap_total_us"] == 100 + 80 + 100
    t = res.comm_rules.set_index("kind")
    assert t.loc["notify (all-to-all layout exchange)", "kernels"] == 2
    assert t.loc["notify (all-to-all layout exchange)", "kernel_total_us"] == 130 + 80
    assert t.loc["combine (all-to-all)", "top_kernel"] == COMBINE
    assert set(t["library"]) == {"DeepEP"}


def test_open_source_deepep_namespaces():
    table = [(re.compile(r.pattern, re.I), r) for r in COMM_RULES if r.by == "kernel"]

    def first(name: str):  # noqa: ANN202
        return next(((r.library, r.kind) for p, r in table if p.search(name)), None)

    assert first(OPEN_DEEPEP[0]) == ("DeepEP", "dispatch (all-to-all)")
    assert first(OPEN_DEEPEP[1]) == ("DeepEP", "combine (all-to-all)")
    assert first(OPEN_DEEPEP[2]) == ("DeepEP", "barrier / buffer clean")
    assert first(OPEN_DEEPEP[3]) is None  # deep_ep::layout: local compute
    assert first(OPEN_DEEPEP[4]) == ("DeepEP", "notify (all-to-all layout exchange)")


def test_comm_kernel_option_repeatable(tmp_path):
    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 100)
    tb.kernel("my_a2a_kernel", 0, 10, launch_at_us=0)
    tb.kernel("my_barrier", 20, 5, launch_at_us=1)
    tb.kernel("gemm", 30, 40, launch_at_us=2)
    p = tb.write(tmp_path / "t.json")
    r = CliRunner().invoke(main, ["analyze", str(p), "--format", "json", "--comm-kernel", "^my_a2a",
                                  "--comm-kernel", "barrier$"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["ranks"][0]["comm_total_us"] == 10 + 5 and doc["ranks"][0]["compute_total_us"] == 40
    assert doc["meta"]["comm_pattern"] == "(?:^my_a2a)|(?:barrier$)"
    assert [(x["rule"], x["library"], x["kernels"]) for x in doc["comm_rules"]] == [
        ("user_pattern", "user (--comm-kernel)", 2)]
    assert join_patterns(()) is None and join_patterns(["a"]) == "a"


def test_docs_list_the_table():
    doc = (REPO / "docs" / "communication.md").read_text()
    assert markdown_table() in doc, "docs/communication.md: paste tracekit.analyses.comm_kernels.markdown_table()"


def test_other_libraries_by_name():
    """MSCCL++ kernels are named by the user but take mscclpp device handles (in the demangled
    signature kineto records); NVSHMEM's carry its prefix; a plain GEMM matches nothing."""
    table = [(re.compile(r.pattern, re.I), r) for r in COMM_RULES if r.by == "kernel"]

    def first(name: str):  # noqa: ANN202
        return next((r.library for p, r in table if p.search(name)), None)

    assert first("void allreduce7<__half>(__half*, __half*, __half*, mscclpp::DeviceHandle<mscclpp::MemoryChannel>*, "
                 "unsigned long, int, int, unsigned int)") == "MSCCL++"
    assert first("void nvshmemi_transfer_rma_nbi_kernel<(nvshmemi_op_t)0>(void*)") == "NVSHMEM"
    assert first("void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 8>(float**, float*)") \
        == "torch SymmetricMemory"
    assert first("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64") is None
