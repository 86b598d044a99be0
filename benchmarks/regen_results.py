"""Recompute committed replay result files with the current model, from the traces they name.

``benchmarks/bench_whatif.py`` writes each result file once; when the replay's model changes, the files
whose traces are committed under ``sample_traces/`` can be recomputed so the figures quoted from them
(``tracekit.replay.trust``, ``tracekit.replay.validation``, docs/whatif.md) describe the model that ships.
The kind of each file is read from its rows: baseline rows (``run``), paired graph-break rows (``variant``
with ``rounds``), paired DDP variant rows (``variant`` ``BASELINE:OPTION=VALUE`` with ``rounds``: every variant of
each baseline's ``paired.jsonl``), or scenario rows (``variant``/``changes``, each ``baseline`` row followed by its
variants). A file naming a run that is not committed is left as it is (and listed).

Usage::

    python benchmarks/regen_results.py benchmarks/results/whatif_h100_whatif.jsonl ...
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_whatif  # noqa: E402
import tracekit  # noqa: E402


def recompute(rows: list[dict]) -> list[dict] | None:
    """The rows recomputed, or None when a run they name is not committed."""
    runs = [r.get("run") or r.get("variant") for r in rows]
    if "rounds" in rows[0] and ":" in str(runs[0]):  # paired DDP variants: "BASELINE:OPTION=VALUE" rows
        bases = list(dict.fromkeys(str(p).split(":", 1)[0] for p in runs))
        if any(not (REPO / b / "paired.jsonl").exists() for b in bases):
            return None
        return [row for b in bases for row in bench_whatif.paired_variant_rows(REPO / b)]
    if "changes" in rows[0] and "rounds" not in rows[0]:
        return _scenarios(rows)
    if any(not (REPO / str(p) / "run.json").exists() for p in runs):
        return None
    if "run" in rows[0]:
        return [bench_whatif.measure(REPO / r["run"]) for r in rows]
    if "rounds" in rows[0]:
        return bench_whatif.paired_rows([REPO / r["variant"] for r in rows])
    return None


def _scenarios(rows: list[dict]) -> list[dict] | None:
    """Scenario rows recomputed: each ``baseline`` row followed by its variants. The prediction needs only the
    baseline's traces; a variant whose run is not committed (``... (traces not kept)``) keeps its measured step
    from the row, and its errors and changes are recomputed against the new prediction. None when a baseline
    is not committed."""
    out: list[dict] = []
    groups: list[tuple[dict, list[dict]]] = []
    for r in rows:
        if r["changes"] == "baseline":
            groups.append((r, []))
        else:
            groups[-1][1].append(r)
    if any(not (REPO / b["variant"] / "run.json").exists() for b, _ in groups):
        return None
    for base, variants in groups:
        kept = [v for v in variants if not (REPO / v["variant"] / "run.json").exists()]
        new = bench_whatif.scenario_rows(REPO / base["variant"], [f"{REPO / v['variant']}:{v['changes']}"
                                                                  for v in variants if v not in kept])
        by_key = {(r["variant"], r["changes"]): r for r in new[1:]}
        out.append(new[0])
        for v in variants:
            out.append(by_key[(v["variant"], v["changes"])] if v not in kept else _kept(v, base["variant"], new[0]))
    return out


def _kept(row: dict, baseline: str, base: dict) -> dict:
    """A variant row whose run is not committed: predicted again from ``baseline``, measured step kept."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tracekit.whatif(REPO / baseline, **bench_whatif._options(row["changes"]))
    pred, meas = r.scenarios[0]["predicted_step_us"] / 1e3, row["measured_ms"]
    b_pred, b_meas = base["predicted_ms"], base["measured_ms"]
    return {**row, "predicted_ms": pred, "error_pct": 100 * (pred / meas - 1) if meas else None,
            "predicted_delta_pct": 100 * (pred / b_pred - 1),
            "measured_delta_pct": 100 * (meas / b_meas - 1) if meas and b_meas else None}


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
