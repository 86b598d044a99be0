"""Real 2-rank gloo runs on CPU: the compiled graphs (run.json ``graphs``, graphs/*.fx.txt) in each optimize_ddp
mode and with replicate(), checked against DDPOptimizer's own log and the reducer's bucket sizes; --torchviz."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.runner.pipeline import analyze_paths

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
WIDTH = 512  # one Linear weight = 1 MiB: DDPOptimizer (1 MiB buckets) puts every layer in its own graph
SMALL = ["--device", "cpu", "--width", str(WIDTH), "--depth", "4", "--batch-size", "4", "--warmup", "2",
         "--steps", "2", "--profile-wait", "0", "--profile-warmup", "1", "--profile-steps", "1", "--timeout", "120",
         "--bucket-cap-mb", "1", "--graph-break-at", "1", "--dynamo", "aot_eager", "--no-bucket-timing"]
PARAMS = [f"{part}.{i}.0.{w}" for part in ("front", "back") for i in (0, 1) for w in ("weight", "bias")]
PARAM_BYTES = {p: (WIDTH * WIDTH if p.endswith("weight") else WIDTH) * 4 for p in PARAMS}


def _profile(out: Path, *args: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "tracekit", "profile", "--nproc", "2", "--out", str(out), *SMALL, *args],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads((out / "run.json").read_text())


def _files_parse(run: Path, graphs: list[dict]) -> None:
    for g in graphs:
        text = (run / g["file"]).read_text()
        ast.parse(text)
        assert "def forward" in text
        for p in g["params"]:
            assert f"# param: {p}\n" in text


def _ddpo_name(dynamo_name: str) -> str:
    """DDPOptimizer's log names a parameter by its dynamo input (``L_self_modules_front_modules_0_modules_0_
    parameters_weight_``): back to the module path (``front.0.0.weight``)."""
    body = re.sub(r"^L_self_|_$", "", dynamo_name)
    return re.sub(r"_?(?:modules|parameters)_", ".", body).strip(".")


def _check_reducer_buckets(m: dict) -> None:
    """Every parameter in exactly one reducer bucket; the bytes of each bucket's parameters are the
    reducer's own bucket sizes; each graph's buckets are those of its parameters."""
    g = m["graphs"]
    assert g["reducer_params"] == PARAMS
    flat = sorted(i for b in g["reducer_buckets"] for i in b)
    assert flat == list(range(len(PARAMS)))
    sizes = [sum(PARAM_BYTES[PARAMS[i]] for i in b) for b in g["reducer_buckets"]]
    assert sizes == m["buckets"]["reducer"]["rebuilt_bucket_sizes_bytes"]
    for x in (x for x in g["graphs"] if x["kind"] == "forward"):
        own = {b for b, idx in enumerate(g["reducer_buckets"]) for i in idx if PARAMS[i] in x["params"]}
        assert x["buckets"] == sorted(own) and own


def test_ddp_optimizer_graphs_match_its_log_and_torchviz(tmp_path: Path) -> None:
    run = tmp_path / "ddpo"
    m = _profile(run, "--torchviz")
    g = m["graphs"]
    fwd = [x for x in g["graphs"] if x["kind"] == "forward"]
    # one graph per layer, in model order; DDPOptimizer splits inside each frame, the break ends the first
    assert [x["params"] for x in fwd] == [PARAMS[i:i + 2] for i in range(0, 8, 2)]
    assert [x["cut"]["kind"] for x in fwd] == ["ddp_split", "graph_break", "ddp_split", "end"]
    assert "graph_break" in fwd[1]["cut"]["reason"] and "models.py" in fwd[1]["cut"]["where"]
    assert [x["param_bytes"] for x in fwd] == [PARAM_BYTES[x["params"][0]] + PARAM_BYTES[x["params"][1]] for x in fwd]
    # DDPOptimizer's own bucket table (compile facts): bucket j of frame graph k is submodule n-1-j of compile k
    logged = m["compile"]["per_rank"][0]["ddp_optimizer"]["graphs"]
    expected = [[_ddpo_name(p) for p in b["params"]] for frame in logged for b in reversed(frame["buckets"])]
    assert expected == [x["params"] for x in fwd]
    _check_reducer_buckets(m)
    _files_parse(run, fwd)
    # the trace times every graph in the one profiled step, on both ranks
    res = analyze_paths([str(run)])
    t = res.tables["graph_regions"]
    assert len(t) == 2 * 4 and (t["steps"] == 1).all()
    assert (t["fwd_cpu_us"] > 0).all() and (t["bwd_cpu_us"] > 0).all()
    # --torchviz: the autograd graph of a step of the compiled model (one CompiledFunctionBackward per graph)
    a = g["autograd"]
    dot = (run / a["dot"]).read_text()
    assert dot.count("CompiledFunctionBackward") == 4 and "front.0.0.weight" in dot
    if shutil.which("dot"):
        assert a["svg"] == "autograd.svg" and (run / "autograd.svg").stat().st_size > 1000
    else:
        assert a["svg"] is None and "apt-get install graphviz" in a["note"]


def test_no_optimization_one_graph_per_frame(tmp_path: Path) -> None:
    run = tmp_path / "noopt"
    m = _profile(run, "--optimize-ddp", "no_optimization")
    fwd = [x for x in m["graphs"]["graphs"] if x["kind"] == "forward"]
    assert [x["params"] for x in fwd] == [PARAMS[:4], PARAMS[4:]]
    assert [x["cut"]["kind"] for x in fwd] == ["graph_break", "end"]
    assert not any(x["ddp_optimizer_submodule"] for x in fwd)
    _check_reducer_buckets(m)
    _files_parse(run, fwd)


def test_python_reducer_backward_graph_allreduces(tmp_path: Path) -> None:
    run = tmp_path / "pr"
    m = _profile(run, "--optimize-ddp", "python_reducer")
    g = m["graphs"]
    kinds = [x["kind"] for x in g["graphs"]]
    assert kinds.count("forward") == 2 and "compiled_autograd" in kinds and "backward" in kinds
    bwd = [x for x in g["graphs"] if x["kind"] == "backward"]
    assert sum(x["allreduces"] for x in bwd) == len(PARAMS)  # one allreduce per gradient (no fusion: aot_eager)
    assert g["reducer_buckets"] is None and "python reducer" in g["unavailable"]["reducer_buckets"]
    assert bwd[0]["compile_id"].startswith("!")
    text = (run / bwd[0]["file"]).read_text()
    ast.parse(text)
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    shapes = [re.search(r'"f32\[([0-9, ]+)\]"', line).group(1) for line in code if "_c10d_functional.all_reduce(" in line]
    assert len(shapes) == len(PARAMS)
    # each allreduce traced back to its parameter: every parameter once, shapes as in the graph's code
    named = bwd[0]["allreduce_params"]
    assert sorted(named) == sorted(PARAMS)
    assert shapes == [f"{WIDTH}, {WIDTH}" if p.endswith("weight") else f"{WIDTH}" for p in named]
    t = analyze_paths([str(run)]).tables["graph_regions"]
    row = t[(t["rank"] == 0) & (t["kind"] == "backward")].iloc[0]
    assert row["steps"] == 1 and row["bwd_cpu_us"] > 0  # the compiled-autograd region of the profiled step


def test_replicate_ddp_optimizer_names_and_buckets(tmp_path: Path) -> None:
    run = tmp_path / "rep"
    m = _profile(run, "--replicate")
    fwd = [x for x in m["graphs"]["graphs"] if x["kind"] == "forward"]
    assert [x["params"] for x in fwd] == [PARAMS[i:i + 2] for i in range(0, 8, 2)]
    _check_reducer_buckets(m)  # replicate's DDP names parameters 0..7: named here by identity
