"""``tracekit analyze --whatif``: findings quoted with the replay's predicted saving (issue 22), on a committed
H100 run with a graph break; the quoted figures are checked against ``tracekit whatif`` run on its own."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import tracekit
from tracekit.cli import main
from tracekit.report.render import to_json_dict

RUN = Path(__file__).resolve().parents[2] / "sample_traces" / "whatif/h100_graph_break" / "toy-cpubound-break"


@pytest.fixture(scope="module")
def quoted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tracekit.analyze(RUN, whatif=True)


def _by_code(res) -> dict:
    return {f["code"]: f for f in to_json_dict(res)["findings"]}


def test_findings_quote_the_scenario_that_carries_them_out(quoted):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = tracekit.whatif(RUN, no_graph_breaks=True)
    found = _by_code(quoted)
    w = found["graph_break"]["evidence"]["whatif"]
    assert w["scenario"] == "no-graph-breaks"
    assert w["predicted_saving_us"] == pytest.approx(-alone.scenarios[0]["delta_us"])
    assert w["prediction_error_pct"] == pytest.approx(alone.baseline["error_pct"])
    assert w["self_check_failed"] is False and alone.baseline["self_check_failed"] is False
    d = found["profiler_distortion"]["evidence"]["whatif"]
    assert d["predicted_step_us"] == pytest.approx(alone.baseline["predicted_step_us"])
    # the GPU waits for the host's launches (cpu_bound): CUDA graphs carry the advice out on this compiled run
    assert found["gpu_idle"]["evidence"]["cpu_bound"] and found["gpu_idle"]["evidence"]["whatif"]["scenario"] == "cuda-graphs"
    codes = [f["code"] for f in to_json_dict(quoted)["findings"]]
    assert codes.index("profiler_distortion") == 0
    saving = [f["evidence"]["whatif"]["predicted_saving_us"] for f in to_json_dict(quoted)["findings"][1:]
              if "predicted_saving_us" in (f["evidence"].get("whatif") or {})]
    assert len(saving) == 2 and saving == sorted(saving, reverse=True)  # ranked by predicted saving
    assert quoted.meta["whatif"]["baseline"]["predicted_step_us"] == pytest.approx(d["predicted_step_us"])


def test_cli_prints_what_the_library_returns_and_says_how_far_to_trust_it(quoted):
    res = CliRunner().invoke(main, ["analyze", str(RUN), "--whatif", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    assert doc["findings"] == json.loads(json.dumps(to_json_dict(quoted)["findings"]))
    text = CliRunner().invoke(main, ["analyze", str(RUN), "--whatif"]).output
    assert "what-if (no-graph-breaks): predicted saving" in text and "off the measured step" in text
    plain = tracekit.analyze(RUN)  # without --whatif the findings are what they always were
    assert all("whatif" not in f["evidence"] for f in to_json_dict(plain)["findings"])


def test_html_report_gets_the_whatif_section(tmp_path):
    page, plain = tmp_path / "w.html", tmp_path / "p.html"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = tracekit.whatif(RUN, no_graph_breaks=True)
        res = CliRunner().invoke(main, ["analyze", str(RUN), "--whatif", "--html", str(page), "-o", str(tmp_path / "o")])
        assert res.exit_code == 0, res.output
        res = CliRunner().invoke(main, ["analyze", str(RUN), "--html", str(plain), "-o", str(tmp_path / "o")])
        assert res.exit_code == 0, res.output
    text = page.read_text(encoding="utf-8")
    section = text[text.index('<h2 id="whatif">'):text.index('<h2 id="timelines">')]
    # the baseline as tracekit whatif prints it, its trust line and cost line, the scenario bars and the timeline
    predicted = f"{alone.baseline['predicted_step_us'] / 1000:.2f} ms"
    assert "predicted, profiler cost removed</td><td>" + predicted in section
    assert "how far to trust the prediction" in section and "profiler cost taken out" in section
    assert 'id="whatif-scenarios-0"' in section and 'id="whatif-timeline-0"' in section
    # the bars of the scenarios the findings advise: graph_break's, and the launch-bound gpu_idle's
    assert '"y":["cuda-graphs","no-graph-breaks"]' in section or '"y":["no-graph-breaks","cuda-graphs"]' in section
    assert '<a href="#whatif">What-if</a>' in text
    # without --whatif the page has no such section
    assert 'id="whatif"' not in plain.read_text(encoding="utf-8")


def test_html_report_says_why_a_run_was_not_replayed(tmp_path):
    cuda_only = RUN.parents[2] / "fixtures/h200x2_resnet50_inductor_cudaonly"
    page = tmp_path / "c.html"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CliRunner().invoke(main, ["analyze", str(cuda_only), "--whatif", "--html", str(page), "-o",
                                        str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    text = page.read_text(encoding="utf-8")
    section = text[text.index('<h2 id="whatif">'):text.index('<h2 id="timelines">')]
    assert "Not replayed: nothing to predict: rank 0" in section and "no ProfilerStep ranges" in section


def test_a_quote_from_a_replay_whose_self_check_failed_says_not_to_trust_it():
    from tracekit.analyses.findings import _whatif_quote

    w = {"scenario": "bucket-cap-mb=50", "predicted_saving_us": 1500.0, "predicted_saving_pct": 3.0,
         "prediction_error_pct": None}
    assert _whatif_quote(w).endswith("unchecked: no measured unprofiled step in run.json")
    assert _whatif_quote({**w, "self_check_failed": True}) == (
        "what-if (bucket-cap-mb=50): predicted saving 1.50 ms per step (3.0 %); not to be trusted: the replay does "
        "not reproduce the profiled window (self-check failed)")


def test_allreduce_after_backward_quotes_only_the_scenario_that_addresses_its_cause():
    # its cause is the backward's one compiled graph (no DDPOptimizer split): the split is the quoted change, never a
    # bucket cap (which does not move when the allreduces can start)
    run = Path(__file__).resolve().parents[2] / "sample_traces" / "fixtures/inductor_no_optimization"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tracekit.analyze(run, whatif=True)
    f = _by_code(res)["allreduce_after_backward"]
    w = f["evidence"]["whatif"]
    assert w["scenario"] == "optimize-ddp=ddp_optimizer" and w["predicted_saving_us"] > 0
    out = CliRunner().invoke(main, ["analyze", str(run), "--whatif"])
    block = out.output.split("allreduce_after_backward", 1)[1].split("\n\n", 1)[0]
    assert "what-if (optimize-ddp=ddp_optimizer)" in block and "bucket-cap" not in block


def test_allreduce_after_backward_without_an_applicable_split_says_no_scenario_models_it():
    from tracekit.replay import advice

    found = [{"code": "allreduce_after_backward", "evidence": {"cost_us": 100.0}}]
    # the replay offered only a bucket cap (the split did not apply to this run): nothing is quoted
    rows = [{"name": "bucket-cap-mb=25", "delta_us": -50.0, "delta_pct": -5.0, "changes": {},
             "predicted_step_us": 950.0}]
    (f,) = advice.quote(found, rows, {})
    assert f["evidence"]["whatif"] == {"scenario": None, "note": advice.UNMODELLED}


def test_a_quoted_saving_says_how_far_such_changes_were_checked(monkeypatch):
    """A predicted saving carries the error measured where the same change was made for real, or says it has none."""
    from tracekit.replay import api, validation

    run = Path(__file__).resolve().parents[2] / "sample_traces" / "whatif/h100_graph_break" / "toy-cpubound-break"

    def quotes() -> dict[str, str]:
        out = CliRunner().invoke(main, ["analyze", str(run), "--whatif"]).output
        return {line.split(")")[0].split("(")[-1]: line for line in out.splitlines() if "what-if (" in line}

    checked = sorted(c.delta_error_pp_median for c in validation.checks_for(["no_graph_breaks"])
                     if c.verdict == validation.CHECKED)
    median = (checked[(len(checked) - 1) // 2] + checked[len(checked) // 2]) / 2
    assert api.change_error_pp({"no_graph_breaks": True}) == median
    (graphs,) = [c.delta_error_pp_median for c in validation.checks_for(["cuda_graphs"])]
    q = quotes()
    assert f"within a median of {median:.1f} points" in q["no-graph-breaks"]
    assert f"within a median of {graphs:.1f} points" in q["cuda-graphs"]
    # a change no setting checked (here: every check withdrawn) is quoted as unvalidated
    monkeypatch.setattr(validation, "checks_for", lambda changes: [])
    assert api.change_error_pp({"cuda_graphs": True}) is None
    assert "unvalidated" in quotes()["cuda-graphs"]
