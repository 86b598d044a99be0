"""CUDA-only checks (NCCL); skipped on machines without 2 GPUs."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs"),
]


def test_nccl_eager_ddp_two_gpus(tmp_path: Path) -> None:
    out = tmp_path / "nccl"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-m", "tracekit", "profile", "--nproc", "2", "--out", str(out),
                        "--width", "1024", "--depth", "4", "--warmup", "2", "--steps", "3", "--profile-steps", "2"],
                       capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert r.returncode == 0, r.stderr[-3000:]
    m = json.loads((out / "run.json").read_text())
    assert m["run"]["device"] == "cuda" and m["run"]["backend"] == "nccl"
    assert m["versions"]["nccl"] and all(h["gpu_name"] for h in m["hardware"]["ranks"])
    for rank in (0, 1):
        with gzip.open(out / f"rank{rank}.trace.json.gz", "rt") as fh:
            events = json.load(fh)["traceEvents"]
        names = {e.get("name", "") for e in events}
        assert "nccl:all_reduce" in names
        assert any(e.get("cat") == "kernel" for e in events)
