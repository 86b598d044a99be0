#!/usr/bin/env python
"""The replay's step phase by phase: the window's and the predicted forward, backward and optimizer of each
rank, next to the unprofiled phases timed by ``benchmarks/gpu/phase_times.py`` (issue 21's multi-rank lean).

For every ``tracekit.forward`` / ``tracekit.backward`` / ``tracekit.optimizer`` range the trainer records (one per
phase and step), its length in the window (the trace) and in the replay's prediction (``tracekit whatif``'s
baseline: from the predicted start of the CPU segment the range opens to the predicted end of the one it closes,
on its thread), means over the profiled steps, ms. With ``--phases PHASES_JSON`` (``benchmarks/gpu/phase_times.py``'s
output from the same host), the measured unprofiled medians of the variant with the run's world size are printed
beside them: ``forward``, ``backward`` (``loss.backward()`` returned), ``optimizer`` (``step()`` returned), and the
``drain`` after it. The measurements are never an input to the prediction.

Usage::

    python benchmarks/phase_compare.py RUN [--phases phases.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import warnings
from pathlib import Path

import numpy as np

from tracekit.replay import costs as cost_model
from tracekit.replay import simulate
from tracekit.runner.options import RunOptions
from tracekit.runner.pipeline import load_and_analyze
from tracekit.traces import schema

PHASES = ("forward", "backward", "optimizer")


def predicted_phases(run: Path) -> dict[int, dict[str, tuple[float, float]]]:
    """Per rank and phase: (window ms, predicted ms), means over the profiled steps."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traces, res = load_and_analyze([str(run)], RunOptions.of(keep_events=True))
    g = simulate.build(traces, res.tables.get("collectives"), cost_model.ProfilerCosts.of(traces.manifest))
    start, end = simulate.evaluate(g)
    out: dict[int, dict[str, tuple[float, float]]] = {}
    for rt in traces:
        ev = rt.events
        threads = g.ranks[rt.rank]["threads"]
        per: dict[str, list[tuple[float, float]]] = {}
        for phase in PHASES:
            rows = ev[(ev["kind"] == schema.ANNOTATION) & (ev["name"] == f"tracekit.{phase}")]
            for ts, te, tid in zip(rows["ts_ns"].tolist(), rows["end_ns"].tolist(), rows["tid"].tolist()):
                th = threads.get(tid)
                a = th.seg_starting_at(ts) if th is not None else None
                b = th.seg_ending_at(te) if th is not None else None
                if a is not None and b is not None:
                    per.setdefault(phase, []).append(((te - ts) / 1e6, (end[b] - start[a]) / 1e6))
        out[rt.rank] = {p: (float(np.mean([w for w, _ in v])), float(np.mean([q for _, q in v])))
                        for p, v in per.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    from tabulate import tabulate

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--phases", type=Path, help="benchmarks/gpu/phase_times.py's JSON from the same host")
    args = ap.parse_args(argv)
    pred = predicted_phases(args.run)
    measured: dict[str, dict[str, float]] = {}
    if args.phases:
        ph = json.loads(args.phases.read_text())
        ws = len(pred)
        v = next((v for v in ph["variants"] if v["options"]["world_size"] == ws), None)
        measured = v["per_rank_ms"] if v else {}
    rows = []
    for rank, phases in sorted(pred.items()):
        m = measured.get(str(rank), {})
        for p in PHASES:
            w, q = phases.get(p, (float("nan"), float("nan")))
            meas = m.get(p)
            rows.append({"rank": rank, "phase": p, "window_ms": w, "predicted_ms": q, "measured_ms": meas,
                         "error_pct": 100 * (q / meas - 1) if meas else None})
        if m:
            rows.append({"rank": rank, "phase": "drain", "measured_ms": m.get("drain")})
            rows.append({"rank": rank, "phase": "step", "measured_ms": m.get("step"),
                         "predicted_ms": statistics.fsum(phases.get(p, (0, 0))[1] for p in PHASES)})
    print(tabulate(rows, headers="keys", floatfmt=".2f", missingval="-"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
