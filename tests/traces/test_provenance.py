"""compiled_kernels.json and the parsers of inductor's output (tracekit.traces.provenance), on real generated
code committed under tests/data/inductor (torch 2.13, CPU: a two-block Sequential of Linear-ReLU-Linear and
LayerNorm with a residual; see tests/data/inductor/README.md)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from tracekit.traces.provenance import (CompiledKernels, KernelOrigin, ProvenanceError, extern_op,
                                        fused_ops_from_name, module_path_from_stack, parse_output_code,
                                        read_compiled, read_compiled_kernels, strip_wrappers, trace_names,
                                        write_compiled)

DATA = Path(__file__).parents[1] / "data" / "inductor"


def _code(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_forward_code_launches_in_order_with_their_comments() -> None:
    code = _code("cpu_forward_comments.txt")
    ks = parse_output_code(code)
    assert [k.name for k in ks] == ["extern_kernels.addmm", "cpp_fused_relu_0", "extern_kernels.addmm",
                                    "cpp_fused_add_native_layer_norm_1", "extern_kernels.addmm", "cpp_fused_relu_0",
                                    "extern_kernels.addmm",
                                    "cpp_fused_add_native_layer_norm_native_layer_norm_backward_2"]
    # the four Linear layers' GEMMs, each named by its dynamo node, fused with the transpose of the weight
    assert [k.source_nodes for k in ks if k.name == "extern_kernels.addmm"] == [
        ["linear"], ["linear_1"], ["linear_2"], ["linear_3"]]
    assert ks[0].aten_ops == ["aten::t", "aten::addmm"]
    assert all(k.handle is None for k in ks)  # generated without provenance tracking
    # C++ kernels carry no comment in this torch: nothing is invented for them
    assert ks[1].source_nodes == [] and ks[1].aten_ops == []


def test_provenance_handles_pair_each_launch() -> None:
    ks = parse_output_code(_code("cpu_backward_provenance.txt"))
    assert [k.handle for k in ks] == [f"{k.name}:{i}" for i, k in enumerate(ks, 1)]
    mm = [k for k in ks if k.name == "extern_kernels.mm"]
    # 4 Linear layers x 2 GEMMs, less the first layer's input gradient (not needed), less the one inductor
    # turned into an addmm with the residual's gradient add
    assert len(mm) == 6 and sum(k.name == "extern_kernels.addmm" for k in ks) == 1
    assert mm[0].source_nodes == ["linear_3", "permute_4", "mm"]


def test_fallback_ops_are_launches_named_as_the_trace_names_them() -> None:
    ks = parse_output_code(_code("cpu_attention_backward_provenance.txt"))
    assert [extern_op(k.name) for k in ks] == ["aten::mm", "aten::mm", None,
                                               "aten::_scaled_dot_product_flash_attention_for_cpu_backward", None,
                                               "aten::mm", None]
    sdpa = ks[3]
    assert sdpa.handle == "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default:4"
    assert "aten::_scaled_dot_product_flash_attention_for_cpu_backward" in sdpa.aten_ops


def test_cpp_kernels_trace_under_their_record_function_name() -> None:
    code = _code("cpu_backward_provenance.txt")
    assert trace_names(code, "cpp_fused_sum_2") == "graph_0_cpp_fused_sum_2"
    assert trace_names(code, "triton_poi_fused_relu_0") == "triton_poi_fused_relu_0"  # not in this code: as is


@pytest.mark.parametrize(("name", "ops"), [
    ("triton_poi_fused_add_mul_0", ("add", "mul")),
    ("triton_red_fused_native_layer_norm_1", ("native_layer_norm",)),
    ("triton_per_fused__log_softmax_native_layer_norm_backward_3", ("_log_softmax", "native_layer_norm_backward")),
    ("triton_poi_fused__to_copy_add_1", ("_to_copy", "add")),
    ("triton_tem_fused_mm_0", ("mm",)),
    ("graph_0_cpp_fused_relu_threshold_backward_1", ("relu", "threshold_backward")),
    ("triton_poi_fused_0", ()),
    ("sm90_xmma_gemm_bf16bf16_bf16f32", ()),
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", ()),
])
def test_fused_ops_from_name(name: str, ops: tuple[str, ...]) -> None:
    assert fused_ops_from_name(name) == ops


@pytest.mark.parametrize(("entry", "path"), [
    ("L['self'].blocks[0].fc", "blocks.0.fc"),
    ("L['fn'].0.act", "0.act"),
    ("L['self']._modules['fc1']", "fc1"),
    ("L['self'].module._orig_mod.front.1", "front.1"),
    ("L['self']", ""),
])
def test_module_path_from_dynamo_stack(entry: str, path: str) -> None:
    assert module_path_from_stack(entry) == path


def test_strip_wrappers() -> None:
    assert strip_wrappers("module._orig_mod.layers.3") == "layers.3"
    assert strip_wrappers("module") == ""
    assert strip_wrappers("modules.0") == "modules.0"  # a real name that only starts like a wrapper
    # wrappers inside the tree (FSDP1, activation checkpointing, a compiled submodule) are not the user's names
    assert strip_wrappers("module.blocks.0._checkpoint_wrapped_module.mlp") == "blocks.0.mlp"
    assert strip_wrappers("blocks.0._fsdp_wrapped_module._orig_mod.fc") == "blocks.0.fc"
    # a user's own submodule called "module" below the root stays
    assert strip_wrappers("encoder.module.fc") == "encoder.module.fc"


def test_roundtrip_and_reader(tmp_path: Path) -> None:
    doc = CompiledKernels(source="provenance_tracking", kernels={
        "triton_poi_fused_relu_0": KernelOrigin(modules=["mlp.act"], aten_ops=["aten::relu"], graph="forward",
                                                calls=[["mlp.act"]])})
    write_compiled(tmp_path, doc)
    assert read_compiled(tmp_path) == doc
    got = read_compiled_kernels(tmp_path)
    assert got["triton_poi_fused_relu_0"].modules == ["mlp.act"]
    assert read_compiled_kernels(tmp_path / "nothing") == {}  # no file: no kernels, no error


@pytest.mark.parametrize(("content", "problem"), [
    (b"{not json", "not a compiled-kernels file"),
    (b'{"version": 1, "kernels": {"k": {"modules": "fc1"}}}', "not a compiled-kernels file"),
    (b'{"version": 9, "kernels": {}}', "format version 9"),
])
def test_bad_file_names_the_file(tmp_path: Path, content: bytes, problem: str) -> None:
    (tmp_path / "compiled_kernels.json").write_bytes(content)
    with pytest.raises(ProvenanceError, match=problem) as e:
        read_compiled_kernels(tmp_path)
    assert str(tmp_path / "compiled_kernels.json") in str(e.value)
    assert e.value.exit_code == 2


def test_the_format_decodes_unknown_fields_away(tmp_path: Path) -> None:
    (tmp_path / "compiled_kernels.json").write_bytes(msgspec.json.encode(
        {"version": 1, "kernels": {"k": {"modules": ["a"], "future_field": 1}}}))
    assert read_compiled_kernels(tmp_path)["k"].modules == ["a"]


#: the layout of inductor's Triton wrapper code (torch 2.5+), hand-reduced: a comment block above each kernel's
#: definition (kernel path, source nodes), a comment above each launch, ``<name>_xnumel`` helper lines that
#: start like a launch but are none, a kernel defined once and launched twice, a template GEMM, a fallback op
TRITON_CODE = '''
async_compile = AsyncCompile()


# kernel path: /tmp/torchinductor_u/ab/cabfused0.py
# Topologically Sorted Source Nodes: [x, gelu], Original ATen: [aten.add, aten.gelu]
# Source node to ATen node mapping:
#   gelu => add_1, erf, mul
# Graph fragment:
#   %erf : [num_users=1] = call_function[target=torch.ops.aten.erf.default](args = (%mul_1,), kwargs = {})
triton_poi_fused_add_gelu_0 = async_compile.triton('triton_poi_fused_add_gelu_0', """
@triton.jit
def triton_poi_fused_add_gelu_0(in_out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
""", device_str='cuda')


# kernel path: /tmp/torchinductor_u/cd/ccdtem.py
# Topologically Sorted Source Nodes: [linear], Original ATen: [aten.addmm]
triton_tem_fused_addmm_1 = async_compile.triton('triton_tem_fused_addmm_1', """
""", device_str='cuda')


async_compile.wait(globals())
del async_compile

def call(args):
    primals_1, primals_2 = args
    with torch.cuda._DeviceGuard(0):
        buf0 = empty_strided_cuda((8, 64), (64, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.addmm]
        stream0 = get_raw_stream(0)
        triton_tem_fused_addmm_1.run(primals_1, primals_2, buf0, grid=mm_grid(8, 64, meta0), stream=stream0)
        # Topologically Sorted Source Nodes: [x, gelu], Original ATen: [aten.add, aten.gelu]
        triton_poi_fused_add_gelu_0_xnumel = 512
        triton_poi_fused_add_gelu_0.run(buf0, triton_poi_fused_add_gelu_0_xnumel, stream=stream0)
        # Topologically Sorted Source Nodes: [sdpa], Original ATen: [aten._scaled_dot_product_flash_attention]
        buf2 = torch.ops.aten._scaled_dot_product_flash_attention.default(buf0, buf0, buf0, 0.0, True)
        # Topologically Sorted Source Nodes: [x_1, gelu_1], Original ATen: [aten.add, aten.gelu]
        triton_poi_fused_add_gelu_0.run(buf2, 512, stream=stream0)
    return (buf0, )
'''


def test_triton_layout() -> None:
    ks = parse_output_code(TRITON_CODE)
    assert [k.name for k in ks] == ["triton_tem_fused_addmm_1", "triton_poi_fused_add_gelu_0",
                                    "torch.ops.aten._scaled_dot_product_flash_attention.default",
                                    "triton_poi_fused_add_gelu_0"]
    assert [k.source_nodes for k in ks] == [["linear"], ["x", "gelu"], ["sdpa"], ["x_1", "gelu_1"]]
    assert ks[1].aten_ops == ["aten::add", "aten::gelu"]
    tem, gelu = "/tmp/torchinductor_u/cd/ccdtem.py", "/tmp/torchinductor_u/ab/cabfused0.py"
    assert [k.path for k in ks] == [tem, gelu, None, gelu]
    assert extern_op(ks[2].name) == "aten::_scaled_dot_product_flash_attention"


def test_triton_wrapper_code_of_torch_2_11_on_h100() -> None:
    """Real Triton wrapper code (torch 2.11, H100, provenance tracking on) of two blocks of Linear(64, 256), GELU,
    Linear(256, 64) and LayerNorm(64) with a residual (benchmarks/gpu/provenance_code.py): every launch is found,
    in order, each with its debug handle and its comment's ATen ops; the compiled_kernels.json the capture wrote
    there names each Triton kernel of the code with its graph and the modules of the blocks it computes."""
    fwd = parse_output_code(_code("cuda_forward_provenance.txt"))
    bwd = parse_output_code(_code("cuda_backward_provenance.txt"))
    for code, ks in ((_code("cuda_forward_provenance.txt"), fwd), (_code("cuda_backward_provenance.txt"), bwd)):
        launches = code.count(".run(") + sum(code.count(f"extern_kernels.{op}(") for op in ("mm", "addmm", "bmm"))
        assert len(ks) == launches  # forward 4 Triton + 4 GEMMs, backward 8 + 7
        assert [k.handle for k in ks] == [f"{k.name}:{i}" for i, k in enumerate(ks, 1)]
    assert [k.name for k in fwd] == ["extern_kernels.addmm", "triton_poi_fused_gelu_0", "extern_kernels.addmm",
                                     "triton_per_fused_add_native_layer_norm_1", "extern_kernels.addmm",
                                     "triton_poi_fused_gelu_0", "extern_kernels.mm",
                                     "triton_per_fused_add_addmm_native_layer_norm_native_layer_norm_backward_2"]
    assert fwd[1].aten_ops == ["aten::gelu"] and fwd[1].source_nodes == ["gelu"]
    assert fwd[5].source_nodes == ["gelu_1"]  # the same kernel, launched by the second block
    assert fwd[3].aten_ops == ["aten::add", "aten::native_layer_norm"]
    got = msgspec.json.decode((DATA / "cuda_compiled_kernels.json").read_bytes(), type=CompiledKernels)
    assert got.torch == "2.11.0+cu130"
    triton = {k.name for k in fwd + bwd if k.name.startswith("triton_")}
    assert set(got.kernels) == triton
    assert {n for n, e in got.kernels.items() if e.graph == "forward"} == {k.name for k in fwd} & triton
    assert sorted(got.kernels["triton_poi_fused_gelu_0"].modules) == ["blocks.0.act", "blocks.1.act"]
    assert set(got.extern) == {"aten::addmm", "aten::mm"}
