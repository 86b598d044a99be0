"""Real 1-rank CPU profiles: the module ranges of an eager run, and compiled_kernels.json of an inductor run
(its kernels in the trace, mapped to the modules they come from, backward kernels to forward modules)."""

from __future__ import annotations

import collections
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.traces.provenance import MODULE_RANGE_PREFIX, fused_ops_from_name, read_compiled
from tests.profile.test_run import REPO, _env

pytestmark = pytest.mark.slow
TINY = ["--nproc", "1", "--device", "cpu", "--width", "64", "--depth", "2", "--batch-size", "8", "--warmup", "2",
        "--steps", "2", "--profile-wait", "0", "--profile-warmup", "1", "--profile-steps", "2", "--timeout", "60",
        "--no-calibrate-profiler", "--no-bucket-timing"]
#: the toy model at depth 2: front = Sequential(Sequential(Linear, ReLU), Sequential(Linear, ReLU)), back empty
TOY_MODULES = {"front", "front.0", "front.0.0", "front.0.1", "front.1", "front.1.0", "front.1.1", "back"}


def _profile(out: Path, *args: str) -> dict:
    cmd = [sys.executable, "-m", "tracekit", "profile", "--out", str(out), *TINY, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=_env(), cwd=REPO)
    assert r.returncode == 0, r.stderr[-3000:]
    with gzip.open(out / "rank0.trace.json.gz", "rt") as fh:
        return json.load(fh)


def _ops(trace: dict) -> list[dict]:
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def test_eager_run_names_every_module_forward(tmp_path: Path) -> None:
    trace = _profile(tmp_path / "eager")
    ranges = [e for e in _ops(trace) if e["name"].startswith(MODULE_RANGE_PREFIX)]
    count = collections.Counter(e["name"][len(MODULE_RANGE_PREFIX):] for e in ranges)
    # "back" is an empty Sequential: it is still called, so it has a range; the model itself is "" (DDP's
    # wrapper around it gets none)
    assert set(count) == TOY_MODULES | {""}
    assert set(count.values()) == {2}  # once per recorded step
    # nested as the modules nest: each Linear's range lies inside its block's, which lies inside front's
    by = {n: [e for e in ranges if e["name"] == MODULE_RANGE_PREFIX + n] for n in ("", "front", "front.1", "front.1.0")}
    for outer, inner in (("", "front"), ("front", "front.1"), ("front.1", "front.1.0")):
        for o, i in zip(by[outer], by[inner]):
            assert o["ts"] <= i["ts"] and i["ts"] + i["dur"] <= o["ts"] + o["dur"]
    # the GEMM of front.1.0 runs inside its range
    mm = [e for e in _ops(trace) if e["name"] == "aten::addmm"]
    lin = by["front.1.0"][0]
    assert any(lin["ts"] <= e["ts"] <= lin["ts"] + lin["dur"] for e in mm)
    m = json.loads((tmp_path / "eager" / "run.json").read_text())
    assert m["profile_window"]["record_modules"] is True
    assert not (tmp_path / "eager" / "compiled_kernels.json").exists()


def test_no_record_modules(tmp_path: Path) -> None:
    trace = _profile(tmp_path / "plain", "--no-record-modules")
    assert not [e for e in _ops(trace) if e["name"].startswith(MODULE_RANGE_PREFIX)]


def test_inductor_run_maps_its_kernels_to_modules(tmp_path: Path) -> None:
    out = tmp_path / "ind"
    trace = _profile(out, "--dynamo", "inductor")
    doc = read_compiled(out)
    assert doc is not None and doc.notes == []
    names = collections.Counter(e["name"] for e in _ops(trace))
    # the compiled forward gets no ranges (its hooks would be traced into the graph)
    assert not [n for n in names if n.startswith(MODULE_RANGE_PREFIX)]
    assert json.loads((out / "run.json").read_text())["profile_window"]["record_modules"] is False
    assert doc.kernels
    for name, k in doc.kernels.items():
        assert names[name] == 2 * len(k.calls), name  # every kernel ran, once per launch, in both steps
        assert k.modules and set(k.modules) <= TOY_MODULES, (name, k.modules)
        assert k.aten_ops and k.graph in ("forward", "backward")
        # the provenance agrees with what the name says it fused
        assert {f"aten::{op}" for op in fused_ops_from_name(name)} <= set(k.aten_ops), (name, k.aten_ops)
    relu_fwd = [k for n, k in doc.kernels.items() if k.graph == "forward" and "aten::relu" in k.aten_ops]
    assert {m for k in relu_fwd for m in k.modules} == {"front.0.1", "front.1.1"}
    # backward kernels name the forward modules they differentiate: ReLU's gradient, the bias gradients
    bwd = [k for k in doc.kernels.values() if k.graph == "backward"]
    thr = [k for k in bwd if "aten::threshold_backward" in k.aten_ops]
    assert thr and all({"front.0.1", "front.1.1"} & set(k.modules) for k in thr)
    # the GEMMs inductor left to the library: one per Linear forward, two per Linear backward but the first's
    assert doc.extern["aten::addmm"].calls == [["front.0.0"], ["front.1.0"]]
    assert sorted(m for c in doc.extern["aten::mm"].calls for m in c) == ["front.0.0", "front.1.0", "front.1.0"]
