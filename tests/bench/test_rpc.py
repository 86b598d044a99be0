"""``tracekit bench rpc`` on cpu: 1 trainer, 1 parameter server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli.bench import bench_group


@pytest.mark.slow  # starts a trainer and a parameter server process
def test_rpc_one_trainer_one_ps(tmp_path: Path) -> None:
    out = tmp_path / "rpc.json"
    r = CliRunner().invoke(bench_group, ["rpc", "--trainers", "1", "--parameter-servers", "1", "--embedding-dim", "16",
                                         "--warmup-cycles", "1", "--epochs", "3", "--device", "cpu",
                                         "--timeout", "60", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "trainer0" in r.stdout and "all" in r.stdout and "p95 s/epoch" in r.stdout and "epochs/s" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["rpc_backend"] == "tensorpipe" and doc["device"] == "cpu"
    (t,) = doc["trainers"]
    assert t["epochs"] == 3 and len(doc["measurements"]["0"]) == 3
    assert set(t["sec_per_epoch"]) == {"p50", "p75", "p90", "p95"}
    assert doc["overall"]["epochs_per_sec"]["p50"] == pytest.approx(1 / doc["overall"]["sec_per_epoch"]["p50"])


def test_rpc_unavailable_is_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch.distributed.rpc as rpc

    monkeypatch.setattr(rpc, "is_available", lambda: False)
    r = CliRunner().invoke(bench_group, ["rpc", "--trainers", "1", "--parameter-servers", "1"])
    assert r.exit_code == 2
    assert "torch.distributed.rpc" in r.stderr and "without distributed RPC" in r.stderr


def test_rpc_bad_option() -> None:
    r = CliRunner().invoke(bench_group, ["rpc", "--trainers", "0"])
    assert r.exit_code == 2 and "--trainers" in r.stderr
