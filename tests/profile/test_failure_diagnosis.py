"""Naming the rank that stopped first: pure logic, progress files, flight-recorder dumps read with torch's analyser."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from tracekit.profile import heartbeat
from tracekit.profile.diagnose import RankFacts, collect_facts, diagnose, innermost_frame, position, where

T0 = 1_700_000_000.0


def _p(step: int | None, phase: str, t: float, stage: str | None = "timed") -> dict:
    return {"rank": 0, "stage": stage if step is not None else None, "step": step, "phase": phase, "t_unix": t}


TIMEOUT = "DistBackendError: [gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation"


def test_stopped_rank_is_named_not_the_one_that_timed_out() -> None:
    # rank 1 stopped (SIGSTOP) in step 7 backward; rank 0 entered the same phase and timed out 21 s later
    facts = [RankFacts(0, progress=_p(7, "backward", T0 + 0.01), error=TIMEOUT, error_unix=T0 + 21, exit_code=1,
                       exit_unix=T0 + 21),
             RankFacts(1, progress=_p(7, "backward", T0), exit_code=-9, exit_signal="SIGKILL", exit_unix=T0 + 51)]
    f = diagnose(facts, detected_unix=T0 + 52)
    assert [c["rank"] for c in f.culprits] == [1] and f.culprits[0]["how"] == "stopped responding"
    assert f.culprits[0]["before_failure_s"] == pytest.approx(21.0)
    assert f.reference == "the first timeout (rank 0)"
    assert [(v["rank"], v["how"]) for v in f.victims] == [(0, "timed out")]
    assert f.summary.startswith("rank 1 stopped responding in step 7 (timed) backward, 21.0 s before the first "
                                "timeout (rank 0); rank 0 timed out in step 7 (timed) backward waiting for it")


def test_killed_first_vs_killed_by_the_agent() -> None:
    # SIGKILL 1 s before anyone else failed: the culprit, even though rank 0 has an error file too
    facts = [RankFacts(0, progress=_p(7, "backward", T0), error="RuntimeError: Connection closed by peer [::1]:1234",
                       error_unix=T0 + 1.5, exit_code=1, exit_unix=T0 + 2),
             RankFacts(1, progress=_p(7, "backward", T0), exit_code=-9, exit_signal="SIGKILL", exit_unix=T0 + 1)]
    f = diagnose(facts, detected_unix=T0 + 3)
    assert f.culprits[0]["rank"] == 1 and f.culprits[0]["how"] == "killed"
    assert f.victims[0]["how"] == "lost its connection"
    assert "rank 1 was killed by SIGKILL in step 7 (timed) backward" in f.summary


def test_own_error_beats_everything() -> None:
    facts = [RankFacts(0, progress=_p(3, "backward", T0), answered_sigterm=True, waiting_in="training.py:99 in step",
                       exit_code=-15, exit_signal="SIGTERM"),
             RankFacts(1, progress=_p(3, "forward", T0), error="RuntimeError: CUDA out of memory", error_unix=T0 + 1)]
    f = diagnose(facts, detected_unix=T0 + 2)
    assert f.culprits[0]["rank"] == 1 and f.culprits[0]["how"] == "raised"
    assert f.victims[0]["how"] == "was stopped by the launcher"
    assert f.summary.startswith("rank 1 failed in step 3 (timed) forward: RuntimeError: CUDA out of memory")


def test_alive_but_behind() -> None:
    # rank 1 answered SIGTERM (alive) but is still in the profiler export while rank 0 waits in the gather
    facts = [RankFacts(0, progress=_p(11, "manifest gather", T0 + 0.5, stage=None), error=TIMEOUT,
                       error_unix=T0 + 20.5),
             RankFacts(1, progress=_p(11, "profiler export", T0), answered_sigterm=True,
                       waiting_in="harness.py:80 in _on_trace_ready", exit_code=-15, exit_signal="SIGTERM")]
    f = diagnose(facts, detected_unix=T0 + 21)
    assert f.culprits[0]["rank"] == 1 and f.culprits[0]["how"] == "behind"
    assert f.culprits[0]["before_failure_s"] == pytest.approx(20.5)
    assert "alive in harness.py:80 in _on_trace_ready" in f.summary


def test_never_reached_rendezvous_and_no_progress_at_all() -> None:
    facts = [RankFacts(0, progress=_p(None, "rendezvous", T0), error="DistStoreError: wait timeout after 20000ms",
                       error_unix=T0 + 20),
             RankFacts(1, progress=None, answered_sigterm=True, exit_signal="SIGTERM", exit_code=-15)]
    f = diagnose(facts, detected_unix=T0 + 21)
    assert [c["rank"] for c in f.culprits] == [1] and f.culprits[0]["where"] == "no progress recorded"
    assert f.victims[0]["where"] == "rendezvous"


def test_undecidable_is_said_not_guessed() -> None:
    same = _p(5, "backward", T0)
    facts = [RankFacts(r, progress=dict(same, rank=r), error=TIMEOUT, error_unix=T0 + 20) for r in range(4)]
    f = diagnose(facts, detected_unix=T0 + 21)
    assert f.culprits == []
    assert "could not tell which rank stopped first" in f.summary
    assert f.summary.endswith("; ranks 0, 1, 2, 3 timed out in step 5 (timed) backward")


def test_positions_order_phases_within_and_across_steps() -> None:
    assert position(None) < position(_p(None, "init", T0)) < position(_p(None, "rendezvous", T0))
    assert position(_p(3, "optimizer", T0)) < position(_p(4, "forward", T0)) < position(_p(4, "backward", T0))
    assert position(_p(11, "profiler export", T0)) < position(_p(11, "manifest gather", T0, stage=None))
    assert where(_p(11, "manifest gather", T0, stage=None)) == "manifest gather (after step 11)"
    assert where({"unreadable": "x: empty"}) == "progress unreadable (x: empty)"


def test_heartbeat_file_record_and_fault_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(heartbeat.FAULT_ENV, "rank=3,phase=backward,step=2,action=raise")
    hb = heartbeat.Heartbeat(tmp_path, 3)
    hb.stage, hb.step = "warmup", 1
    hb.mark("forward")
    hb.mark("backward")  # step 1: the fault is for step 2
    assert (tmp_path / "rank3.progress").stat().st_size == heartbeat.RECORD_BYTES
    hb.step = 2
    with pytest.raises(RuntimeError, match="test fault"):
        hb.mark("backward")
    hb.close(clean=True)
    rec = heartbeat.read_progress(tmp_path)[3]
    assert (rec["stage"], rec["step"], rec["phase"], rec["updates"], rec["pid"]) == ("warmup", 2, "backward", 3,
                                                                                  os.getpid())
    assert heartbeat.parse_fault("rank=1,phase=init,action=hang", 0) is None  # another rank's fault
    with pytest.raises(ValueError, match="TRACEKIT_TEST_FAULT"):
        heartbeat.parse_fault("rank=1,action=nap,phase=x", 1)
    (tmp_path / "rank4.progress").write_bytes(b" " * 16)  # killed before its first update
    assert "unreadable" in heartbeat.read_progress(tmp_path)[4]


def test_module_marks_are_noops_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the progress file is closed (or was never opened: ``start(None, ...)``), the module's marks write
    nothing: the closed file keeps its last record and no new file appears."""
    monkeypatch.chdir(tmp_path)
    assert heartbeat.start(tmp_path, 0) is not None
    heartbeat.set_stage("timed")
    heartbeat.begin_step()
    heartbeat.mark("forward")
    heartbeat.stop(clean=True)
    closed = (tmp_path / heartbeat.progress_filename(0)).read_bytes()
    assert heartbeat.start(None, 0) is None
    heartbeat.set_stage("warmup")
    heartbeat.begin_step()
    heartbeat.mark("backward")
    assert (tmp_path / heartbeat.progress_filename(0)).read_bytes() == closed
    assert sorted(p.name for p in tmp_path.iterdir()) == [heartbeat.progress_filename(0)]
    rec = heartbeat.read_progress(tmp_path)[0]
    assert (rec["stage"], rec["step"], rec["phase"]) == ("timed", 1, "forward")


def test_innermost_frame_of_the_main_thread() -> None:
    dump = ("Thread 0x00007f01 (most recent call first):\n"
            '  File "/x/threading.py", line 320 in wait\n'
            '  File "/x/threading.py", line 1002 in _bootstrap\n\n'
            "Current thread 0x00007f02 (most recent call first):\n"
            '  File "/x/tracekit/profile/harness.py", line 80 in _on_trace_ready\n'
            '  File "/x/torch/profiler/profiler.py", line 700 in step\n'
            '  File "<frozen runpy>", line 88 in _run_code\n'
            '  File "/x/tracekit/profile/worker.py", line 170 in <module>\n')
    assert innermost_frame(dump) == "harness.py:80 in _on_trace_ready"
    assert innermost_frame("") is None


def test_collect_facts_reads_the_run_folder(tmp_path: Path) -> None:
    class PF:  # the fields of torch's ProcessFailure that are read
        exitcode, timestamp = -9, int(T0)

        def signal_name(self) -> str:
            return "SIGKILL"

    (tmp_path / "rank0.error.txt").write_text("Traceback...\nDistBackendError: Timed out waiting 5000ms\n")
    (tmp_path / "rank0.progress").write_text(json.dumps(_p(2, "backward", T0)).ljust(heartbeat.RECORD_BYTES))
    (tmp_path / "rank1.stacks.txt").write_text("")  # opened for faulthandler, never written: did not answer
    fr = {"last_entered": {0: {"seq": 9, "op": "gloo:all_reduce", "group": "0:default_pg"}}}
    facts = collect_facts(tmp_path, 2, {1: PF()}, fr)
    assert facts[0].error == "DistBackendError: Timed out waiting 5000ms" and facts[0].comm_error
    assert facts[0].progress["phase"] == "backward" and facts[0].last_collective["seq"] == 9
    assert (facts[1].exit_signal, facts[1].answered_sigterm, facts[1].progress) == ("SIGKILL", False, None)


def _entry(seq: int, rank_sizes: list[int], t_ns: int) -> dict:
    return {"frames": [], "record_id": seq - 1, "pg_id": 0, "process_group": ("0", "default_pg"),
            "thread_name": "python", "thread_id": "1", "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
            "profiling_name": "gloo:all_reduce", "time_created_ns": t_ns, "input_sizes": [rank_sizes],
            "input_dtypes": ["Float"], "output_sizes": [rank_sizes], "output_dtypes": ["Float"], "state": "scheduled",
            "time_discovered_started_ns": None, "time_discovered_completed_ns": None, "retired": True,
            "timeout_ms": 5000, "is_p2p": False}


def _dump(path: Path, rank: int, seqs: int) -> None:
    data = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
            "pg_status": {}, "entries": [_entry(s, [1000], int(T0 * 1e9) + s) for s in range(1, seqs + 1)]}
    path.write_bytes(pickle.dumps(data))


def test_flight_recorder_summary_uses_torchs_analyser(tmp_path: Path) -> None:
    pytest.importorskip("torch.distributed.flight_recorder.components.builder")
    from tracekit.profile import flight_recorder

    fr = tmp_path / flight_recorder.FR_DIR
    fr.mkdir()
    _dump(fr / "rank_0", 0, 4)  # rank 0 entered all_reduce #4 ...
    _dump(fr / "rank_1", 1, 3)  # ... which rank 1 never joined
    s = flight_recorder.summarize(tmp_path, 2)
    assert s["unavailable"] is None and s["dumps"] == [0, 1] and s["missing_dumps"] == []
    assert [(r, e["seq"]) for r, e in sorted(s["last_entered"].items())] == [(0, 4), (1, 3)]
    assert s["not_joined"] == [{"seq": 4, "op": "gloo:all_reduce", "group": "0:default_pg",
                                "input_sizes": [[1000]], "missing_ranks": [1]}]
    (fr / "rank_1").unlink()  # a stopped rank leaves no dump: torch's analyser cannot match, we say whose is missing
    s = flight_recorder.summarize(tmp_path, 2)
    assert s["dumps"] == [0] and s["missing_dumps"] == [1] and s["not_joined"] == []
    assert flight_recorder.summarize(tmp_path / "nothing", 2)["unavailable"] == "no rank wrote a flight-recorder dump"


def test_flight_recorder_env_defaults_keep_the_users_values(tmp_path: Path) -> None:
    from tracekit.profile import flight_recorder

    env = {"TORCH_NCCL_TRACE_BUFFER_SIZE": "50"}
    flight_recorder.apply_env(tmp_path, env)
    assert env["TORCH_FR_BUFFER_SIZE"] == "50" and env["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "1"
    assert env["TORCH_NCCL_TRACE_BUFFER_SIZE"] == "50"  # the user's own value stays; we never add the old name on 2.7+
    assert env["TORCH_FR_DUMP_TEMP_FILE"] == str(tmp_path / "fr" / "rank_")
    env = {}
    flight_recorder.apply_env(None, env)
    assert env["TORCH_FR_BUFFER_SIZE"] == str(flight_recorder.BUFFER_ENTRIES) and "TORCH_FR_DUMP_TEMP_FILE" not in env


def _torchrun_folder(root: Path) -> Path:
    """What a torchrun job leaves when rank 1 stops in step 7 backward and rank 0 times out 20 s later."""
    root.mkdir()
    for r, t in ((0, T0 + 0.01), (1, T0)):
        (root / f"rank{r}.progress").write_text(json.dumps(dict(_p(7, "backward", t), rank=r)).ljust(512))
        (root / f"rank{r}.stacks.txt").write_text("")
    err = root / "rank0.error.txt"
    err.write_text(f"Traceback ...\n{TIMEOUT}\n")
    os.utime(err, (T0 + 20, T0 + 20))
    return root


def test_diagnose_folder_of_a_torchrun_job(tmp_path: Path) -> None:
    from tracekit.profile.failed_run import diagnose_folder

    f = diagnose_folder(_torchrun_folder(tmp_path / "run"))
    assert [(c["rank"], c["how"], c["where"]) for c in f["culprits"]] == [(1, "stopped responding",
                                                                           "step 7 (timed) backward")]
    assert f["culprits"][0]["before_failure_s"] == pytest.approx(20.0)
    assert f["flight_recorder"]["unavailable"] == "no rank wrote a flight-recorder dump"
    assert diagnose_folder(tmp_path / "run", world_size=3)["culprits"][0]["rank"] == 1  # rank 2: no files at all
    assert [c["where"] for c in diagnose_folder(tmp_path / "run", world_size=3)["culprits"]] == [
        "step 7 (timed) backward", "no progress recorded"]


def test_diagnose_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tracekit.cli import main

    run = _torchrun_folder(tmp_path / "run")
    r = CliRunner().invoke(main, ["diagnose", str(run)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Run failed\n==========\nrank 1 stopped responding in step 7 (timed) backward, "
                               "20.0 s before the first timeout (rank 0); rank 0 timed out")
    r = CliRunner().invoke(main, ["diagnose", str(run), "--format", "json"])
    assert json.loads(r.output)["culprits"][0]["rank"] == 1
    r = CliRunner().invoke(main, ["diagnose", str(tmp_path)])
    assert r.exit_code == 2 and "not the folder of a tracekit profile run" in r.output


def test_only_the_current_buffer_variable_is_set_on_new_torch() -> None:
    torch = pytest.importorskip("torch")
    from tracekit.profile import flight_recorder

    env: dict[str, str] = {}
    flight_recorder.apply_env(None, env)
    new = tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 7)
    assert ("TORCH_NCCL_TRACE_BUFFER_SIZE" in env) is not new  # torch >= 2.7 warns about the old name


def test_a_crash_after_every_rank_finished_is_not_a_failed_run(tmp_path: Path) -> None:
    from tracekit.profile.launcher import _finished_anyway
    from tracekit.traces.manifest import write_manifest

    for r in (0, 1):
        (tmp_path / f"rank{r}.progress").write_text(json.dumps(_p(11, "done", T0, stage=None)).ljust(512))
    assert not _finished_anyway(tmp_path, 2)  # no run.json
    write_manifest(tmp_path, {"status": "ok"})
    assert _finished_anyway(tmp_path, 2)
    (tmp_path / "rank1.progress").write_text(json.dumps(_p(11, "teardown", T0, stage=None)).ljust(512))
    assert not _finished_anyway(tmp_path, 2)


def test_diagnose_a_run_that_succeeded_is_headed_by_what_it_found(tmp_path: Path) -> None:
    """Every rank reached 'done': the report says no rank failed, under that heading, not "Run failed"."""
    from click.testing import CliRunner

    from tracekit.cli import main

    run = tmp_path / "run"
    run.mkdir()
    for r in (0, 1):
        (run / f"rank{r}.progress").write_text(json.dumps(dict(_p(9, "done", T0), rank=r)).ljust(512))
    r = CliRunner().invoke(main, ["diagnose", str(run)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("No rank failed\n==============\nno rank failed: all 2 ranks reached 'done'")
    assert "Run failed" not in r.output
