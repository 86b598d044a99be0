"""Byte models of indexed ops (they touch the indexed elements, not whole tensors), compiled kernels' partly read
arguments, and which TF32 switch judges FP32 GEMMs and convolutions: hand-built traces, expected values as
arithmetic. Shapes are those of the committed GPT-2 run (sample_traces/examples/h100_ops)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tracekit
from tests.analyses.test_ops import BF16, F32, _analyze, _codes, _gpu_builder, _op_kernel, _row
from tracekit.analyses.ops import _compiled_kernels

I64 = "long int"
N, C, D, V = 4096, 50257, 768, 50257  # rows (batch·sequence), vocabulary classes, embedding width, table rows


def _one(tmp_path: Path, name: str, dims: list, types: list, concrete: list | None = None) -> dict:
    tb = _gpu_builder()
    _op_kernel(tb, name, 10, dims, types, 1000.0, concrete)
    return _row(_analyze(tmp_path, tb), name)


def test_nll_loss_reads_one_logit_per_row(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::nll_loss_forward", [[N, C], [N], [], [], []], [F32, I64, "", "Scalar", "Scalar"],
             ["", "", "", "1", "-100"])
    # one logit per row + the targets + the mean loss and total_weight (not N·C logits)
    assert r["bytes_per_step"] == N * 4 + N * 8 + 4 + 4 and r["flops_per_step"] == N
    assert r["category"] == "reduction"


def test_nll_loss_backward_writes_one_element_per_row(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::nll_loss_backward", [[], [N, C], [N], [], [], [], []],
             [F32, F32, I64, "", "Scalar", "Scalar", F32], ["", "", "", "", "1", "-100", ""])
    assert r["bytes_per_step"] == 4 + N * 8 + 4 + N * 4  # grad_output, targets, total_weight, N written


def test_gather_touches_the_index_shape(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::gather", [[V, D], [], [N, D], [], [N, D]], [F32, "Scalar", I64, "Scalar", F32],
             ["", "0", "", "False", ""])
    assert r["bytes_per_step"] == N * D * 8 + 2 * N * D * 4  # the index, the gathered elements, the output


def test_index_select_reads_the_selected_rows(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::index_select", [[V, D], [], [N]], [F32, "Scalar", I64], ["", "0", ""])
    assert r["bytes_per_step"] == N * 8 + 2 * N * D * 4


def test_embedding_reads_the_indexed_rows(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::embedding", [[V, D], [8, 512], [], [], []], [F32, I64, "Scalar", "Scalar", "Scalar"],
             ["", "", "-1", "False", "False"])
    assert r["bytes_per_step"] == N * 8 + 2 * N * D * 4


def test_embedding_dense_backward_writes_at_most_the_indexed_rows(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::embedding_dense_backward", [[1, 512, D], [1, 512], [], [], []],
             [F32, I64, "Scalar", "Scalar", "Scalar"], ["", "", "512", "-1", "False"])
    assert r["bytes_per_step"] == 512 * D * 4 + 512 * 8 + 512 * D * 4
    r = _one(tmp_path, "aten::embedding_dense_backward", [[8, 512, D], [8, 512], [], [], []],
             [F32, I64, "Scalar", "Scalar", "Scalar"], ["", "", "1000", "-1", "False"])
    assert r["bytes_per_step"] == N * D * 4 + N * 8 + 1000 * D * 4  # 4096 indices, 1000 rows at most


def test_scatter_add_and_index_add_read_modify_write(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::scatter_add_", [[V, D], [], [N, D], [N, D]], [F32, "Scalar", I64, F32],
             ["", "0", "", ""])
    assert r["bytes_per_step"] == N * D * 8 + N * D * 4 + 2 * N * D * 4  # index, src, self read + written
    r = _one(tmp_path, "aten::scatter_", [[V, D], [], [N, D], []], [F32, "Scalar", I64, "Scalar"],
             ["", "0", "", "0"])
    assert r["bytes_per_step"] == N * D * 8 + N * D * 4  # a scalar value: the index read, the elements written
    r = _one(tmp_path, "aten::index_add_", [[V, D], [], [N], [N, D], []], [F32, "Scalar", I64, F32, "Scalar"],
             ["", "0", "", "", "1"])
    assert r["bytes_per_step"] == N * 8 + N * D * 4 + 2 * N * D * 4


def test_index_put_by_the_broadcast_index(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::index_put_", [[V, D], [[N]], [N, D], []], [F32, "TensorList", F32, "Scalar"],
             ["", "", "", "True"])
    assert r["bytes_per_step"] == N * 8 + N * D * 4 + 2 * N * D * 4  # accumulate: the rows read and written
    r = _one(tmp_path, "aten::index", [[V, D], [[N]]], [F32, "TensorList"])
    assert r["bytes_per_step"] == N * 8 + 2 * N * D * 4


def test_copy_reads_src_and_writes_self(tmp_path: Path) -> None:
    r = _one(tmp_path, "aten::copy_", [[D, 3 * D], [D, 3 * D], []], [BF16, F32, "Scalar"], ["", "", "False"])
    assert r["bytes_per_step"] == D * 3 * D * (4 + 2)  # an fp32 -> bf16 cast: 6 bytes per element, not 8


def test_compiled_kernel_reads_at_most_its_iteration_space(tmp_path: Path) -> None:
    """inductor's loss kernel of GPT-2: the [8, 512, 50257] logits are an argument, but with the log-sum-exp
    already computed it reads one logit per row: its iteration space (xnumel 1 · r0_numel 4096) bounds them."""
    _compiled_kernels.cache_clear()
    name = "triton_red_fused__log_softmax__to_copy_clone_nll_loss_forward_slice_sub_view_2"
    tb = _gpu_builder()
    _op_kernel(tb, name, 10, [[], [8, 513], [8, 512, C], [N, 1], [N, 1], [], [], []],
               [F32, I64, BF16, F32, F32, F32, "Scalar", "Scalar"], 100.0, ["", "", "", "", "", "", "1", "4096"],
               kernel=name)
    r = _row(_analyze(tmp_path, tb), name)
    # out scalar, targets (4096 of 8·513 read), logits (4096 of 8·512·50257), max and sum per row, a scalar
    assert r["bytes_per_step"] == 4 + N * 8 + N * 2 + N * 4 + N * 4 + 4
    assert r["flops_per_step"] == N * 3  # 4096 points × its fused ops' words (sub, nll_loss_forward, clone)


def _run_json(folder: Path, tf32: dict | None) -> None:
    (folder / "run.json").write_text(json.dumps({"schema_version": 1, "run": {"tf32": tf32}}))


def _fp32_conv_and_mm(tb) -> None:
    x, w = [32, 256, 56, 56], [256, 256, 3, 3]
    conc = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]
    _op_kernel(tb, "aten::convolution", 10, [x, w, [], [], [], [], [], [], []], [F32, F32, ""] + ["ScalarList"] * 3
               + ["Scalar", "ScalarList", "Scalar"], 4000.0, conc)
    _op_kernel(tb, "aten::mm", 5000, [[4096, 4096], [4096, 4096]], [F32, F32], 3000.0)


@pytest.mark.parametrize("tf32", [None, {"matmul": False, "cudnn": True}, {"matmul": True, "cudnn": False}])
def test_fp32_conv_is_judged_by_cudnn_tf32_and_mm_by_matmul_tf32(tmp_path: Path, tf32: dict | None) -> None:
    tb = _gpu_builder()
    tb.step(1, 0, 9000)
    _fp32_conv_and_mm(tb)
    tb.write(tmp_path / "rank0.trace.json")
    _run_json(tmp_path, tf32)
    res = tracekit.analyze(tmp_path)
    conv_flops = 2 * 32 * 256 * 256 * 9 * 56 * 56
    mm_flops = 2 * 4096**3
    conv_peak = 66.9 if tf32 and tf32["cudnn"] is False else 494.7  # cuDNN's TF32 is on unless said off
    mm_peak = 494.7 if tf32 and tf32["matmul"] else 66.9  # matmul TF32 is off unless said on
    conv, mm = _row(res, "aten::convolution"), _row(res, "aten::mm")
    assert conv["pct_of_roofline"] == pytest.approx(100 * conv_flops / conv_peak / 1e12 / 4000e-6)
    assert mm["pct_of_roofline"] == pytest.approx(100 * mm_flops / mm_peak / 1e12 / 3000e-6)
    assert res.meta["peaks"][0]["tf32"] is (mm_peak == 494.7)
    assert res.meta["peaks"][0]["tf32_conv"] is (conv_peak == 494.7)
    notes = " ".join(res.meta["notes"])
    assert ("torch.backends.cudnn.allow_tf32) was off, torch's default is on" in notes) is (tf32 is None)
    assert ("torch.backends.cuda.matmul.allow_tf32) was on, torch's default is off" in notes) is (tf32 is None)
    msg = res.tables["findings"].set_index("code").loc["gemm_below_peak", "message"]
    assert ("torch.backends.cudnn.allow_tf32 = True" in msg) is (conv_peak == 66.9)
    assert ("torch.backends.cuda.matmul.allow_tf32 = True" in msg) is (mm_peak == 66.9)
    assert _codes(res)["gemm_below_peak"]["ops"]


def test_backward_op_takes_the_module_of_the_op_that_created_its_node(tmp_path: Path) -> None:
    """A view of the input ids (no autograd node) carries the sequence number the embedding's node then takes
    (GPT-2's `transformer` > `transformer.wte`): the backward goes to the last forward op with that number."""
    from tests.tracebuilder import TraceBuilder

    tb = TraceBuilder(rank=0, world_size=1)
    tb.step(1, 0, 5000)
    tb.annotation("tracekit.module:transformer", 5, 500)
    _op_kernel(tb, "aten::add", 10, [[8, 512], [8, 512]], [I64, I64], 1.0, seq=5)  # no node: the next one's 5
    tb.annotation("tracekit.module:transformer.wte", 100, 100)
    _op_kernel(tb, "aten::embedding", 110, [[V, D], [8, 512], [], [], []], [F32, I64, "Scalar", "Scalar", "Scalar"],
               2.0, ["", "", "-1", "False", "False"], seq=5)
    node = tb.next_external_id()
    tb.cpu_op("autograd::engine::evaluate_function: EmbeddingBackward0", 700, 50, external_id=node,
              **{"Sequence number": 5, "Fwd thread id": 1})
    _op_kernel(tb, "aten::embedding_dense_backward", 705, [[8, 512, D], [8, 512], [], [], []],
               [F32, I64, "Scalar", "Scalar", "Scalar"], 30.0, ["", "", str(V), "-1", "False"])
    ops = _analyze(tmp_path, tb).tables["ops"].set_index("op")
    assert ops.loc["aten::embedding_dense_backward", "module"] == "transformer.wte"
    assert ops.loc["aten::add", "module"] == "transformer"


def test_unaligned_gemm_dimensions() -> None:
    """The first of N, K, M that is no multiple of the dtype's 16-byte tile (8 bf16/fp16 elements, 4 fp32)."""
    from tracekit.analyses.ops_findings import unaligned_dim

    assert unaligned_dim("aten::mm", "[[4096, 768], [768, 50257]]", "bfloat16") == ("N", 50257, 8)
    assert unaligned_dim("aten::mm", "[[4096, 768], [768, 50304]]", "bfloat16") is None
    assert unaligned_dim("aten::addmm", "[[50257], [4096, 770], [770, 64]]", "float16") == ("K", 770, 8)
    assert unaligned_dim("aten::addmm", "[[30], [800, 64], [64, 30]]", "float32") == ("N", 30, 4)
    # the composites (linear, matmul) never own a GEMM row: the mm/addmm under them does
    assert unaligned_dim("aten::linear", "[[8, 100, 64], [30, 64], [30]]", "float32") is None
    assert unaligned_dim("aten::bmm", "[[12, 197, 64], [12, 64, 197]]", "bfloat16") == ("N", 197, 8)
    assert unaligned_dim("aten::bmm", "[[12, 197, 64], [12, 64, 200]]", "bfloat16") == ("M", 197, 8)
    assert unaligned_dim("aten::convolution", "[[8, 3, 224, 224], [64, 3, 7, 7]]", "float32") is None
    assert unaligned_dim("aten::mm", None, "bfloat16") is None and unaligned_dim("aten::mm", "[[3, 5], [5, 7]]",
                                                                                  "int8") is None
