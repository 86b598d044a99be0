"""Fast checks of tracekit profile: option validation, env detection, manifest reader, stats."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.errors import ConfigError
from tracekit.profile.compile_facts import parse_ddp_optimizer_logs
from tracekit.profile.config import ProfileConfig
from tracekit.profile.env import detect_rank_env
from tracekit.profile.harness import percentile, summarize_ranks
from tracekit.traces.manifest import Manifest, ManifestWarning, read_manifest, write_manifest



@pytest.mark.parametrize("kwargs, needle", [
    ({"parallel": "fsdp", "dynamo": "inductor", "optimize_ddp": "ddp_optimizer"}, "--optimize-ddp"),
    ({"parallel": "fsdp", "bucket_cap_mb": 25.0}, "--bucket-cap-mb"),
    ({"optimize_ddp": "ddp_optimizer"}, "needs --dynamo"),
    ({"fullgraph": True}, "needs --dynamo"),
    ({"activation_checkpointing": True}, "--fsdp"),
    ({"dynamo": "inductor", "bucket_cap_mb": 0.5}, ">= 1"),
    ({"dynamo": "aot_eager", "optimize_ddp": "python_reducer", "comm_hook": "bf16"}, "python reducer"),
    ({"graph_break_at": 3, "depth": 4}, "--graph-break-at"),
    ({"graph_break_at": 1, "graph_break_kind": "nonzero"}, "--graph-break-kind must be one of explicit, item"),
    ({"graph_break_kind": "item"}, "--graph-break-kind item needs --graph-break-at"),
    ({"nproc": 0}, "--nproc"),
    ({"steps": 0}, "--steps"),
    ({"dynamo": "tvm"}, "--dynamo"),
    ({"model": "transformer", "width": 10, "heads": 4}, "divisible"),
])
def test_bad_configs_rejected(kwargs: dict, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle.replace("-", r"\-").replace(">", ">")):
        ProfileConfig(**kwargs)


def test_config_roundtrip_and_defaults() -> None:
    c = ProfileConfig(dynamo="inductor")
    assert c.resolved_optimize_ddp == "ddp_optimizer"
    assert ProfileConfig.from_json(c.to_json()) == c
    assert ProfileConfig(parallel="fsdp", dynamo="inductor").resolved_optimize_ddp is None
    assert c.profile_cycle_steps == 1 + 2 + 3  # wait, warm-up (the second one times CUPTI alone), recorded


def test_cli_rejects_bad_combo_before_launch() -> None:
    from tracekit.cli import main

    r = CliRunner().invoke(main, ["profile", "--fsdp", "--dynamo", "inductor", "--optimize-ddp", "ddp_optimizer"])
    assert r.exit_code == 2
    assert "error:" in r.output and "--optimize-ddp" in r.output
    assert "Traceback" not in r.output


def test_cli_rejects_more_ranks_than_gpus() -> None:
    import torch

    from tracekit.cli import main

    n = torch.cuda.device_count() + 1
    r = CliRunner().invoke(main, ["profile", "--device", "cuda", "--nproc", str(n)])
    assert r.exit_code == 2
    assert "GPUs" in r.output


def test_cli_missing_optional_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from tracekit.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("torchvision", "transformers") else real(name, *a))
    r = CliRunner().invoke(main, ["profile", "--model", "resnet50"])
    assert r.exit_code == 2
    assert "pip install torchvision" in r.output


def test_help_has_example() -> None:
    from tracekit.cli import main

    r = CliRunner().invoke(main, ["profile", "--help"])
    assert r.exit_code == 0
    assert "tracekit profile --nproc 2" in r.output
    assert "--fail-rank" not in r.output  # hidden debug option


def test_detect_rank_env_torchrun_and_slurm() -> None:
    assert detect_rank_env({}) is None
    r = detect_rank_env({"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1"})
    assert (r.rank, r.world_size, r.local_rank, r.launcher) == (1, 4, 1, "torchrun")
    env = {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1",
           "MASTER_ADDR": "h", "MASTER_PORT": "1234"}
    r = detect_rank_env(env)
    assert (r.rank, r.world_size, r.local_rank, r.launcher) == (3, 4, 1, "slurm")
    assert env["RANK"] == "3" and env["WORLD_SIZE"] == "4"
    # an sbatch shell without MASTER_* is not a rank: we launch ourselves
    assert detect_rank_env({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}) is None


def test_read_write_manifest(tmp_path: Path) -> None:
    assert read_manifest(tmp_path) is None
    (tmp_path / "run.json").write_text("{not json")
    with pytest.warns(ManifestWarning, match="run.json: ignoring unreadable manifest"):
        assert read_manifest(tmp_path) is None
    write_manifest(tmp_path, {"schema_version": 1, "traces": [{"rank": 0, "file": "rank0.trace.json", "bytes": 9}]})
    m = read_manifest(tmp_path)
    assert isinstance(m, Manifest) and m.traces[0].file == "rank0.trace.json" and m.traces[0].bytes == 9
    assert read_manifest(tmp_path / "run.json").schema_version == 1
    assert not list(tmp_path.glob(".*tmp*"))


def test_percentiles_and_overall() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    t = summarize_ranks([[1.0, 1.0, 3.0], [2.0, 1.0, 1.0]], local_examples=8)
    assert t["overall"]["step_s"] == [2.0, 1.0, 3.0]  # slowest rank per step
    assert t["overall"]["examples_per_step"] == 16
    assert t["per_rank"][1]["sec_per_iter"]["p50"] == 1.0
    assert t["overall"]["examples_per_sec"]["p50"] == 8.0


def test_parse_ddp_optimizer_logs() -> None:
    msgs = [
        "\nDDPOptimizer used bucket cap 26214400 and created 2 buckets. Enable debug logs for detailed bucket info.",
        "\nDDPOptimizer produced the following bucket assignments:\n"
        "┌─────────┬────────────┬──────────────┐\n"
        "│   Index │   Size (b) │ Param Names  │\n"
        "├─────────┼────────────┼──────────────┤\n"
        "│       0 │    1050624 │ L_w1_        │\n"
        "├─────────┼────────────┼──────────────┤\n"
        "│         │            │ L_b1_        │\n"
        "├─────────┼────────────┼──────────────┤\n"
        "│       1 │       2048 │ L_b0_        │\n"
        "└─────────┴────────────┴──────────────┘",
    ]
    (g,) = parse_ddp_optimizer_logs(msgs)
    assert g["bucket_cap_bytes"] == 26214400 and g["bucket_count"] == 2
    assert g["buckets"] == [{"index": 0, "bytes": 1050624, "params": ["L_w1_", "L_b1_"]},
                            {"index": 1, "bytes": 2048, "params": ["L_b0_"]}]
