"""The paired-truth tools (benchmarks/gpu/paired_ddp_variants.py, benchmarks/bench_whatif.py --paired*): a real
2-process gloo job, and the bench's checks on committed paired timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))


@pytest.mark.slow
def test_paired_ddp_variants_times_every_variant_in_one_job(tmp_path):
    out = tmp_path / "paired.jsonl"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           str(ROOT / "benchmarks" / "gpu" / "paired_ddp_variants.py"), "--width", "64", "--depth", "2", "--batch-size", "4",
           "--rounds", "4", "--warmup", "1", "--variant", "bucket-cap-mb=25", "--variant", "bucket-cap-mb=0.01",
           "--variant", "world-size=1", "--variant", "world-size=1,solo=1", "--json", str(out)]
    subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=240)
    res = json.loads(out.read_text())
    names = [v["variant"] for v in res["variants"]]
    assert names == ["bucket-cap-mb=25", "bucket-cap-mb=0.01", "world-size=1", "world-size=1,solo=1"]
    assert res["world"] == 2
    base, small, one, solo = res["variants"]
    assert solo["options"]["solo"] and solo["options"]["world_size"] == 1 and not one["options"]["solo"]
    assert len(solo["step_ms"]) == 4 and min(solo["step_ms"]) > 0
    assert base["paired_delta_pct_median"] == 0.0 and len(base["step_ms"]) == 4
    assert one["options"]["world_size"] == 1 and small["options"]["bucket_cap_mb"] == 0.01
    # the paired change is the median over rounds of the per-round ratio to the baseline
    ratios = sorted(b / a - 1 for a, b in zip(base["step_ms"], one["step_ms"]))
    assert one["paired_delta_pct_median"] == pytest.approx(100 * (ratios[1] + ratios[2]) / 2)


@pytest.mark.slow
def test_paired_twins_item_break(tmp_path):
    """paired_twins.py --break-kind item: the twin with the break compiles two graphs (the ``.item()`` check breaks
    it), the plain twin one; the kind is in the output, and the paired change is the median of the per-round ratios."""
    out = tmp_path / "paired.jsonl"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "gpu" / "paired_twins.py"), "--width", "32", "--depth", "4",
           "--batch-size", "4", "--at", "1", "--break-kind", "item", "--rounds", "4", "--warmup", "2",
           "--dynamo", "aot_eager", "--json", str(out)]
    subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=120)
    res = json.loads(out.read_text())
    assert res["break_kind"] == "item" and res["shape"]["break_kind"] == "item"
    assert res["graphs_compiled"] == {"break": 2, "none": 1}
    ratios = sorted(b / a - 1 for a, b in zip(res["step_ms"]["break"], res["step_ms"]["none"]))
    assert res["paired_delta_pct_median"] == pytest.approx(100 * (ratios[1] + ratios[2]) / 2)


def test_paired_twin_rows_check_the_committed_prediction():
    """bench_whatif --paired on one committed twin: the predicted change is whatif's, the measured one the
    paired median, and the committed result row says the same."""
    import bench_whatif

    run = ROOT / "sample_traces/whatif/h100_paired_twins/c/transformer-320-break"
    (row,) = bench_whatif.paired_rows([run])
    paired = json.loads((run / "paired.jsonl").read_text())
    assert row["measured_delta_pct"] == paired["paired_delta_pct_median"]
    committed = [json.loads(line) for line in
                 (ROOT / "benchmarks/results/whatif_scenarios_h100_paired_twins.jsonl").read_text().splitlines()]
    (same,) = [r for r in committed if r["variant"].endswith("c/transformer-320-break")]
    assert row["predicted_delta_pct"] == pytest.approx(same["predicted_delta_pct"], abs=1e-9)


def test_cross_rows_predict_each_paired_cap_from_each_profiled_layout(tmp_path):
    """bench_whatif --cross on a set of one committed cap-25 run (twice, as ``cap25`` and ``cap25_again``): a row per
    other bucket cap of the paired job and per source, none for its other variants; the predicted change is whatif's
    sweep, the measured one the median and quartiles over rounds of target / source - 1, which for the job's own
    baseline are the job's paired figures."""
    import bench_whatif

    import tracekit

    run = ROOT / "sample_traces/whatif/h200x2_nccl_scenarios/tfm1024/cap25"
    (tmp_path / "cap25").symlink_to(run)
    (tmp_path / "cap25_again").symlink_to(run)
    rows = bench_whatif.cross_rows([tmp_path])
    paired = {v["variant"]: v for v in json.loads((run / "paired.jsonl").read_text())["variants"]}
    assert [r["variant"].rsplit("/", 1)[1] for r in rows] == [
        f"{src}:bucket-cap-mb={c}" for src in ("cap25", "cap25_again") for c in (1, 5, 100)]
    sweep = tracekit.whatif(run, sweep=["bucket-cap-mb=1,5,100"]).scenarios
    for r, sc in zip(rows, sweep * 2):
        v = paired[r["changes"]]
        assert r["from_cap_mb"] == 25.0 and r["rounds"] == len(v["step_ms"])
        assert r["predicted_delta_pct"] == pytest.approx(sc["delta_pct"], abs=1e-9)
        assert r["measured_delta_pct"] == pytest.approx(v["paired_delta_pct_median"], abs=1e-9)
        assert (r["measured_delta_q1_pct"], r["measured_delta_q3_pct"]) == pytest.approx(
            (v["paired_delta_pct_q1"], v["paired_delta_pct_q3"]), abs=1e-9)


def test_a_variants_solo_flag_is_0_or_1():
    import importlib.util

    spec = importlib.util.spec_from_file_location("paired_ddp_variants", ROOT / "benchmarks" / "gpu" / "paired_ddp_variants.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod._spec("world-size=1,solo=1", 2)["solo"] is True
    assert mod._spec("world-size=1,solo=0", 2)["solo"] is False and mod._spec("bucket-cap-mb=5", 2)["solo"] is False
    with pytest.raises(SystemExit, match="solo takes 0 or 1, not 'yes'"):
        mod._spec("world-size=1,solo=yes", 2)


@pytest.mark.parametrize(("folder", "model"), [("h100_cuda_graphs", "mlp512x16"), ("h100_cuda_graphs", "resnet18"),
                                               ("h100_cuda_graphs_heldout", "tfm256x6")])
def test_cuda_graph_rows_are_recomputed_from_the_committed_runs(folder, model):
    """bench_whatif --baseline M/default --variant M/reduce-overhead:cuda-graphs=1 on committed runs gives the
    committed result rows: the prediction from the default-mode trace, the truth from the reduce-overhead run."""
    import bench_whatif

    base = ROOT / "sample_traces/whatif" / folder / model
    rows = bench_whatif.scenario_rows(base / "default", [f"{base / 'reduce-overhead'}:cuda-graphs=1"])
    committed = {tuple(r["variant"].split("/")[-2:]): r for r in map(json.loads, (
        ROOT / f"benchmarks/results/whatif_scenarios_{folder}.jsonl").read_text().splitlines())}
    assert [r["changes"] for r in rows] == ["baseline", "cuda-graphs=1"]
    for r in rows:
        same = committed[tuple(r["variant"].split("/")[-2:])]
        assert r["predicted_ms"] == pytest.approx(same["predicted_ms"], rel=1e-9)
        assert r["measured_ms"] == pytest.approx(same["measured_ms"], rel=1e-9)
    assert rows[1]["predicted_delta_pct"] < 0 and rows[1]["measured_delta_pct"] < 0  # both faster, as ranked


def test_item_break_rows_are_recomputed_from_the_committed_runs():
    """bench_whatif --paired on the committed .item() twins gives the committed rows, and the scenario removes
    the sync the break holds."""
    import bench_whatif

    runs = sorted((ROOT / "sample_traces/whatif/h100_item_break/a").glob("*-break"))
    rows = bench_whatif.paired_rows(runs)
    committed = [json.loads(line) for line in
                 (ROOT / "benchmarks/results/whatif_scenarios_h100_item_break.jsonl").read_text().splitlines()]
    assert len(rows) == len(committed) == 2
    for r, same in zip(rows, committed):
        assert r["variant"].endswith(same["variant"].rsplit("/", 1)[1])
        assert r["predicted_delta_pct"] == pytest.approx(same["predicted_delta_pct"], abs=1e-9)
        assert r["measured_delta_pct"] == same["measured_delta_pct"]
