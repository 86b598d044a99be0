"""Real multi-process runs on CPU (gloo): what CI can check of `tracekit profile`."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SMALL = ["--width", "512", "--depth", "4", "--batch-size", "8", "--warmup", "2", "--steps", "3",
         "--profile-wait", "0", "--profile-warmup", "1", "--profile-steps", "2", "--timeout", "60"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID",
                        "TRACEKIT_TEST_FAIL_RANK", "TRACEKIT_TEST_FAIL_AT")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _profile(out: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 150,
             device: str = "cpu"):
    cmd = [sys.executable, "-m", "tracekit", "profile", "--out", str(out), "--device", device, *SMALL, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or _env(), cwd=REPO)


def _load_trace(path: Path) -> dict:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)


def _names(trace: dict) -> set[str]:
    return {e.get("name", "") for e in trace["traceEvents"]}


def _orphans(marker: str) -> list[int]:
    """PIDs of live processes whose environment mentions ``marker`` (our unique run folder)."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if marker.encode() in (p / "environ").read_bytes():
                found.append(int(p.name))
        except OSError:
            continue
    return found


def _check_run(out: Path, world: int, device: str = "cpu") -> dict:
    m = json.loads((out / "run.json").read_text())
    assert m["schema_version"] == 1 and m["run"]["world_size"] == world
    assert m["run"]["device"] == device
    assert m["run"]["backend"] == ("gloo" if device == "cpu" else "nccl")
    assert [t["rank"] for t in m["traces"]] == list(range(world))
    for t in m["traces"]:
        trace = _load_trace(out / t["file"])
        names = _names(trace)
        assert {"tracekit.forward", "tracekit.backward", "tracekit.optimizer"} <= names
        if world > 1:
            assert "gloo:all_reduce" in names  # DDP's allreduce, as a user annotation
    overall = m["timings"]["overall"]
    assert overall["steps"] == 3 and overall["sec_per_iter"]["p50"] > 0
    assert set(overall["sec_per_iter"]) == {"p50", "p75", "p90", "p95"}
    assert len(m["timings"]["per_rank"]) == world
    assert m["versions"]["torch"] and m["versions"]["python"]
    assert len(m["hardware"]["ranks"]) == world
    assert all(h["cpus"] >= 1 and h["torch_threads"] >= 1 for h in m["hardware"]["ranks"])
    return m


def test_eager_ddp_two_ranks(tmp_path: Path) -> None:
    out = tmp_path / "eager"
    r = _profile(out, "--nproc", "2")
    assert r.returncode == 0, r.stderr[-3000:]
    m = _check_run(out, 2)
    assert m["compile"]["per_rank"][0]["enabled"] is False
    assert m["buckets"]["reducer"]["bucket_sizes_bytes"]
    assert "p50" in r.stdout and str(out) in r.stdout
    _check_profiled_and_bucket_timing(m, steps=3, profiled=2)
    import tracekit

    ev = tracekit.analyze(tracekit.load(out)).bucket_events  # gloo: host clock beside the trace's gloo ranges
    assert ev["clock"].tolist() == ["host", "host"]
    assert (ev["event_buckets_per_step"] == ev["trace_buckets_per_step"]).all()
    assert (ev["event_comm_us_per_step"] > 0).all() and (ev["trace_comm_us_per_step"] > 0).all()


def _check_profiled_and_bucket_timing(m: dict, steps: int, profiled: int) -> None:
    """The profiled steps are timed per rank, and every timed step has host-clock bucket marks (gloo)."""
    win = m["profile_window"]
    for row in m["timings"]["per_rank"]:
        assert len(row["profiled_step_s"]) == profiled and all(x > 0 for x in row["profiled_step_s"])
        # every step of the window, wait and warm-up too; the recorded ones are its last
        assert len(row["window_step_s"]) == win["wait"] + win["warmup"] + win["active"]
        assert row["window_step_s"][-profiled:] == row["profiled_step_s"]
    assert m["timings"]["profiled"]["activities"] == "cpu,cuda" and m["timings"]["profiled"]["mean_sec_per_iter"] > 0
    assert m["run"]["parallel_applied"]["bucket_timing"] == "on"
    # the bucket marks run in min(steps, 10) steps of their own, between the timed steps and the window
    assert m["profile_window"]["first_step"] == m["config"]["warmup"] + steps + min(steps, 10)
    for r in m["bucket_timing"]["per_rank"]:
        assert r["clock"] == "host" and len(r["steps"]) == steps
        for s in r["steps"]:
            assert s["buckets"] and s["bwd_end_us"] is not None
            ready = [b["ready_us"] for b in s["buckets"]]
            assert ready == sorted(ready) and 0 < ready[0] and s["buckets"][-1]["end_us"] <= s["step_us"]
            assert 0 <= s["exposed_us"] <= s["comm_us"] and sum(b["bytes"] for b in s["buckets"]) > 0


def test_aot_eager_graph_break_two_ranks(tmp_path: Path) -> None:
    out = tmp_path / "gb"
    r = _profile(out, "--nproc", "2", "--dynamo", "aot_eager", "--graph-break-at", "1", "--bucket-cap-mb", "1")
    assert r.returncode == 0, r.stderr[-3000:]
    m = _check_run(out, 2)
    for c in m["compile"]["per_rank"]:
        _assert_graph_break_facts(c)
    graphs = m["buckets"]["ddp_optimizer"]
    assert len(graphs) == 2 and all(b["bytes"] > 0 and b["params"] for g in graphs for b in g["buckets"])
    assert m["buckets"]["reducer"]["rebuilt_bucket_sizes_bytes"]
    _check_profiled_and_bucket_timing(m, steps=3, profiled=2)
    assert all(len(s["buckets"]) >= 2 for r in m["bucket_timing"]["per_rank"] for s in r["steps"])  # 1 MB cap


def test_item_graph_break_is_a_real_break_between_two_graphs(tmp_path: Path) -> None:
    """``--graph-break-kind item``: the ``.item()`` check at ``--graph-break-at`` breaks dynamo's graph (two graphs,
    one break in the model, its reason Tensor.item()), runs eagerly between them (``aten::item`` in the trace), is
    recorded in run.json's config, and the analysis's break tables see the break in forward and backward."""
    import tracekit

    out = tmp_path / "item"
    r = _profile(out, "--nproc", "1", "--dynamo", "aot_eager", "--graph-break-at", "1", "--graph-break-kind", "item",
                 "--width", "64", "--no-bucket-timing", "--no-calibrate-profiler")
    assert r.returncode == 0, r.stderr[-3000:]
    m = _check_run(out, 1)
    assert (m["config"]["graph_break_at"], m["config"]["graph_break_kind"]) == (1, "item")
    (c,) = m["compile"]["per_rank"]
    assert c["graph_count"] == 2 and c["graph_breaks"]["model"] == 1 and c["recompiles"]["count"] == 0
    assert any("item()" in x["reason"] for x in c["graph_breaks"]["reasons"])
    assert "aten::item" in _names(_load_trace(out / "rank0.trace.json.gz"))
    tables = tracekit.analyze(out).tables
    assert list(tables["graph_breaks"]["real_breaks"]) == [1, 1]  # the two profiled steps
    kinds = {(p, k) for p, k in zip(tables["break_boundaries"]["pass"], tables["break_boundaries"]["kind"])}
    assert kinds == {("forward", "graph_break"), ("backward", "graph_break")}


def test_simulated_torchrun_single_rank(tmp_path: Path, free_port: int) -> None:
    out = tmp_path / "torchrun"
    env = _env(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port))
    r = _profile(out, env=env, device="auto")
    assert r.returncode == 0, r.stderr[-3000:]
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    m = _check_run(out, 1, device)
    assert m["run"]["launcher"] == "torchrun"
    if device == "cpu":  # the default device falls back with a clear notice
        assert "notice: no CUDA GPU: running on cpu with gloo" in r.stderr
        assert m["run"]["notice"].startswith("no CUDA GPU")


@pytest.mark.parametrize("fail_at", ["end", "warmup"])
def test_failing_rank_exits_cleanly(tmp_path: Path, fail_at: str) -> None:
    out = tmp_path / f"fail-{fail_at}"
    t0 = time.monotonic()
    r = _profile(out, "--nproc", "2", env=_env(TRACEKIT_TEST_FAIL_RANK="1", TRACEKIT_TEST_FAIL_AT=fail_at))
    assert r.returncode == 1, r.stderr[-3000:]
    err_lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(err_lines) == 1, r.stderr[-3000:]
    assert "rank 1 failed" in err_lines[0] and "injected" in err_lines[0]
    assert time.monotonic() - t0 < 60  # the healthy rank was not left waiting for the timeout
    if fail_at == "end":
        assert (out / "rank0.trace.json.gz").exists()  # other ranks' traces are kept
        assert "rank0.trace.json.gz" in err_lines[0]
    m = json.loads((out / "run.json").read_text())  # the launcher records the failure (tracekit.profile.diagnose)
    assert m["status"] == "failed" and [c["rank"] for c in m["failure"]["culprits"]] == [1]
    assert m["failure"]["culprits"][0]["how"] == "raised" and m["failure"]["summary"] in err_lines[0]
    time.sleep(0.5)
    assert _orphans(str(out)) == []


def test_fsdp_two_ranks(tmp_path: Path) -> None:
    out = tmp_path / "fsdp"
    r = _profile(out, "--nproc", "2", "--fsdp")
    assert r.returncode == 0, r.stderr[-3000:]
    m = json.loads((out / "run.json").read_text())
    assert m["run"]["parallel_applied"]["sharded_blocks"] == 4
    assert all("fsdp" in r["unavailable"] for r in m["bucket_timing"]["per_rank"])
    assert m["buckets"]["reducer"] is None and m["buckets"]["unavailable"]["reducer"]
    for t in m["traces"]:
        names = _names(_load_trace(out / t["file"]))
        assert "tracekit.backward" in names
        assert any("reduce_scatter" in n or "all_gather" in n for n in names)


def _assert_graph_break_facts(c: dict) -> None:
    """Compile facts of the toy model with one graph break, under DDPOptimizer."""
    try:
        assert c["backend"] == "aot_eager" and c["optimize_ddp"] == "ddp_optimizer"
        assert c["graph_count"] == 2  # one graph on each side of the break
        gb = c["graph_breaks"]
        assert gb["model"] == 1 and gb["ddp_wrapper"] == 0
        assert any("graph_break()" in x["reason"] for x in gb["reasons"])
        # DDPOptimizer split each graph at the 1 MiB buckets: intended, not breaks
        assert c["ddp_optimizer"]["intended_splits"] >= 2
        assert c["recompiles"]["count"] == 0 and c["skipped_frames"] == []
        assert c["compile_time_s"] > 0 and c["compiles_after_warmup"] == 0
    except AssertionError:
        print(json.dumps({k: v for k, v in c.items() if k != "frame_compiles"}, indent=1, default=str)[:6000])
        raise


def test_cpu_only_steps_are_timed_and_kept_per_rank() -> None:
    """``--profile-cpu-only-steps``: steps profiled with the CPU recorded and CUPTI off, timed as the others, and
    run.json's per-rank row keeps them (only where timed)."""
    import torch

    from tracekit.profile.harness import add_profiled_timings, cpu_only_steps

    calls = []
    got = cpu_only_steps(lambda: calls.append(torch.ones(4).sum()), lambda: None, 3)
    assert len(got) == 3 and all(t > 0 for t in got) and len(calls) == 1 + 3  # one untimed step first
    timings = {"per_rank": [{"rank": 0}, {"rank": 1}]}
    add_profiled_timings(timings, [[0.2], [0.3]], "cpu,cuda", [[0.1, 0.2], [0.1, 0.3]], [[0.15, 0.16], []])
    assert timings["per_rank"][0]["cpu_only_step_s"] == [0.15, 0.16] and "cpu_only_step_s" not in timings["per_rank"][1]
