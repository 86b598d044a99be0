"""The profiler-cost calibration's probes (tracekit.profile.calibrate): pure logic and small CPU runs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tracekit.profile import calibrate  # noqa: E402
from tracekit.profile.compile_facts import CompileFactsRecorder  # noqa: E402


def _cpu_calibration(compiled: str | None) -> calibrate.Calibration:
    cal = calibrate.Calibration("cpu", [torch.profiler.ProfilerActivity.CPU], n=3, reps=2)
    cal.compiled = compiled  # CPU runs keep the eager probe only; set here to run the compiled path on CPU
    return cal


def test_cpu_runs_time_the_eager_probe_only() -> None:
    cal = calibrate.Calibration("cpu", [torch.profiler.ProfilerActivity.CPU], compiled="inductor", n=3, reps=2)
    assert cal.compiled is None
    cal.before()
    out = cal.after()
    assert out["probe"] == "eager" and list(out["probes"]) == ["eager"]
    assert out["cpu_op_ns"] == out["probes"]["eager"]["cpu_op_ns"] and out["cpu_op_ns"] >= 0
    assert out["ops_per_rep"] > 0 and out["runtime_ns"] is None


def test_compiled_probe_gives_the_runs_figure_and_both_are_kept() -> None:
    cal = _cpu_calibration("eager")  # dynamo's eager backend: no C++ compiler needed
    cal.before()
    out = cal.after()
    assert out["probe"] == "eager"  # the compiled probe's label is the backend's name
    assert len(cal.probes) == 2 and all(len(p.offs) == 2 for p in cal.probes)


def test_compiled_probe_records_its_own_events() -> None:
    cal = _cpu_calibration("aot_eager")
    cal.before()
    out = cal.after()
    assert out["probe"] == "aot_eager" and list(out["probes"]) == ["eager", "aot_eager"]
    eager, compiled = out["probes"]["eager"], out["probes"]["aot_eager"]
    assert out["cpu_op_ns"] == compiled["cpu_op_ns"]
    # the compiled forward records other events than the eager one (compiled-region ranges, fewer module ops)
    assert eager["ops_per_rep"] != compiled["ops_per_rep"]


def test_summary_keeps_each_probes_median_over_ranks() -> None:
    rows = [{"rank": r, "cpu_op_ns": c, "runtime_ns": c, "ops_per_rep": 10, "launches_per_rep": 5, "reps": 9,
             "ddp": True, "probe": "inductor",
             "probes": {"eager": {"cpu_op_ns": e, "runtime_ns": e, "ops_per_rep": 10, "launches_per_rep": 5},
                        "inductor": {"cpu_op_ns": c, "runtime_ns": c, "ops_per_rep": 7, "launches_per_rep": 4}}}
            for r, e, c in ((0, 2000.0, 4000.0), (1, 2400.0, 5000.0), (2, 2200.0, 6000.0))]
    s = calibrate.summarize(rows, device="cuda", activities="cpu,cuda", record_shapes=False, with_stack=False)
    assert s["probe"] == "inductor" and s["cpu_op_ns"] == 5000.0
    assert s["probes"]["eager"]["cpu_op_ns"] == 2200.0 and s["probes"]["inductor"]["runtime_ns"] == 5000.0
    assert s["probes"]["inductor"]["ops_per_rep"] == 7


def test_probe_compiles_stay_out_of_the_runs_compile_facts() -> None:
    # the probe compiled inside the recorder (worst case: the worker compiles it before): its frame has its
    # own file and is not counted as a compile after warm-up; a function of the run's compiled there is
    def run_fn(x):
        return (x * 2).relu()

    with CompileFactsRecorder("eager", None, False) as facts:
        facts.mark_warmup_done()
        calibrate._tiny_step(torch, "cpu", compiled="eager")()
        facts.mark_run_done()
        probe_only = facts.facts()["compiles_after_warmup"]
    with CompileFactsRecorder("eager", None, False) as facts:
        facts.mark_warmup_done()
        torch.compile(run_fn, backend="eager")(torch.ones(3))
        facts.mark_run_done()
        run_compile = facts.facts()["compiles_after_warmup"]
    assert (probe_only, run_compile) == (0, 1)
