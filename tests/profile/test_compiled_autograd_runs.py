"""Real gloo runs on CPU: DDP python reducer + inductor with fusion, replicate(), 2-D TP + DP on 4 ranks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tracekit.runner.pipeline import analyze_paths
from tracekit.analyses.collectives import collective_summary
from tracekit.traces import cols as C

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SMALL = ["--device", "cpu", "--width", "128", "--depth", "4", "--batch-size", "4", "--warmup", "2", "--steps", "2",
         "--profile-wait", "0", "--profile-warmup", "1", "--profile-steps", "1", "--timeout", "120"]


def _profile(out: Path, nproc: int, *args: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "tracekit", "profile", "--nproc", str(nproc), "--out", str(out),
                        *SMALL, *args], capture_output=True, text=True, timeout=240, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads((out / "run.json").read_text())


@pytest.mark.skipif(not (shutil.which("g++") or shutil.which("c++")), reason="inductor on cpu needs a C++ compiler")
def test_ddp_python_reducer_inductor_coalesced(tmp_path: Path) -> None:
    m = _profile(tmp_path / "r", 2, "--dynamo", "inductor", "--optimize-ddp", "python_reducer",
                 "--inductor-ddp-fusion", "coalesced", "--inductor-ddp-bucket-mb", "1")
    ca = m["buckets"]["compiled_autograd"]
    assert ca["inductor_ddp_fusion"]["passes"] == ["fuse_ddp_with_coalesced_op", "schedule_comm_wait"]
    assert ca["inductor_ddp_fusion"]["bucket_size_mb"] == 1
    graph = ca["graphs"][0]
    assert graph["allreduce_calls"] == 2 * 4  # weight + bias of each of the 4 layers, before fusion
    n = m["buckets"]["inductor_ddp_buckets"]  # 8 x 64 KiB + biases in 1 MB buckets
    assert n == 1 and m["compile"]["per_rank"][0]["compiled_autograd_captures"] >= 1
    assert m["run"]["parallel_applied"]["python_reducer"] is True
    res = analyze_paths([str(tmp_path / "r")])
    b = res.buckets
    assert len(b) == 2 * n  # one profiled step, two ranks
    assert set(b["launch_op"]) <= {"_c10d_functional::all_reduce_coalesced_", "_c10d_functional::all_reduce_"}
    assert (b["wait_offset_us"] >= b["launch_offset_us"]).all()


def test_replicate_python_reducer_and_knobs(tmp_path: Path) -> None:
    m = _profile(tmp_path / "rep", 2, "--replicate", "--dynamo", "aot_eager", "--optimize-ddp", "python_reducer",
                 "--bucket-cap-mb", "0.1")
    applied = m["run"]["parallel_applied"]
    assert applied["python_reducer"] is True and applied["bucket_cap_mb"] == 0.1
    assert m["buckets"]["reducer"]["python_reducer"] is True  # replicate's DDP, built in the first forward
    assert m["buckets"]["compiled_autograd"]["graphs"][0]["allreduce_calls"] == 8
    res = analyze_paths([str(tmp_path / "rep")])
    assert len(res.buckets) == 2 * 8  # no fusion with aot_eager: one allreduce per gradient
    assert set(res.buckets["launch_op"]) == {"_c10d_functional::all_reduce"}
    # eager replicate with a comm hook, no_sync accumulation and activation checkpointing
    m = _profile(tmp_path / "knobs", 2, "--replicate", "--comm-hook", "fp16", "--grad-accum", "2",
                 "--activation-checkpointing", "--model", "transformer", "--depth", "2", "--seq-len", "16")
    applied = m["run"]["parallel_applied"]
    assert applied["comm_hook"] == "fp16" and applied["activation_checkpointing"] is True
    res = analyze_paths([str(tmp_path / "knobs")])
    # gradient sync only on the last of the 2 micro-batches: backward allreduces of one step only
    per_step = res.collectives[res.collectives["phase"] == "backward"].groupby(["rank", "step"]).size()
    assert (per_step == len(res.buckets) // 2).all()


def test_tp_and_dp_on_four_ranks(tmp_path: Path) -> None:
    m = _profile(tmp_path / "tp", 4, "--replicate", "--tp", "2")
    assert m["run"]["parallel_applied"]["tensor_parallel"] == {"tp": 2, "colwise": 2, "rowwise": 2}
    # the probe mapped all of each rank's gloo worker threads (gloo runs 2 per group) to its three
    # groups (default, dp, tp)
    threads = [r["gloo_threads"] for r in m["hardware"]["ranks"]]
    assert all(sorted(Counter(t.values()).values()) == [2, 2, 2] for t in threads), threads
    res = analyze_paths([str(tmp_path / "tp")])
    c = res.collectives
    assert set(c["pg_desc"]) == {"mesh_dp", "mesh_tp"}
    # TP groups {0, 1} and {2, 3}; DP groups {0, 2} and {1, 3}
    groups = c.groupby("pg_name")["rank"].apply(lambda r: tuple(sorted(set(r))))
    assert sorted(groups) == [(0, 1), (0, 2), (1, 3), (2, 3)]
    # per rank and step: 2 rowwise output allreduces in forward (TP); in backward 1 for the input grad of
    # the second colwise layer (the first one's input is the data, no grad) and 1 DP gradient bucket
    assert (c.loc[c["phase"] == "forward", "pg_desc"] == "mesh_tp").all()
    assert (c[c["phase"] == "forward"].groupby("rank").size() == 2).all()
    bwd = c[c["phase"] == "backward"].groupby(["rank", "pg_desc"]).size()
    assert (bwd == 1).all() and len(bwd) == 8
    # buckets are the DP allreduces only; every matched instance spans one group's 2 ranks
    assert len(res.buckets) == 4 and set(res.buckets["pg_name"]) == {"1", "2"}
    assert (res.instances["ranks"] == 2).all() and len(res.instances) == 2 * 3 + 2
    s = C.to_frame(collective_summary(res.collectives))
    assert set(s["pg"].str.split(":").str[1]) == {"mesh_dp", "mesh_tp"}
