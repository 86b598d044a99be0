"""Bucket timing without the profiler: the derived figures (pure arithmetic) and the comm-hook plumbing."""

from __future__ import annotations

import pytest

from tracekit.profile.bucket_events import CUDA_EVENTS, HOST, derive_step, summarize, unavailable_reason


def _raw() -> dict:
    # step 1000 µs; backward compute ends at 700 µs; three buckets in DDP's order
    return {"step_us": 1000.0, "bwd_end_us": 700.0, "buckets": [
        {"order": 0, "index": 0, "bytes": 4, "ready_us": 300.0, "end_us": 500.0},
        {"order": 1, "index": 1, "bytes": 4, "ready_us": 450.0, "end_us": 650.0},  # queued behind bucket 0
        {"order": 2, "index": 2, "bytes": 4, "ready_us": 690.0, "end_us": 900.0},  # runs past backward end
    ]}


def test_cuda_events_serialise_buckets_on_one_stream() -> None:
    d = derive_step(_raw(), CUDA_EVENTS)
    b = d["buckets"]
    assert [x["start_us"] for x in b] == [300.0, 500.0, 690.0]  # start = max(ready, previous end)
    assert [x["comm_us"] for x in b] == [200.0, 150.0, 210.0]
    assert [x["exposed_us"] for x in b] == [0.0, 0.0, 900.0 - 700.0]
    assert [x["overlap_us"] for x in b] == [200.0, 150.0, 10.0]
    assert d["comm_us"] == 200.0 + 150.0 + 210.0
    assert d["exposed_us"] == 200.0 and d["overlap_us"] == 560.0 - 200.0
    assert d["overlap_pct"] == pytest.approx(100 * 360 / 560)


def test_host_clock_allows_concurrent_allreduces() -> None:
    d = derive_step(_raw(), HOST)
    assert [x["start_us"] for x in d["buckets"]] == [300.0, 450.0, 690.0]  # start = ready
    # union of [300, 500], [450, 650], [690, 900] = 350 + 210
    assert d["comm_us"] == (650.0 - 300.0) + (900.0 - 690.0)
    assert d["exposed_us"] == 200.0


def test_missing_marks_give_null_figures_not_zeros() -> None:
    raw = _raw()
    raw["bwd_end_us"] = None
    raw["buckets"][1]["end_us"] = None
    d = derive_step(raw, CUDA_EVENTS)
    assert d["buckets"][1]["comm_us"] is None and d["exposed_us"] is None and d["overlap_pct"] is None
    assert d["comm_us"] == 200.0 + (900.0 - 690.0)  # the unmarked bucket is left out, not counted as 0


def test_summarize_means_over_steps() -> None:
    a = derive_step(_raw(), CUDA_EVENTS)
    b = derive_step({**_raw(), "bwd_end_us": 1000.0}, CUDA_EVENTS)  # nothing exposed
    s = summarize([a, b])
    assert s["steps"] == 2 and s["buckets_per_step"] == 3
    assert s["comm_us_per_step"] == 560.0 and s["exposed_us_per_step"] == (200.0 + 0.0) / 2
    assert s["overlap_pct"] == pytest.approx(100 * (360 + 560) / (560 + 560))


def test_unavailable_reasons() -> None:
    assert unavailable_reason("ddp", False, True) is None
    assert "python reducer" in unavailable_reason("ddp", True, True)
    assert "fsdp" in unavailable_reason("fsdp", False, True)
    assert "--no-bucket-timing" in unavailable_reason("ddp", False, False)


def test_hook_marks_buckets_in_a_real_backward(tmp_path, free_port) -> None:  # noqa: ANN001
    """One gloo rank: the wrapped default allreduce still averages, and each bucket gets host marks."""
    torch = pytest.importorskip("torch")
    import torch.distributed as dist

    from tracekit.profile import bucket_events

    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        model = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(4)])
        ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.25)
        timer = bucket_events.install(ddp, None, "cpu")
        assert bucket_events.timer_of(ddp) is timer

        def step() -> None:
            ddp(torch.randn(8, 256)).sum().backward()

        step()  # inactive: a pass-through
        assert timer.steps == []
        timed = timer.timed(step)
        timed()
        timed()
        res = timer.results()
    finally:
        dist.destroy_process_group()
    assert res["clock"] == "host" and len(res["steps"]) == 2
    s = res["steps"][1]
    assert len(s["buckets"]) >= 2  # 1 MB of fp32 weights in 0.25 MiB buckets
    assert sum(b["bytes"] for b in s["buckets"]) == sum(p.numel() * 4 for p in model.parameters())
    assert all(b["ready_us"] <= b["end_us"] <= s["step_us"] for b in s["buckets"])
    assert s["bwd_end_us"] >= max(b["ready_us"] for b in s["buckets"])
