"""A skipped compile says why, in dynamo's words, with the fix where one is known (issue 23, item 6)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.explain_builders import load_run, manifest_for, write_run
from tracekit.analyses.findings import as_dicts
from tracekit.profile import dynamo_skips

REPO = Path(__file__).resolve().parents[2]
# what torch 2.13's convert_frame logs (paths shortened)
SKIP_SEQ = ("skipping: forward (reason: frame is in the Dynamo skipfiles list, file: "
            "/venv/lib/python3.11/site-packages/torch/nn/modules/container.py)")
SKIP_LINEAR = ("skipping: forward (reason: frame is in the Dynamo skipfiles list, file: "
               "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py)")
SKIP_DDP = ("skipping: forward (reason: frame is in the Dynamo skipfiles list, file: "
            "/venv/lib/python3.11/site-packages/torch/nn/parallel/distributed.py)")
SKIP_NOISE = ("skipping: __enter__ (reason: no tensor-related objects found in frame, file: "
              "/usr/lib/python3.11/contextlib.py)")
WONT = ("WON'T CONVERT step /home/u/train.py line 12 \ndue to: \nTraceback (most recent call last):\n"
        "  File \"x.py\", line 1, in f\ntorch._dynamo.exc.Unsupported: generator\n")


def test_parse_and_keep_what_explains_eager_execution():
    got = dynamo_skips.skips([SKIP_DDP, SKIP_NOISE, SKIP_SEQ, SKIP_LINEAR, SKIP_LINEAR, WONT])
    assert [(s["function"], s["file"].rsplit("/", 1)[-1], s["count"]) for s in got] == [
        ("forward", "container.py", 1), ("forward", "linear.py", 2), ("step", "train.py", 1)]
    assert got[0]["reason"] == "frame is in the Dynamo skipfiles list" and "nn.Sequential" in got[0]["fix"]
    assert got[2]["kind"] == "wont_convert" and got[2]["line"] == 12
    assert got[2]["reason"] == "WON'T CONVERT: torch._dynamo.exc.Unsupported: generator"
    assert dynamo_skips.parse("something else") is None


def _with_skips(folder: Path, skips: list[dict] | None) -> Path:
    man = manifest_for("skipped")
    for r in man["compile"]["per_rank"]:
        r["skipped_frames"] = []  # no fail_type recorded: what a skip-listed frame leaves
        r["dynamo_skips"] = skips
    return write_run(folder, "skipped", manifest=man)


def test_finding_quotes_dynamo_and_the_fix(tmp_path):
    skips = dynamo_skips.skips([SKIP_SEQ, SKIP_LINEAR])
    f = next(f for f in as_dicts(load_run(_with_skips(tmp_path / "s", skips))[1].findings)
             if f["code"] == "compile_skipped")
    assert ('dynamo says "skipping: forward (reason: frame is in the Dynamo skipfiles list, file: '
            'torch/nn/modules/container.py)"; 1 more in run.json dynamo_skips') in f["message"]
    assert "Fix: the top module is torch's own nn.Sequential" in f["message"]
    assert "graph break inside a loop" not in f["message"]
    assert len(f["evidence"]["dynamo_skips"]) == 2


def test_finding_without_a_recorded_reason_does_not_guess(tmp_path):
    f = next(f for f in as_dicts(load_run(_with_skips(tmp_path / "n", None))[1].findings)
             if f["code"] == "compile_skipped")
    assert "graph break inside a loop" not in f["message"] and "reason was not recorded" in f["message"]


@pytest.mark.slow
@pytest.mark.parametrize("factory, skipped", [("sequential", True)])
def test_real_ddp_sequential_run_records_the_skip(tmp_path, factory, skipped):
    """A real 1-rank gloo run under --dynamo aot_eager (~25 s): DDP(nn.Sequential) runs eagerly and run.json
    records why. (``wrapped``, the same layers in a module of one's own, compiles and records no skip:
    measured, 1 graph, dynamo_skips []; left out of the suite for time, benchmarks/gpu/dynamo_skips_check.sh runs both.)"""
    out = tmp_path / factory
    cmd = [sys.executable, "-m", "tracekit", "profile", "--out", str(out), "--device", "cpu", "--nproc", "1",
           "--model", f"tests.workloads.sequential:{factory}", "--dynamo", "aot_eager", "--batch-size", "8",
           "--warmup", "1", "--steps", "2", "--profile-wait", "0", "--profile-warmup", "0", "--profile-steps", "1",
           "--timeout", "60"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=REPO,
                       env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr[-3000:]
    c = json.loads((out / "run.json").read_text())["compile"]["per_rank"][0]
    if skipped:
        assert c["graph_count"] == 0
        seq = [s for s in c["dynamo_skips"] if s["file"].endswith("torch/nn/modules/container.py")]
        assert seq and seq[0]["function"] == "forward" and "skipfiles" in seq[0]["reason"] and seq[0]["fix"]
        rep = subprocess.run([sys.executable, "-m", "tracekit", "analyze", str(out)], capture_output=True,
                             text=True, timeout=120, cwd=REPO, env={**__import__("os").environ,
                                                                     "PYTHONPATH": str(REPO)})
        assert "compile_skipped" in rep.stdout and "Fix: the top module is torch's own nn.Sequential" in rep.stdout
    else:
        assert c["graph_count"] >= 1 and not c["dynamo_skips"]


def test_profile_summary_says_why_no_graph_ran():
    from tracekit.cli.profile import format_summary

    skips = dynamo_skips.skips([SKIP_SEQ])
    man = {"compile": {"per_rank": [{"enabled": True, "backend": "inductor", "optimize_ddp": "ddp_optimizer",
                                     "graph_count": 0, "compile_time_s": 29.107844, "dynamo_skips": skips}]}}
    text = format_summary(man)
    assert "compile 29.1 s" in text and "29.107844" not in text
    assert ("warning: no compiled graph ran: dynamo skipped forward (torch/nn/modules/container.py): frame is in "
            "the Dynamo skipfiles list; fix: the top module is torch's own nn.Sequential") in text
