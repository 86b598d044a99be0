"""Fit the profiler-cost weights per event kind (tracekit.replay.costs) on one set of runs, check them on another.

The replay charges each recorded event ``calibrated figure x weight[kind]`` (kinds:
:func:`tracekit.replay.costs.event_kinds`). This script loads every run once, then
re-builds and re-evaluates the replay graph for each candidate weight vector; the
prediction's error against run.json's measured unprofiled step is the objective. The
measured step is used HERE ONLY (a benchmark fitting a model on training runs), never by
tracekit itself. Fit on ``--train``, report on ``--test`` (held out: never seen by the fit).

Models (``--model``): ``scale`` (one weight for every kind), ``op-rt`` (operators and Triton
ranges / every runtime call), ``op-launch-rt`` (operators and Triton ranges / runtime calls that
launched GPU work / other runtime calls), ``all4`` (one weight per kind). Objective: mean
|error| over the training runs (``--objective max`` for the largest). Search: a pattern search
(Hooke-Jeeves) from all-ones, weights in [0, 6].

Example::

    python benchmarks/fit_profiler_weights.py --train sample_traces/whatif/h100_whatif/* sample_traces/whatif/h100_whatif_3/* \
        --test sample_traces/whatif/h200_whatif/* --model op-launch-rt
    python benchmarks/fit_profiler_weights.py --test sample_traces/whatif/h200_whatif/* --weights 1,1,1,1   # no fit
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracekit.replay import costs as cost_model  # noqa: E402
from tracekit.replay import figures, simulate  # noqa: E402
from tracekit.runner.options import RunOptions  # noqa: E402
from tracekit.runner.pipeline import load_and_analyze  # noqa: E402
from tracekit.traces.manifest import read_manifest  # noqa: E402

#: free parameters of each model -> the 4 kind weights (op, triton, launch_gpu, runtime)
MODELS = {
    "scale": lambda p: (p[0], p[0], p[0], p[0]),
    "op-rt": lambda p: (p[0], p[0], p[1], p[1]),
    "op-launch-rt": lambda p: (p[0], p[0], p[1], p[2]),
    "all4": lambda p: (p[0], p[1], p[2], p[3]),
}
N_PARAMS = {"scale": 1, "op-rt": 2, "op-launch-rt": 3, "all4": 4}
BOUNDS = (0.0, 6.0)


@dataclass
class Run:
    """One run loaded once: what the replay needs, and the truth (run.json timings) for the objective."""

    name: str
    traces: Any
    coll: Any
    offsets: dict[int, float]
    measured_us: float

    def predict_us(self, weights: tuple[float, ...]) -> float:
        """The replay's predicted step (mean over steps of the slowest rank), µs, with ``weights``."""
        # scale 1: the weights are the whole factor on the calibrated figure (the product's CUDA_SCALE is one)
        costs = cost_model.ProfilerCosts.of(self.traces.manifest, weights=tuple(float(w) for w in weights),
                                            scale=1.0)
        g = simulate.build(self.traces, self.coll, costs, self.offsets)
        start, end = simulate.evaluate(g)
        steps = figures.step_figures(g, start, end, {})
        return float(steps.groupby("step")["step_us"].max().mean())

    def error_pct(self, weights: tuple[float, ...]) -> float:
        return 100.0 * (self.predict_us(weights) / self.measured_us - 1.0)


def load(folder: Path) -> Run | None:
    """A run folder with traces and a measured unprofiled step, loaded; None otherwise."""
    man = read_manifest(folder / "run.json") if (folder / "run.json").exists() else None
    if man is None or man.timings is None or man.timings.overall is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traces, res = load_and_analyze([str(folder)], RunOptions.of(keep_events=True))
    offsets = {int(r): 1000.0 * float(v) for r, v in (res.meta.get("clock_offsets_us") or {}).items()}
    name = str(folder.relative_to(REPO)) if folder.is_relative_to(REPO) else str(folder)
    return Run(name, traces, res.tables.get("collectives"), offsets, man.timings.overall.mean_sec_per_iter * 1e6)


def summary(errors: list[float]) -> dict[str, float]:
    a = [abs(e) for e in errors]
    return {"median_abs_pct": statistics.median(a), "max_abs_pct": max(a), "mean_abs_pct": statistics.fmean(a)}


def objective(runs: list[Run], weights: tuple[float, ...], how: str) -> float:
    s = summary([r.error_pct(weights) for r in runs])
    return s["max_abs_pct"] if how == "max" else s["mean_abs_pct"]


def pattern_search(f: Any, x0: list[float], step: float = 0.5, tol: float = 0.05) -> tuple[list[float], float]:
    """Minimise ``f`` over the box :data:`BOUNDS` by Hooke-Jeeves moves along each axis, halving the step."""
    x, fx = list(x0), f(x0)
    while step >= tol:
        improved = False
        for i in range(len(x)):
            for d in (step, -step):
                y = list(x)
                y[i] = min(BOUNDS[1], max(BOUNDS[0], y[i] + d))
                if y == x:
                    continue
                fy = f(y)
                if fy < fx - 1e-9:
                    x, fx, improved = y, fy, True
                    break
        if not improved:
            step /= 2
    return x, fx


def report(runs: list[Run], weights: tuple[float, ...], label: str) -> dict[str, Any]:
    rows = [{"run": r.name, "error_pct": round(r.error_pct(weights), 2)} for r in runs]
    s = summary([r["error_pct"] for r in rows])
    print(f"{label}: weights {tuple(round(w, 3) for w in weights)} median |error| {s['median_abs_pct']:.1f} %, "
          f"max {s['max_abs_pct']:.1f} %, mean {s['mean_abs_pct']:.1f} % over {len(rows)} runs")
    for r in rows:
        print(f"  {r['run']:<45} {r['error_pct']:+7.1f} %")
    return {"label": label, "weights": list(weights), **s, "runs": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", nargs="*", type=Path, default=[], help="run folders the weights are fitted on")
    ap.add_argument("--test", nargs="*", type=Path, default=[], help="held-out run folders (never fitted on)")
    ap.add_argument("--model", choices=sorted(MODELS), default="op-launch-rt")
    ap.add_argument("--objective", choices=("mean", "max"), default="mean")
    ap.add_argument("--weights", default=None, help="op,triton,launch_gpu,runtime: evaluate these, no fit")
    ap.add_argument("--out", type=Path, default=None, help="append the result as one JSON line")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    train = [r for r in (load(p.resolve()) for p in args.train if p.is_dir()) if r is not None]
    test = [r for r in (load(p.resolve()) for p in args.test if p.is_dir()) if r is not None]
    assert not {r.name for r in train} & {r.name for r in test}, "a held-out run is in the training set"
    out: dict[str, Any] = {"model": args.model, "objective": args.objective,
                           "train": [r.name for r in train], "test": [r.name for r in test]}
    if args.weights:
        weights = tuple(float(w) for w in args.weights.split(","))
    else:
        to_w = MODELS[args.model]
        p, fp = pattern_search(lambda q: objective(train, to_w(q), args.objective), [1.0] * N_PARAMS[args.model])
        weights = to_w(p)
        out["params"] = p
    ones = (1.0, 1.0, 1.0, 1.0)
    for label, runs in (("train", train), ("test", test)):
        if runs:
            out[f"{label}_before"] = report(runs, ones, f"{label}, before (all weights 1)")
            out[f"{label}_after"] = report(runs, weights, f"{label}, after")
    out["seconds"] = time.perf_counter() - t0
    if args.out:
        with args.out.open("a") as fh:
            fh.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
