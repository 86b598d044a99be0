"""``tracekit bench ddp`` on cpu: a 1+2-rank sweep of a tiny model, failure isolation, helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.bench.ddp import check_topologies, default_world_sizes, plan_points
from tracekit.bench.schema import ORIGINAL_KEYS, load_document
from tracekit.cli.bench import bench_group
from tracekit.errors import RunError

TINY = ["--device", "cpu", "--model", "toy", "--width", "32", "--depth", "2", "--batch-size", "8",
        "--warmup", "2", "--iters", "3", "--timeout", "60"]


def _invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(bench_group, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.slow  # starts worker processes (1 and 2 ranks over gloo)
def test_sweep_world_sizes_1_2_json_and_profile(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    prof = tmp_path / "traces"
    code, stdout, stderr = _invoke("ddp", *TINY, "--world-sizes", "1,2", "--json", str(out),
                                   "--profile", "--profile-dir", str(prof))
    assert code == 0, stderr
    for label in ("no ddp", "ddp 1", "ddp 2"):
        assert label in stdout
    assert "ex/s per rank" in stdout and "efficiency" in stdout and "100.0%" in stdout
    assert "'GPU' in the table is one rank" in stderr  # cpu notice
    assert "[3/3] toy ddp 2" in stderr  # plain-line progress (not a TTY)

    doc = json.loads(out.read_text())
    assert set(ORIGINAL_KEYS) <= set(doc)
    assert doc["distributed_backend"] == "gloo" and doc["bucket_size"] == 25
    assert doc["device"] == "cpu" and doc["unit"] == "rank" and doc["hosts"]
    assert "topology" in doc and doc["config"]["steps"] == 3
    (entry,) = doc["benchmark_results"]
    assert entry["model"] == "toy" and entry["batch_size"] == 8 and entry["failures"] == []
    res = entry["result"]
    assert [r["ranks"] for r in res] == [[0], [0], [0, 1]]
    assert [r["ddp"] for r in res] == [False, True, True]
    assert [len(r["measurements"]) for r in res] == [3, 3, 6]  # every rank's iterations
    assert all(t > 0 for r in res for t in r["measurements"])

    # --profile: tracekit profile layout per point
    for point, ranks in (("no-ddp", 1), ("ddp-1", 1), ("ddp-2", 2)):
        d = prof / "toy" / point
        assert (d / "run.json").exists()
        for r in range(ranks):
            assert (d / f"rank{r}.trace.json.gz").stat().st_size > 0
    manifest = json.loads((prof / "toy" / "ddp-2" / "run.json").read_text())
    assert manifest["run"]["world_size"] == 2 and len(manifest["traces"]) == 2

    # the file reads back through the normalizing reader
    norm = load_document(out)
    assert norm["format"] == "tracekit"
    assert [(p["ddp"], p["world_size"]) for p in norm["models"][0]["points"]] == [(False, 1), (True, 1), (True, 2)]


@pytest.mark.slow  # starts worker processes (2 ranks over gloo)
def test_failing_point_is_reported_and_sweep_continues(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEKIT_BENCH_FAIL", "ddp 2:1")  # rank 1 of the 2-rank point raises
    out = tmp_path / "s.json"
    code, stdout, stderr = _invoke("ddp", *TINY, "--world-sizes", "2", "--json", str(out), "--no-progress")
    assert code == 1
    assert "FAILED" in stdout and "injected" in stdout
    assert "1 of 2 points failed" in stderr
    doc = json.loads(out.read_text())
    (entry,) = doc["benchmark_results"]
    assert [r["label"] for r in entry["result"]] == ["no ddp"]
    (fail,) = entry["failures"]
    assert fail["world_size"] == 2 and "rank 1" in fail["error"]


def test_bad_options() -> None:
    code, _, stderr = _invoke("ddp", "--world-sizes", "1,x")
    assert code == 2 and "--world-sizes" in stderr
    code, _, stderr = _invoke("ddp", "--optimize-ddp", "ddp_optimizer")
    assert code == 2 and "--dynamo" in stderr


def test_helpers() -> None:
    assert default_world_sizes(1) == [1]
    assert default_world_sizes(2) == [1, 2]
    assert default_world_sizes(8) == [1, 2, 4, 8]
    assert default_world_sizes(6) == [1, 2, 4, 6]
    assert plan_points([2, 1]) == [(False, 1), (True, 1), (True, 2)]
    same = [{"hostname": h, "local_rank": 0, "rank": i, "topology": "GPU0 X NV18"} for i, h in enumerate("ab")]
    assert check_topologies(same) == ("GPU0 X NV18", None)
    differ = same + [{"hostname": "c", "local_rank": 0, "rank": 2, "topology": "GPU0 X PIX"}]
    with pytest.raises(RunError, match="different GPU topologies"):
        check_topologies(differ)
    cpu = [{"hostname": "a", "local_rank": 0, "rank": 0, "topology": None, "topology_unavailable": "nvidia-smi not found"}]
    assert check_topologies(cpu) == (None, "nvidia-smi not found")


@pytest.mark.gpu
def test_gpu_sweep(tmp_path: Path) -> None:
    import torch

    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    code, stdout, stderr = _invoke("ddp", "--device", "cuda", "--model", "toy", "--world-sizes", "1,2",
                                   "--warmup", "2", "--iters", "5", "--json", str(tmp_path / "g.json"))
    assert code == 0, stderr
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["distributed_backend"] == "nccl" and doc["unit"] == "gpu"
