"""``tracekit profile --compare``: variant parsing and a real 2-rank gloo comparison on CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.compare.variants import parse_variants
from tracekit.errors import ConfigError


def test_parse_variants() -> None:
    got = parse_variants("eager, inductor,inductor:no_optimization")
    assert [l for l, _ in got] == ["eager", "inductor", "inductor-no_optimization"]
    off = {"inductor_ddp_fusion": None, "inductor_ddp_bucket_mb": None}
    assert got[0][1] == {"dynamo": "none", "optimize_ddp": None, **off}
    assert got[2][1] == {"dynamo": "inductor", "optimize_ddp": "no_optimization", **off}


def test_parse_compiled_autograd_variants() -> None:
    got = dict(parse_variants("inductor,inductor:python_reducer,replicate:inductor:python_reducer:coalesced,"
                              "replicate"))
    assert list(got) == ["inductor", "inductor-python_reducer", "replicate-inductor-python_reducer-coalesced",
                         "replicate"]
    # the base options' fusion is kept where inductor compiles a python-reducer backward, cleared elsewhere
    assert "inductor_ddp_fusion" not in got["inductor-python_reducer"]
    assert got["replicate-inductor-python_reducer-coalesced"] == {
        "parallel": "replicate", "dynamo": "inductor", "optimize_ddp": "python_reducer",
        "inductor_ddp_fusion": "coalesced"}
    assert got["replicate"]["parallel"] == "replicate" and got["replicate"]["dynamo"] == "none"


@pytest.mark.parametrize("spec", ["eager", "eager,tvm", "inductor:fast,eager", "eager,eager", "eager:python_reducer,inductor",
                                  "inductor:python_reducer:fast,eager", "ddp:inductor:a:b:c,eager", "fsdp:,eager"])
def test_bad_variants(spec: str) -> None:
    with pytest.raises(ConfigError):
        parse_variants(spec)


@pytest.mark.slow
def test_compare_two_variants_on_cpu(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run(
        [sys.executable, "-m", "tracekit", "profile", "--nproc", "2", "--device", "cpu", "--warmup", "2",
         "--steps", "3", "--width", "256", "--depth", "4", "--graph-break-at", "1", "--compare", "eager,aot_eager", "--out", str(out)],
        capture_output=True, text=True, timeout=240, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    for label in ("eager", "aot_eager"):
        assert (out / label / "run.json").is_file()
        assert (out / label / "rank0.trace.json.gz").is_file() and (out / label / "rank1.trace.json.gz").is_file()
    lines = p.stdout.splitlines()
    header = next(l for l in lines if l.startswith("variant"))
    assert "step_p50_ms" in header and "overlap_pct" in header and "graph_breaks" in header
    rows = {l.split()[0]: l.split() for l in lines if l.split() and l.split()[0] in ("eager", "aot_eager")}
    assert set(rows) == {"eager", "aot_eager"}
    # the aot_eager variant records the model's one real graph break from the manifest
    cols = header.split()
    assert rows["aot_eager"][cols.index("graph_breaks")] == "1"
    assert rows["eager"][cols.index("vs_first_pct")] == "0.0"
