"""benchmarks/results/INDEX.md lists every committed result file, says what it is, and names what uses it
(benchmarks/results_index.py); a file nothing uses, or one the index misses, fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("results_index", ROOT / "benchmarks" / "results_index.py")
results_index = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(results_index)


def test_every_result_file_is_described_and_used() -> None:
    _, problems = results_index.render()
    assert problems == []


def test_the_committed_index_is_current() -> None:
    text, _ = results_index.render()
    assert (ROOT / "benchmarks" / "results" / "INDEX.md").read_text() == text, \
        "stale: python benchmarks/results_index.py --write"
    listed = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}
    assert listed == set(results_index.result_files())


def test_users_come_from_names_patterns_and_evidence_prefixes() -> None:
    # (names spelt in pieces: spelt whole, this file would be one of their users)
    names = ["whatif_scenarios_cpu16_paired_a" + ".jsonl", "whatif_scenarios_cpu16_paired_b" + ".jsonl",
             "nothing_cites_me" + ".json"]
    used = results_index.users(names)
    assert "tracekit/replay/evidence/checks.json" in used[names[0]]  # a source that is a prefix of the name
    assert used[names[2]] == []
    assert results_index._expand("a_{x,y}" + ".json") == ["a_x" + ".json", "a_y" + ".json"]
    assert results_index.describe("whatif_h200x2_layouts_no_traces" + ".jsonl").endswith(
        "2 x H200, the runs' traces are not committed")
    assert results_index.describe("unknown.bin") is None
