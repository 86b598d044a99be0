#!/usr/bin/env python
"""How well does ``tracekit whatif`` predict the step of a loop that never synchronizes?

Reads the folders ``benchmarks/gpu/unsynced_steps.py`` writes (``DIR/<name>/rank0.trace.json`` and
``truth.json``): a plain training loop profiled with ``torch.profiler``, no run.json, so the
prediction uses the documented default profiler cost. The truth is the loop's step *period* timed
without the profiler (``period_ms_before``; ``period_ms_after``, timed after the profiling, says how
far it moved); it is never an input to the prediction. Prints one row per run: its ranks, the window
(``window_ms``, the replay's recorded step), the prediction, their errors against the period,
the GPU idle share of the prediction and of the window, and the prediction's regime; writes the rows
as JSON lines with ``--out``.

Example::

    python benchmarks/bench_unsynced.py /tmp/unsynced --out benchmarks/results/unsynced.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings
from pathlib import Path

import tracekit


def _name(run: Path) -> str:
    """The run's path from the repository root; a run elsewhere: its set and name, its trace not committed."""
    try:
        return str(run.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return f"{run.parent.name}/{run.name} (trace not kept)"


def row(run: Path) -> dict:
    truth = json.loads((run / "truth.json").read_text())
    with warnings.catch_warnings():  # the folder's truth.json is ignored with a warning; no rank in a 1-rank trace
        warnings.simplefilter("ignore")
        b = tracekit.whatif(run).baseline
    period = truth["period_ms_before"]
    win, pred = b["profiled_step_us"] / 1e3, b["predicted_step_us"] / 1e3
    reg = b.get("regime") or {}
    return {"run": _name(run), "gpu": truth.get("gpu"), "ranks": truth.get("world_size", 1), "period_ms": period,
            "period_moved_pct": 100 * (truth["period_ms_after"] / period - 1),
            "window_ms": win, "window_off_pct": 100 * (win / period - 1), "predicted_ms": pred,
            "error_pct": 100 * (pred / period - 1), "predicted_gpu_idle_pct": b.get("predicted_gpu_idle_pct"),
            "window_gpu_idle_pct": b.get("window_gpu_idle_pct"), "regime": reg.get("name")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="folders of benchmarks/gpu/unsynced_steps.py's output")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    runs = sorted(p.parent for d in a.dirs for p in d.glob("*/truth.json"))
    rows = [row(r) for r in runs]
    from tabulate import tabulate

    print(tabulate(rows, headers="keys", floatfmt=".1f", missingval="-"))
    if rows:
        err = [abs(r["error_pct"]) for r in rows]
        win = [abs(r["window_off_pct"]) for r in rows]
        print(f"\nprediction |error| vs the unprofiled period: median {statistics.median(err):.1f} %, max "
              f"{max(err):.1f} % over {len(err)} runs (window: median {statistics.median(win):.1f} %, max "
              f"{max(win):.1f} %)")
    if a.out:
        a.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
