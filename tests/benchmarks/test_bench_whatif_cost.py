"""benchmarks/bench_whatif_cost.py on a tiny input: it times whatif in fresh interpreters and compares two
checkouts' JSON (here the same one twice, so they must agree)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _bench():
    sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_whatif_cost", REPO / "benchmarks" / "bench_whatif_cost.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cost_benchmark_times_both_checkouts_and_compares_their_json(tmp_path, capsys):
    bench = _bench()
    out = tmp_path / "cost.json"
    assert bench.main(["--shape", "ranks", "--ranks", "4", "--repeat", "1", "--against", str(REPO),
                       "--cache-dir", str(tmp_path / "cache"), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    (row,) = doc["rows"]
    assert row["shape"] == "ranks" and row["input"]["ranks"] == 4 and row["same_json"] is True
    assert set(row["runs"]) == {"this", "against"}
    assert all(r["wall_s"] > 0 and r["maxrss_mb"] > 0 for r in row["runs"].values())
    assert doc["machine"]["cpus"] >= 1
    assert not (tmp_path / "cache" / "many_ranks_4x40kb").exists()  # not kept without --keep
    assert "same JSON from both checkouts: True" in capsys.readouterr().out


def test_cost_benchmark_leaves_an_input_it_found_cached(tmp_path):
    """Inputs another benchmark kept (``--keep``) are read, never removed: only what this run generated is."""
    bench = _bench()
    cache = tmp_path / "cache"
    assert bench.main(["--shape", "ranks", "--ranks", "4", "--repeat", "1", "--cache-dir", str(cache), "--keep",
                       "--json", str(tmp_path / "a.json")]) == 0
    kept = cache / "many_ranks_4x40kb"
    assert (kept / "bench_info.txt").exists()
    assert bench.main(["--shape", "ranks", "--ranks", "4", "--repeat", "1", "--cache-dir", str(cache),
                       "--json", str(tmp_path / "b.json")]) == 0
    assert (kept / "bench_info.txt").exists()
