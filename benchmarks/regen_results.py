"""Recompute committed replay result files with the current model, from the traces they name.

``benchmarks/bench_whatif.py`` writes each result file once; when the replay's model changes, the files
whose traces are committed under ``sample_traces/`` can be recomputed so the figures quoted from them
(``tracekit.replay.trust``, ``tracekit.replay.validation``, docs/whatif.md) describe the model that ships.
The kind of each file is read from its rows: baseline rows (``run``), paired graph-break rows (``variant``
with ``rounds``), or scenario rows (``variant``/``changes``, each ``baseline`` row followed by its
variants). A file naming a run that is not committed is left as it is (and listed).

Usage::

    python benchmarks/regen_results.py benchmarks/results/whatif_2026-11-25_h100_whatif.jsonl ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_whatif  # noqa: E402


def recompute(rows: list[dict]) -> list[dict] | None:
    """The rows recomputed, or None when a run they name is not committed."""
    runs = [r.get("run") or r.get("variant") for r in rows]
    if any(not (REPO / str(p) / "run.json").exists() for p in runs):
        return None
    if "run" in rows[0]:
        return [bench_whatif.measure(REPO / r["run"]) for r in rows]
    if "rounds" in rows[0]:
        return bench_whatif.paired_rows([REPO / r["variant"] for r in rows])
    out: list[dict] = []
    groups: list[tuple[str, list[str]]] = []
    for r in rows:
        if r["changes"] == "baseline":
            groups.append((r["variant"], []))
        else:
            groups[-1][1].append(f"{REPO / r['variant']}:{r['changes']}")
    for base, variants in groups:
        out += bench_whatif.scenario_rows(REPO / base, variants)
    return out


def main(argv: list[str]) -> int:
    for f in map(Path, argv):
        rows = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        new = recompute(rows)
        if new is None:
            print(f"{f}: left as it is (its traces are not committed)")
            continue
        f.write_text("".join(json.dumps(r) + "\n" for r in new))
        print(f"{f}: {len(new)} rows recomputed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
