"""Real failing 2-rank gloo runs: the launcher names the rank that stopped, every time, and leaves no process behind.

The five runs start together (one module fixture) so their waits overlap: the slowest is the
SIGSTOP case (--timeout, then the elastic agent's 30 s SIGTERM grace before its SIGKILL).
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.profile.test_run import REPO, SMALL, _env, _orphans

pytestmark = pytest.mark.slow
TIMEOUT_S = "12"
#: case -> (TRACEKIT_TEST_FAULT for rank 1, how the culprit is named, the start of the error line)
CASES = {
    "stop": ("rank=1,phase=backward,step=4,action=stop", "stopped responding",
             "rank 1 stopped responding in step 4 (timed) backward, "),
    "kill": ("rank=1,phase=backward,step=4,action=kill", "killed",
             "rank 1 was killed by SIGKILL in step 4 (timed) backward; "),
    "raise": ("rank=1,phase=forward,step=4,action=raise", "raised",
              "rank 1 failed in step 4 (timed) forward: RuntimeError: tracekit test fault"),
    "rendezvous": ("rank=1,phase=init,action=hang", "behind", "rank 1 stopped making progress in init, "),
    # 2 warm-up + 3 timed + 3 bucket-timing steps, then the window's 1 warm-up + 2 recorded: step 11
    "export": ("rank=1,phase=profiler export,action=hang", "behind",
               "rank 1 stopped making progress in step 11 (profiled) profiler export, "),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, subprocess.CompletedProcess, float]]:
    root = tmp_path_factory.mktemp("failures")
    small = [a if a != "60" else TIMEOUT_S for a in SMALL]  # SMALL ends with --timeout 60
    procs = {}
    for name, (fault, _, _) in CASES.items():
        out = root / name
        cmd = [sys.executable, "-m", "tracekit", "profile", "--out", str(out), "--device", "cpu", "--nproc", "2",
               *small]
        procs[name] = (out, time.monotonic(),
                       subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=_env(TRACEKIT_TEST_FAULT=fault), cwd=REPO))
    done = {}
    for name, (out, t0, p) in procs.items():
        stdout, stderr = p.communicate(timeout=240)
        done[name] = (out, subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr), time.monotonic() - t0)
    return done


def _error_line(r: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, r.stderr[-3000:]
    return lines[0]


@pytest.mark.parametrize("case", list(CASES))
def test_the_stopped_rank_is_named(runs: dict, case: str) -> None:
    out, r, _ = runs[case]
    _, how, start = CASES[case]
    assert r.returncode == 1, r.stderr[-3000:]
    line = _error_line(r)
    assert line.startswith(f"error: {start}"), line
    m = json.loads((out / "run.json").read_text())
    assert m["status"] == "failed"
    f = m["failure"]
    assert [(c["rank"], c["how"]) for c in f["culprits"]] == [(1, how)], f["summary"]
    assert [v["rank"] for v in f["victims"]] == [0]
    assert f["summary"] in line
    assert _orphans(str(out)) == []


def test_stopped_rank_timing_and_flight_recorder(runs: dict) -> None:
    out, r, _ = runs["stop"]
    f = json.loads((out / "run.json").read_text())["failure"]
    c, v = f["culprits"][0], f["victims"][0]
    # rank 1 stopped on entering backward; rank 0 timed out --timeout seconds after it entered the same phase
    assert c["before_failure_s"] == pytest.approx(float(TIMEOUT_S), abs=3.0)
    assert v["how"] == "timed out" and f["reference"] == "the first timeout (rank 0)"
    fr = f["flight_recorder"]
    # gloo records into torch's flight recorder; only the rank that raised could dump it
    assert fr["dumps"] == [0] and fr["missing_dumps"] == [1] and fr["unavailable"] is None
    last = v["last_collective"]
    assert last["op"] == "gloo:all_reduce" and last["group"] == "0:default_pg" and last["seq"] >= 1
    dump = pickle.loads((out / "fr" / "rank_0").read_bytes())
    assert dump["pg_config"]["0"]["ranks"] == "[0, 1]"  # filled in: gloo leaves it empty in torch 2.13
    assert "last collective entered: gloo:all_reduce" in _error_line(r)


def test_alive_ranks_answer_sigterm_with_their_stack(runs: dict) -> None:
    out, _, _ = runs["export"]
    f = json.loads((out / "run.json").read_text())["failure"]
    assert "heartbeat.py" in f["culprits"][0]["waiting_in"]  # the test hang sits in the fault hook
    assert f["victims"][0]["where"].startswith("manifest gather")
    assert (out / "rank0.trace.json.gz").exists()  # the surviving rank's trace is kept
    assert json.loads((out / "run.json").read_text())["traces"] == [
        {"rank": 0, "file": "rank0.trace.json.gz", "bytes": (out / "rank0.trace.json.gz").stat().st_size}]


def test_analyze_a_failed_run_shows_the_failure_first(runs: dict) -> None:
    out, _, _ = runs["export"]
    cmd = [sys.executable, "-m", "tracekit", "analyze", str(out)]
    html = out.parent / "export.html"
    r = subprocess.run([*cmd, "--html", str(html)], capture_output=True, text=True, env=_env(), cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "note: this run FAILED: rank 1 stopped making progress" in html.read_text()
    assert r.stdout.startswith("Run failed\n==========\nrank 1 stopped making progress in step ")
    assert r.stdout.index("Run failed: ranks") < r.stdout.index("Run summary")
    assert "this run failed (rank 1 stopped" in r.stderr  # the surviving trace is analysed, with a warning
    r = subprocess.run([*cmd, "--format", "json"], capture_output=True, text=True, env=_env(), cwd=REPO, timeout=120)
    assert json.loads(r.stdout)["meta"]["failure"]["culprits"][0]["rank"] == 1
    out, _, _ = runs["stop"]  # no trace at all: the failure is the answer, exit code 1, no traceback
    r = subprocess.run([sys.executable, "-m", "tracekit", "analyze", str(out)], capture_output=True, text=True,
                       env=_env(), cwd=REPO, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: {out}: the run failed before any rank wrote a trace: rank 1 stopped responding")


def test_flight_recorder_names_the_collectives_the_culprit_never_joined(runs: dict) -> None:
    out, _, _ = runs["raise"]  # both ranks raised, so both dumped: torch's analyser can match them
    fr = json.loads((out / "run.json").read_text())["failure"]["flight_recorder"]
    assert fr["dumps"] == [0, 1] and fr["unavailable"] is None
    last = {int(r): e["seq"] for r, e in fr["last_entered"].items()}
    assert last[1] < last[0]  # rank 1 raised in forward, rank 0 went on into backward's allreduces
    assert fr["not_joined"] and all(c["missing_ranks"] == [1] and c["op"] == "gloo:all_reduce"
                                    for c in fr["not_joined"])
    assert fr["not_joined"][-1]["seq"] == last[0]
