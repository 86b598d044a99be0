"""How far to trust a prediction (tracekit.replay.trust): the regimes' figures agree with the committed benchmark
results, and whatif quotes the regime of its own prediction."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

import tracekit
from tracekit.cli import main
from tracekit.replay import trust
from tracekit.replay.api import unchecked_note

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "results"


@pytest.mark.parametrize("regime", trust.REGIMES, ids=lambda r: r.name)
def test_regime_figures_are_those_of_its_result_files(regime: trust.Regime) -> None:
    rows = [json.loads(line) for f in regime.sources for line in (RESULTS / f).read_text().splitlines()]
    errors = [abs(r["error_pct"]) for r in rows if r.get("error_pct") is not None
              and r["predicted_gpu_idle_pct"] is not None  # a CPU run has no regime
              and regime.holds(r["predicted_gpu_idle_pct"], r["window_gpu_idle_pct"])]
    assert len(errors) == regime.runs
    assert round(statistics.median(errors), 1) == regime.error_pct_median
    assert round(max(errors), 1) == regime.error_pct_max


@pytest.mark.parametrize("regime", trust.REGIMES, ids=lambda r: r.name)
def test_multi_rank_lean_is_that_of_its_result_files(regime: trust.Regime) -> None:
    rows = [json.loads(line) for f in regime.sources for line in (RESULTS / f).read_text().splitlines()]
    errors = [r["error_pct"] for r in rows if r.get("error_pct") is not None and r["predicted_gpu_idle_pct"] is not None
              and regime.holds(r["predicted_gpu_idle_pct"], r["window_gpu_idle_pct"]) and r.get("ranks", 1) > 1]
    assert regime.multi_rank_dict() == {"runs": len(errors), "below": sum(e < 0 for e in errors),
                                        "error_pct_median": round(statistics.median(errors), 1)}


def test_a_multi_rank_run_is_quoted_the_lean_and_a_one_rank_run_is_not() -> None:
    cpu = next(r for r in trust.REGIMES if r.name == "cpu-bound")
    assert cpu.to_dict()["multi_rank"] == {"runs": cpu.multi_rank.runs, "below": cpu.multi_rank.below,
                                           "error_pct_median": cpu.multi_rank.error_pct_median}
    assert cpu.to_dict(several_ranks=False)["multi_rank"] is None
    two = tracekit.whatif(REPO / "sample_traces" / "whatif/h200x2_nccl_scenarios" / "tfm1024" / "cap25").baseline
    one = tracekit.whatif(REPO / "sample_traces" / "whatif/h200_whatif" / "smallmlp-eager").baseline
    assert two["regime"]["name"] == one["regime"]["name"] == "cpu-bound"
    assert two["regime"]["multi_rank"]["runs"] == cpu.multi_rank.runs and one["regime"]["multi_rank"] is None
    assert f"on the {cpu.multi_rank.runs} of them with several ranks" in trust.describe(cpu, 30.0, several_ranks=True)
    assert "several ranks" not in trust.describe(cpu, 30.0)


def test_drift_split_of_the_cpu_bound_runs_is_as_documented() -> None:
    """docs/whatif.md, "How steady the truth is": the runs' drift (from their run.json) against their error."""
    from types import SimpleNamespace

    from tracekit.replay.api import _measured_drift
    from tracekit.traces.manifest import read_manifest

    cpu = next(r for r in trust.REGIMES if r.name == "cpu-bound")
    # the runs with a run.json (the unsynchronized loops have none: no warm-up steps to drift from)
    rows = [json.loads(line) for line in (RESULTS / cpu.sources[0]).read_text().splitlines()]
    rows = [r for r in rows if (r["predicted_gpu_idle_pct"] or 0.0) >= cpu.idle_pct_low]
    drift = [_measured_drift(SimpleNamespace(manifest=read_manifest(REPO / r["run"] / "run.json"))) for r in rows]
    assert len(rows) == 91 and None not in drift
    assert round(statistics.median(abs(d) for d in drift), 1) == 9.0 and round(max(abs(d) for d in drift), 1) == 47.9
    steady = [abs(r["error_pct"]) for r, d in zip(rows, drift) if abs(d) < 5]
    moved = [abs(r["error_pct"]) for r, d in zip(rows, drift) if abs(d) >= 5]
    assert (len(steady), round(statistics.median(steady), 1)) == (24, 17.2)
    assert (len(moved), round(statistics.median(moved), 1)) == (67, 11.7)


def test_regimes_cover_every_idle_share_once() -> None:
    for idle in (0.0, 14.99, 15.0, 50.0, 100.0):
        for window in (0.0, 14.99, 15.0, 100.0):
            assert sum(r.holds(idle, window) for r in trust.REGIMES) == 1
    assert trust.regime_of(14.9).name == "gpu-bound" and trust.regime_of(15.0).name == "cpu-bound"
    assert trust.regime_of(14.9, 14.9).name == "gpu-bound"
    assert trust.regime_of(14.9, 15.0).name == "gpu-bound-once-shed"
    assert trust.regime_of(15.0, 2.0).name == "cpu-bound"
    assert trust.regime_of(None) is None


def test_a_prediction_gpu_bound_only_once_shed_says_so() -> None:
    """A plain training loop, no synchronize between steps (torch.profiler, no run.json): ViT-B/16 bf16 on an
    H100, whose window was CPU-bound (GPU idle ~47 %); the prediction, with the profiler's cost taken out, is
    GPU-bound (idle ~4 %)."""
    b = tracekit.whatif(REPO / "sample_traces" / "whatif/h100_unsynced" / "vit-bf16" / "rank0.trace.json.gz").baseline
    assert b["window_gpu_idle_pct"] == pytest.approx(46.7, abs=0.2) and b["predicted_gpu_idle_pct"] < 15
    assert b["regime"]["name"] == "gpu-bound-once-shed"
    note = unchecked_note(b)
    shed = next(r for r in trust.REGIMES if r.name == "gpu-bound-once-shed")
    assert "GPU-bound only once the profiler's cost is taken out" in note and f"{shed.error_pct_max} %" in note


def test_whatif_quotes_its_regime_and_the_share_it_comes_from() -> None:
    """A committed GPU-bound H200 run (ViT eager: the GPU idle ~2 % of the step) and a CPU-bound one."""
    vit = tracekit.whatif(REPO / "sample_traces" / "whatif/h200_whatif" / "vit-eager").baseline
    assert vit["predicted_gpu_idle_pct"] == pytest.approx(3.2, abs=0.1)
    gpu = next(r for r in trust.REGIMES if r.name == "gpu-bound")
    assert vit["regime"]["name"] == "gpu-bound" and vit["regime"]["runs"] == gpu.runs
    mlp = tracekit.whatif(REPO / "sample_traces" / "whatif/h200_whatif" / "smallmlp-eager").baseline
    assert mlp["predicted_gpu_idle_pct"] > 50 and mlp["regime"]["name"] == "cpu-bound"
    note = unchecked_note(mlp)
    cpu = next(r for r in trust.REGIMES if r.name == "cpu-bound")
    assert "CPU-bound step" in note and f"{cpu.runs} benchmark runs" in note and f"{cpu.error_pct_max} %" in note


def test_cpu_runs_have_no_regime(tmp_path) -> None:
    from tests.tracebuilder import TraceBuilder

    for rank in (0, 1):
        tb = TraceBuilder(rank=rank, world_size=2, gpu=False)
        tb.step(1, 0, 100)
        tb.cpu_op("aten::mm", 10, 50)
        tb.write(tmp_path / f"rank{rank}.trace.json")
    b = tracekit.whatif(tmp_path).baseline
    assert b["predicted_gpu_idle_pct"] is None and b["regime"] is None
    assert "18 committed CPU (gloo) benchmark runs" in unchecked_note(b) and "5.3 %, at most 14.8 %" in unchecked_note(b)


def test_cpu_run_figures_are_those_of_the_result_file() -> None:
    rows = [json.loads(line) for f in trust.REGIMES[0].sources for line in (RESULTS / f).read_text().splitlines()]
    errors = [abs(r["error_pct"]) for r in rows if r["predicted_gpu_idle_pct"] is None and r["error_pct"] is not None]
    assert trust.CPU_RUNS == (len(errors), round(statistics.median(errors), 1), round(max(errors), 1))


def test_idle_share_is_the_mean_over_ranks_of_mean_idle_over_mean_step() -> None:
    """Rank 0: idle 30 and 10 µs of 100 µs steps -> 20 %; rank 1: 50 of 100 -> 50 %; the run: (20 + 50) / 2."""
    import pandas as pd

    from tracekit.replay.api import _idle_share

    steps = pd.DataFrame({"rank": [0, 0, 1], "predicted_idle_us": [30.0, 10.0, 50.0],
                          "predicted_step_us": [100.0, 100.0, 100.0]})
    assert _idle_share(steps) == pytest.approx((20 + 50) / 2)
    cpu = steps.assign(predicted_idle_us=float("nan"))  # a CPU run: no GPU figures
    assert _idle_share(cpu) is None
    # the window's share, from its own columns: rank 0 idle 60 of (200 + 100) / 2 = 150 µs -> 40 %; rank 1 0 %
    window = steps.assign(window_idle_us=[80.0, 40.0, 0.0], window_step_us=[200.0, 100.0, 100.0])
    assert _idle_share(window, "window") == pytest.approx((40 + 0) / 2)
    assert _idle_share(window) == pytest.approx((20 + 50) / 2)


def test_a_cpu_run_whose_threads_outnumber_its_cores_says_so() -> None:
    """Two ranks of one compute thread each, plus a gloo worker each, on 2 cores: 2 x (1 + 1) > 2, a note for the
    host; on 16 cores with 4 threads each, 2 x (4 + 1) <= 16: none; without the facts (older runs): none."""
    from tracekit.replay.api import shared_cores_notes
    from tracekit.traces.manifest import Hardware, Manifest, RankHost

    def run(cpus, threads, hosts=("vm", "vm")):
        return Manifest(hardware=Hardware(ranks=[RankHost(rank=r, hostname=h, cpus=cpus, torch_threads=threads)
                                                 for r, h in enumerate(hosts)]))

    (note,) = shared_cores_notes(run(2, 1))
    assert note.startswith("2 ranks on vm ran 1 compute thread each and gloo's workers on 2 cores")
    assert shared_cores_notes(run(16, 4)) == []
    assert shared_cores_notes(run(None, 1)) == [] and shared_cores_notes(None) == []
    assert len(shared_cores_notes(run(2, 1, hosts=("a", "b")))) == 0  # one rank a host: 1 x 2 <= 2
    assert len(shared_cores_notes(run(1, 1, hosts=("a", "b")))) == 2


def test_whatif_bounds_the_prediction_by_the_cupti_only_warm_up_steps(tmp_path) -> None:
    """run.json's window_step_s: the warm-up steps after the first (CUPTI on, nothing recorded) are a profiled
    state the undisturbed step cannot exceed; the baseline quotes them, and a prediction above them gets a note."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(REPO / "sample_traces" / "whatif/h200x2_nccl_scenarios" / "toy4096" / "cap25", run)
    pred = tracekit.whatif(run).baseline["predicted_step_us"]
    doc = json.loads((run / "run.json").read_text())
    doc["profile_window"].update(wait=1, warmup=3, active=3)

    def write(cupti_us: tuple[float, float]) -> None:
        for k, row in enumerate(doc["timings"]["per_rank"]):  # rank 1 the slower in the first step, rank 0 in the second
            a, b = (cupti_us[0], cupti_us[1] - 100) if k == 0 else (cupti_us[0] - 100, cupti_us[1])
            row["window_step_s"] = [0.005, 0.009, a / 1e6, b / 1e6, 0.009, 0.009, 0.009]
        (run / "run.json").write_text(json.dumps(doc))

    write((0.9 * pred, 0.8 * pred))
    b = tracekit.whatif(run)
    assert b.baseline["cupti_step_us"] == pytest.approx(0.85 * pred)
    assert b.baseline["predicted_vs_cupti_pct"] == pytest.approx(100 * (1 / 0.85 - 1))
    assert any("above the profiler's warm-up steps" in n for n in b.notes)
    write((1.2 * pred, 1.1 * pred))
    b = tracekit.whatif(run)
    assert b.baseline["predicted_vs_cupti_pct"] == pytest.approx(100 * (1 / 1.15 - 1))
    assert not any("warm-up steps" in n for n in b.notes)
    res = CliRunner().invoke(main, ["whatif", str(run)])
    assert "profiler warm-up, CUPTI only (run.json)" in res.output and "at most this" in res.output


def test_a_slowest_rank_without_an_idle_share_keeps_the_runs_regime() -> None:
    """Ranks of different kinds, the slowest with no GPU idle figure: the baseline's regime is the run's (it
    raised StopIteration looking for the slowest rank's own)."""
    import pandas as pd

    from tracekit.replay import api

    class _Traces:  # what _baseline reads of a TraceSet here
        manifest = None

        def __len__(self) -> int:
            return 3

    nan = float("nan")
    steps = pd.DataFrame({"rank": [0, 1, 2], "step": [1, 1, 1],
                          "window_step_us": [1000.0, 1000.0, 2000.0], "replayed_step_us": [1000.0, 1000.0, 2000.0],
                          "predicted_step_us": [1000.0, 1000.0, 2000.0],
                          "predicted_idle_us": [50.0, 500.0, nan], "window_idle_us": [50.0, 500.0, nan]})
    base = api._baseline(steps, _Traces(), whole_window=True)
    run = trust.regime_of(api._idle_share(steps), api._idle_share(steps, "window"))
    assert {r["name"] for r in base["rank_regimes"]} == {"gpu-bound", "cpu-bound"}
    assert base["regime"]["name"] == run.name
