"""Compiled-graph capture, the graph_regions table and the report's graphs section (no multi-process runs)."""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.tracebuilder import TraceBuilder
from tracekit.analyses.graph_regions import graph_regions
from tracekit.profile.graph_capture import GraphRecorder, _add_cuts, reducer_layout
from tracekit.traces import cols as C
from tracekit.traces.manifest import decode_manifest
from tracekit.traces.loader import read_rank

GOLDEN = Path(__file__).parents[1] / "golden" / "graphs_section.html"


def _fwd(i: int, cid: str, ddpo: bool, frame: dict | None) -> dict:
    return {"index": i, "kind": "forward", "compile_id": cid, "ddp_optimizer_submodule": ddpo, "frame_cut": frame}


def test_cuts_ddp_optimizer_submodules_and_frames() -> None:
    brk = {"reason": "Call to `torch._dynamo.graph_break()`", "graph_break": True, "where": "m.py:9 in forward"}
    ret = {"reason": "return_value", "graph_break": False, "where": "m.py:10 in resume"}
    graphs = [_fwd(0, "0/0", True, brk), _fwd(1, "0/0", True, brk), _fwd(2, "1/0", True, ret),
              _fwd(3, "1/0", True, ret), {"index": 4, "kind": "backward", "compile_id": "!0/2/0"}]
    _add_cuts(graphs)
    assert [g.get("cut", {}).get("kind") for g in graphs] == ["ddp_split", "graph_break", "ddp_split", "end", None]
    assert graphs[1]["cut"]["where"] == "m.py:9 in forward"
    # without DDPOptimizer each frame graph ends as dynamo says
    plain = [_fwd(0, "0/0", False, brk), _fwd(1, "1/0", False, ret)]
    _add_cuts(plain)
    assert [g["cut"]["kind"] for g in plain] == ["graph_break", "end"]


class _FakeDDP:
    def __init__(self, params: list, data: dict, python_reducer: bool = False) -> None:
        self.module = SimpleNamespace(named_parameters=lambda: [(str(i), p) for i, p in enumerate(params)])
        self._data, self._use_python_reducer = data, python_reducer

    def _get_ddp_logging_data(self) -> dict:
        return self._data


def test_reducer_layout_from_logging_data() -> None:
    ps = [SimpleNamespace(requires_grad=True) for _ in range(4)]
    names = {id(p): f"layer{i}.weight" for i, p in enumerate(ps)}
    params, buckets, why = reducer_layout(_FakeDDP(ps, {"rebuilt_per_bucket_param_indices": "3 2, 1, 0"}), names)
    assert params == ["layer0.weight", "layer1.weight", "layer2.weight", "layer3.weight"]
    assert buckets == [[3, 2], [1], [0]] and why is None
    # before a rebuild: one bucket holds every parameter; several buckets: layout unknown
    assert reducer_layout(_FakeDDP(ps, {"bucket_sizes": "4096"}), names)[1] == [[0, 1, 2, 3]]
    _, b, why = reducer_layout(_FakeDDP(ps, {"bucket_sizes": "2048, 2048"}), names)
    assert b is None and "did not report" in why
    _, b, why = reducer_layout(_FakeDDP(ps, {}, python_reducer=True), names)
    assert b is None and "python reducer" in why
    assert reducer_layout(None)[2] == "no DDP reducer"


def test_recording_backend_names_parameters_and_breaks(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from torch import nn

    torch._dynamo.reset()

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.a(x))
            torch._dynamo.graph_break()
            return self.b(x)

    model = M()
    rec = GraphRecorder("eager", keep_code=True)
    rec.set_params(model)
    model.compile(backend=rec.backend())
    model(torch.randn(2, 8)).sum().backward()
    summary = rec.summary(["a.weight", "a.bias", "b.weight", "b.bias"], [[2, 3], [0, 1]])
    rec.write(tmp_path, summary)
    g = summary["graphs"]
    assert [x["params"] for x in g] == [["a.weight", "a.bias"], ["b.weight", "b.bias"]]
    assert [x["param_bytes"] for x in g] == [(64 + 8) * 4, (32 + 4) * 4]
    assert [x["buckets"] for x in g] == [[1], [0]]
    assert [x["cut"]["kind"] for x in g] == ["graph_break", "end"]
    assert "graph_break" in g[0]["cut"]["reason"] and "test_graph_capture.py" in g[0]["cut"]["where"]
    for x in g:
        text = (tmp_path / x["file"]).read_text()
        ast.parse(text)  # readable Python: header comments + the GraphModule's code
        assert "# param: " + x["params"][0] in text and "def forward" in text
    assert summary["unavailable"] == {}
    torch._dynamo.reset()


# -- the graph_regions table on a hand-built trace ---------------------------------------------------

MANIFEST = {
    "graphs": {
        "rank": 0, "optimize_ddp": "ddp_optimizer",
        "reducer_params": ["l0.weight", "l0.bias", "l1.weight", "l1.bias", "l2.weight", "l2.bias"],
        "reducer_buckets": [[5, 4], [3, 2, 1], [0]],
        "graphs": [
            {"index": 0, "kind": "forward", "compile_id": "0/0", "params": ["l0.weight", "l0.bias"],
             "param_bytes": 2_000_000, "file": "graphs/000_forward_0-0.py", "ddp_optimizer_submodule": True,
             "buckets": [1, 2], "nodes": 6, "ops": 2, "allreduces": 0,
             "cut": {"kind": "ddp_split", "reason": "DDPOptimizer bucket boundary", "where": None}},
            {"index": 1, "kind": "forward", "compile_id": "0/0", "params": ["l1.weight", "l1.bias"],
             "param_bytes": 1_000_000, "file": "graphs/001_forward_0-0.py", "ddp_optimizer_submodule": True,
             "buckets": [1], "nodes": 6, "ops": 2, "allreduces": 0,
             "cut": {"kind": "graph_break", "reason": "Call to `torch._dynamo.graph_break()` <b>", "where": "m.py:9"}},
            {"index": 2, "kind": "forward", "compile_id": "1/0", "params": ["l2.weight", "l2.bias"],
             "param_bytes": 500_000, "file": "graphs/002_forward_1-0.py", "ddp_optimizer_submodule": True,
             "buckets": [0], "nodes": 6, "ops": 2, "allreduces": 0,
             "cut": {"kind": "end", "reason": "return_value", "where": "m.py:10"}},
        ],
        "autograd": {"dot": "autograd.dot", "svg": None, "nodes": 40, "note": "graphviz's `dot` is not installed"},
        "unavailable": {},
    },
}
AUTOGRAD_TID = 2000


def _trace(tmp_path: Path, second_step_extra: bool = False) -> Path:
    """Two steps: forward subgraphs of 100, 200, 300 µs in regions 0/0 (two) and 1/0 (one); backward
    ops 30, 20, 10 µs (reverse order: graph 2 first). Step 2 optionally runs one extra forward op."""
    tb = TraceBuilder(rank=0, world_size=2, gpu=False)
    for s, t0 in ((1, 0), (2, 2000)):
        tb.step(s, t0, t0 + 1900)
        tb.cpu_op("Torch-Compiled Region: 0/0", t0 + 10, 400)
        tb.cpu_op("CompiledFunction", t0 + 20, 100)
        tb.cpu_op("CompiledFunction", t0 + 130, 200)
        tb.cpu_op("Torch-Compiled Region: 1/0", t0 + 450, 350)
        tb.cpu_op("CompiledFunction", t0 + 460, 300)
        if second_step_extra and s == 2:
            tb.cpu_op("CompiledFunction", t0 + 820, 5)
        tb.cpu_op("CompiledFunctionBackward", t0 + 1000, 10, tid=AUTOGRAD_TID)
        tb.cpu_op("CompiledFunctionBackward", t0 + 1100, 20, tid=AUTOGRAD_TID)
        tb.cpu_op("CompiledFunctionBackward", t0 + 1200, 30, tid=AUTOGRAD_TID)
    return tb.write(tmp_path / "rank0.trace.json.gz")


def test_graph_regions_times_each_graph(tmp_path: Path) -> None:
    m = decode_manifest(MANIFEST, "test")
    df = C.to_frame(graph_regions(read_rank(_trace(tmp_path)), m))
    assert list(df["graph"]) == [0, 1, 2]
    assert list(df["fwd_cpu_us"]) == [100.0, 200.0, 300.0]
    assert list(df["bwd_cpu_us"]) == [30.0, 20.0, 10.0]  # backward runs in reverse: graph 2's op first
    assert list(df["steps"]) == [2, 2, 2]
    assert list(df["buckets"]) == ["1,2", "1", "0"] and list(df["cut"]) == ["ddp_split", "graph_break", "end"]
    assert list(df["param_mb"]) == [2.0, 1.0, 0.5]
    assert df["fwd_gpu_span_us"].isna().all()  # no GPU activity in the trace


def test_graph_regions_skips_steps_that_do_not_match(tmp_path: Path) -> None:
    m = decode_manifest(MANIFEST, "test")
    df = C.to_frame(graph_regions(read_rank(_trace(tmp_path, second_step_extra=True)), m))
    assert list(df["steps"]) == [1, 1, 1]  # step 2 ran 4 forward ops for 3 graphs: not used
    assert list(df["fwd_cpu_us"]) == [100.0, 200.0, 300.0]
    assert C.nrows(graph_regions(read_rank(_trace(tmp_path)), decode_manifest({}, "t"))) == 0  # no graphs section


# -- the report section ------------------------------------------------------------------------------


def _section_html(tmp_path: Path) -> tuple[str, dict]:
    import jinja2

    from tracekit.analyses.registry import AnalysisResult
    from tracekit.report.graphs import graphs_context
    from tracekit.report.html import display_name, figure_html, plot_text

    m = decode_manifest(MANIFEST, "test")
    df = C.to_frame(graph_regions(read_rank(_trace(tmp_path)), m))
    res = AnalysisResult(meta={"manifest": m, "files": {"0": "run/rank0.trace.json.gz"}}, tables={"graph_regions": df})
    ctx = graphs_context(res, 0, figure_html, display_name, plot_text)
    env = jinja2.Environment(loader=jinja2.PackageLoader("tracekit.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    page = env.get_template("graphs.html.j2").render(runs=[{"label": "run", "graphs": ctx}])
    return page, ctx


def test_graphs_section_golden(tmp_path: Path) -> None:
    page, _ = _section_html(tmp_path)
    # the figures are plotly JSON (checked below); the golden holds the rest of the section
    stable = re.sub(r"<div style=\"[^\"]*\">\s*<div id=\"(graphs-[a-z]+-\d)\".*?</script>\s*</div>", r"[figure \1]", page,
                    flags=re.S)
    assert "graph_break()` <b>" not in stable and "graph_break()` &lt;b&gt;" in stable  # run.json text, not markup
    if os.environ.get("TRACEKIT_REGEN_GOLDEN"):  # regenerate after an intended change, then review the diff
        GOLDEN.write_text(stable)
    assert stable == GOLDEN.read_text()


def test_graphs_layout_figure(tmp_path: Path) -> None:
    from tracekit.report.graphs import layout_figure

    m = decode_manifest(MANIFEST, "test")
    df = C.to_frame(graph_regions(read_rank(_trace(tmp_path)), m))
    fig = layout_figure(m.graphs, df, str)
    graphs = [(t.base[0], t.base[0] + t.x[0], t.text[0]) for t in fig.data if t.y[0] == "graphs"]
    assert graphs == [(0, 2, "g0"), (2, 4, "g1"), (4, 6, "g2")]
    # buckets by parameter position: l0.weight -> 2, l0.bias l1.* -> 1, l2.* -> 0
    buckets = [(t.base[0], t.base[0] + t.x[0], t.text[0]) for t in fig.data if t.y[0] == "buckets"]
    assert buckets == [(0, 1, "b2"), (1, 4, "b1"), (4, 6, "b0")]
    lines = [(s.x0, s.line.color) for s in fig.layout.shapes]
    assert lines == [(2, "#999999"), (4, "#D55E00")]  # split after g0, graph break after g1
    assert "fwd 100 µs, bwd 30 µs" in [t for t in fig.data if t.y[0] == "graphs"][0].hovertext[0]


# -- torchviz --------------------------------------------------------------------------------------


def test_torchviz_dot_and_svg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchviz")
    from torch import nn

    from tracekit.profile import autograd_viz

    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    loss = model(torch.randn(3, 4)).mean()
    monkeypatch.setattr(autograd_viz.shutil, "which", lambda name: None)
    entry = autograd_viz.dump_autograd_graph(loss, model, tmp_path)
    dot = (tmp_path / "autograd.dot").read_text()
    assert dot.startswith("digraph") and "0.weight" in dot and "2.bias" in dot and "AddmmBackward0" in dot
    assert entry["svg"] is None and "apt-get install graphviz" in entry["note"] and entry["nodes"] > 5
    monkeypatch.undo()
    if shutil.which("dot") is None:
        pytest.skip("graphviz's dot is not installed: apt-get install graphviz")
    loss = model(torch.randn(3, 4)).mean()
    entry = autograd_viz.dump_autograd_graph(loss, model, tmp_path)
    assert entry["svg"] == "autograd.svg" and entry["note"] is None
    assert (tmp_path / "autograd.svg").read_text().lstrip().startswith("<?xml")


def test_torchviz_missing_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracekit.errors import ConfigError
    from tracekit.profile import autograd_viz

    monkeypatch.setattr(autograd_viz.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"tracekit\[viz\]"):
        autograd_viz.check_available()


def test_no_graphs_section_without_manifest() -> None:
    from tracekit.analyses.registry import AnalysisResult
    from tracekit.report.graphs import graphs_context

    res = AnalysisResult(meta={}, tables={"graph_regions": pd.DataFrame()})
    assert graphs_context(res, 0, lambda f, i: "", str, str) is None


def test_text_view_says_when_no_step_matched(tmp_path: Path) -> None:
    from tracekit.analyses.graph_regions import _view
    from tracekit.analyses.registry import ViewOptions

    m = decode_manifest(MANIFEST, "test")
    df = C.to_frame(graph_regions(read_rank(_trace(tmp_path)), m))
    assert _view({"graph_regions": df}, ViewOptions()).note is None
    df.loc[:, "steps"] = 0  # as with the eager backend: no CompiledFunction ops to time
    v = _view({"graph_regions": df}, ViewOptions())
    assert "times are n/a" in v.note and list(v.body["graph"]) == [0, 1, 2]
