"""How well does the replay predict the step the profiler did not disturb?

For every run folder given (default: every committed sample whose run.json has unprofiled
timings), ``tracekit.whatif`` predicts the unprofiled step from the traces and run.json's
``profiler_cost``; the unprofiled step measured in the same run (run.json ``timings``) is
the truth it is checked against, never an input. Prints one row per run and the summary
(median and max |error|), and writes the rows as JSON lines. Compiled CUDA runs calibrated with a
compiled probe also get ``error_pct_probe_eager``: the same prediction with the eager probe's figure
(the calibration without a compiled probe), an A/B on the same traces.

Columns: ``window_ms`` (the profiled window, trace), ``window_off_pct`` (the window's
distance from the truth: what analyze's figures carry without the replay), ``replay_pct``
(self-check: replay of the window as recorded vs the window), ``predicted_ms``,
``measured_ms`` (run.json, mean of the timed steps; per step the slowest rank),
``measured_spread_pct`` (the truth's own p90/p50 − 1: an error below it is noise), ``measured_drift_pct``
(how far the truth's median moved from the run's last warm-up steps: the host's speed was not steady),
``error_pct`` (predicted vs measured), ``predicted_gpu_idle_pct`` and ``window_gpu_idle_pct`` (the GPU idle
share of the prediction and of the window, :mod:`tracekit.replay.trust`: what decides its regime),
``cost`` (profiler cost per CPU op / runtime call, ns, and where it came from), ``seconds`` (wall time of ``whatif``).

Example::

    python benchmarks/bench_whatif.py                      # the committed samples
    python benchmarks/bench_whatif.py runs/* --out benchmarks/results/whatif.jsonl

**Scenarios** (``--baseline RUN --variant RUN2:OPTION=VALUE[,OPTION=VALUE]...``): each variant is the
same model profiled for real with the change made (``benchmarks/whatif_scenarios.sh`` makes them);
its step is predicted from the ONE baseline run (``tracekit.whatif(baseline, option=value)``) and
checked against the variant's own measured unprofiled step (its run.json). Columns: ``variant``,
``changes``, ``predicted_ms`` (the scenario's predicted step), ``measured_ms`` (the variant's),
``error_pct``, ``predicted_delta_pct`` / ``measured_delta_pct`` (vs the baseline's prediction / measured
step); summary: median and max |error|, and whether the variants (baseline included) rank as measured::

    python benchmarks/bench_whatif.py --baseline runs/cap25 --variant runs/cap1:bucket-cap-mb=1 \
        --variant runs/cap100:bucket-cap-mb=100 --out benchmarks/results/whatif_scenarios.jsonl

**Paired graph-break twins** (``--paired RUN...``): ``RUN`` is a profiled run of a model with a graph
break, ``RUN/paired.jsonl`` (``benchmarks/gpu/paired_twins.py``, ``benchmarks/gpu/paired_twins_runs.sh``) the same model
and its twin without the break timed in one process, steps alternating. The
predicted change of ``tracekit whatif RUN --no-graph-breaks`` is checked against that paired change
(median over rounds of none / break − 1), which separate runs could not measure steadily. Columns:
``predicted_delta_pct``, ``measured_delta_pct`` (the paired median) and its quartiles over rounds,
``predicted_ms`` / ``measured_ms`` (the baseline's prediction, and the break twin's median step in the
paired timing)::

    python benchmarks/bench_whatif.py --paired sample_traces/whatif/h100_paired_twins/a/*-break \
        --out benchmarks/results/whatif_scenarios_paired.jsonl

**Paired DDP variants** (``--paired-variants BASELINE``): ``BASELINE/paired.jsonl`` from
``benchmarks/gpu/paired_ddp_variants.py`` (bucket caps, first bucket, world size, all timed in one job, steps
alternating); every variant but the first (the baseline, as ``BASELINE`` was profiled) is predicted from
``BASELINE`` with its options and checked against its paired change::

    python benchmarks/bench_whatif.py --paired-variants sample_traces/whatif/cpu16_paired/a/cap25 \
        --out benchmarks/results/whatif_scenarios_cpu16_paired.jsonl

**Every bucket layout from every other** (``--cross SET...``): ``SET/capN`` are the same model profiled with
``--bucket-cap-mb N`` (``SET/cap25_again`` a second cap-25 run, if any) and ``SET/cap25/paired.jsonl`` times those
caps in one job (``benchmarks/gpu/bucket_layouts.sh``). From each profiled layout, every other cap of the paired job
is predicted (``tracekit whatif SET/capN --sweep bucket-cap-mb=...``) and checked against the paired change
between the two caps (median and quartiles over the job's rounds of target step / source step - 1). Rows are
scenario rows (``variant`` = ``SET/capN:bucket-cap-mb=M``): a what-if inherits the speed of the run it is
predicted from, and this shows it from both sides of each change::

    python benchmarks/bench_whatif.py --cross runs/layouts/* --out benchmarks/results/whatif_cross.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import tracekit  # noqa: E402
from tracekit.traces.manifest import read_manifest  # noqa: E402
from tracekit.replay.changes import OPTIONS  # noqa: E402


def _name(run: Path) -> str:
    return str(run.relative_to(REPO) if run.is_relative_to(REPO) else run)


def default_runs() -> list[Path]:
    """Committed run folders with unprofiled timings in their run.json."""
    out = []
    for m in sorted((REPO / "sample_traces").rglob("run.json")):
        man = read_manifest(m)
        if man is not None and man.timings is not None and man.timings.overall is not None:
            out.append(m.parent)
    return out


def measure(run: Path) -> dict:
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = tracekit.whatif(run)
    except tracekit.TracekitError as e:
        return {"run": _name(run), "not_predicted": str(e)}
    secs = time.perf_counter() - t0
    b = r.baseline
    man = read_manifest(run)
    pct = man.timings.overall.sec_per_iter if man and man.timings and man.timings.overall else None
    spread = 100 * (pct.p90 / pct.p50 - 1) if pct and pct.p50 and pct.p90 else None
    pc = r.profiler_cost
    # the same prediction with each other calibration probe's figure (compiled CUDA runs: the eager probe's)
    others = {}
    probes = man.profiler_cost.probes if man and man.profiler_cost else {}
    for label in [k for k in probes if k != man.profiler_cost.probe]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            others[f"error_pct_probe_{label}"] = tracekit.whatif(run, profiler_probe=label).baseline["error_pct"]
    return {
        "run": _name(run), "probe": man.profiler_cost.probe if man and man.profiler_cost else None, **others,
        "ranks": len(r.ranks), "window_ms": b["profiled_step_us"] / 1e3,
        "window_off_pct": b["window_vs_measured_pct"], "replay_pct": b["replay_error_pct"],
        "predicted_ms": b["predicted_step_us"] / 1e3,
        "measured_ms": b["measured_unprofiled_step_us"] / 1e3 if b["measured_unprofiled_step_us"] else None,
        "measured_spread_pct": spread, "measured_drift_pct": b.get("measured_drift_pct"), "error_pct": b["error_pct"],
        "predicted_gpu_idle_pct": b.get("predicted_gpu_idle_pct"), "window_gpu_idle_pct": b.get("window_gpu_idle_pct"),
        "cost": f"{pc['cpu_op_ns']:.0f}/{pc['runtime_ns']:.0f} ({pc['source']})", "seconds": secs,
    }


def _measured_ms(run: Path) -> float | None:
    man = read_manifest(run)
    t = man.timings.overall if man and man.timings else None
    return t.mean_sec_per_iter * 1e3 if t and t.mean_sec_per_iter else None


def _options(spec: str) -> dict:
    """``bucket-cap-mb=1,world-size=1`` -> keyword arguments of ``tracekit.whatif`` (types: the scenario options'
    declarations, tracekit.replay.changes.OPTIONS; a flag takes any value)."""
    out = {}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        key = key.strip().replace("-", "_")
        out[key] = True if OPTIONS[key].kind is bool else OPTIONS[key].parse(value)
    return out


def scenario_rows(baseline: Path, variants: list[str]) -> list[dict]:
    """One row per variant (module doc, "Scenarios"), plus the baseline's own row first."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = tracekit.whatif(baseline)
    b_pred, b_meas = base.baseline["predicted_step_us"] / 1e3, _measured_ms(baseline)
    rows = [{"variant": _name(baseline), "changes": "baseline", "predicted_ms": b_pred, "measured_ms": b_meas,
             "error_pct": 100 * (b_pred / b_meas - 1) if b_meas else None, "predicted_delta_pct": 0.0,
             "measured_delta_pct": 0.0}]
    for v in variants:
        path, _, spec = v.rpartition(":")
        run = Path(path).resolve()
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = tracekit.whatif(baseline, **_options(spec))
        except tracekit.TracekitError as e:
            rows.append({"variant": _name(run), "changes": spec, "not_predicted": str(e)})
            continue
        pred, meas = r.scenarios[0]["predicted_step_us"] / 1e3, _measured_ms(run)
        rows.append({"variant": _name(run), "changes": spec, "predicted_ms": pred, "measured_ms": meas,
                     "error_pct": 100 * (pred / meas - 1) if meas else None,
                     "predicted_delta_pct": 100 * (pred / b_pred - 1),
                     "measured_delta_pct": 100 * (meas / b_meas - 1) if meas and b_meas else None,
                     "seconds": time.perf_counter() - t0})
    return rows


def paired_rows(runs: list[Path]) -> list[dict]:
    """One row per graph-break run checked against its paired timing (module doc, "Paired")."""
    rows = []
    for run in runs:
        paired = json.loads((run / "paired.jsonl").read_text())
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = tracekit.whatif(run, no_graph_breaks=True)
        sc = r.scenarios[0]
        rows.append({"variant": _name(run), "changes": "no-graph-breaks=1",
                     "predicted_ms": r.baseline["predicted_step_us"] / 1e3, "measured_ms": paired["break_ms_median"],
                     "predicted_gpu_idle_pct": r.baseline.get("predicted_gpu_idle_pct"),
                     "predicted_delta_pct": sc["delta_pct"], "measured_delta_pct": paired["paired_delta_pct_median"],
                     "measured_delta_q1_pct": paired["paired_delta_pct_q1"],
                     "measured_delta_q3_pct": paired["paired_delta_pct_q3"], "rounds": paired["shape"]["rounds"],
                     "seconds": time.perf_counter() - t0})
    return rows


def paired_variant_rows(baseline: Path) -> list[dict]:
    """One row per variant of ``baseline/paired.jsonl`` but the first, predicted from ``baseline`` (module doc)."""
    paired = json.loads((baseline / "paired.jsonl").read_text())
    rows = []
    for v in paired["variants"][1:]:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = tracekit.whatif(baseline, **_options(v["variant"]))
        sc = r.scenarios[0]
        rows.append({"variant": f"{_name(baseline)}:{v['variant']}", "changes": v["variant"],
                     "predicted_ms": sc["predicted_step_us"] / 1e3, "measured_ms": v["step_ms_median"],
                     "predicted_delta_pct": sc["delta_pct"], "measured_delta_pct": v["paired_delta_pct_median"],
                     "measured_delta_q1_pct": v["paired_delta_pct_q1"], "measured_delta_q3_pct": v["paired_delta_pct_q3"],
                     "rounds": len(v["step_ms"]), "seconds": time.perf_counter() - t0})
    return rows


def _print_paired(rows: list[dict], out: Path | None, ranked: bool) -> None:
    from tabulate import tabulate

    from tracekit.replay.validation import ranked_pairs

    print(tabulate(rows, headers="keys", floatfmt=".2f"))
    errs = [abs(r["predicted_delta_pct"] - r["measured_delta_pct"]) for r in rows]
    by_pred = [r["changes"] for r in sorted(rows, key=lambda r: r["predicted_delta_pct"])]
    by_meas = [r["changes"] for r in sorted(rows, key=lambda r: r["measured_delta_pct"])]
    pairs, ok, misses = ranked_pairs(rows)
    print(f"\ndelta error (points of the step): median {statistics.median(errs):.1f}, max {max(errs):.1f} over "
          f"{len(errs)}" + (f"; ranked as measured: {by_pred == by_meas}\n  predicted order: {by_pred}\n"
                            f"  measured order:  {by_meas}" if ranked else ""))
    print(f"pairs whose paired timings differ beyond their quartiles (baseline included): {pairs}; ordered as "
          f"measured by the predictions: {ok}" + "".join(f"\n  not: {a} / {b} ({run})" for run, a, b in misses))
    if out:
        out.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _print_scenarios(rows: list[dict]) -> None:
    from tabulate import tabulate

    ok = [r for r in rows if "not_predicted" not in r and r["error_pct"] is not None]
    print(tabulate(rows, headers="keys", floatfmt=".1f", missingval="-"))
    errs = [abs(r["error_pct"]) for r in ok[1:]]
    if errs:
        by_pred = [r["variant"] for r in sorted(ok, key=lambda r: r["predicted_ms"])]
        by_meas = [r["variant"] for r in sorted(ok, key=lambda r: r["measured_ms"])]
        print(f"\nscenario |error| vs measured: median {statistics.median(errs):.1f} %, max {max(errs):.1f} % over "
              f"{len(errs)} variants; ranked as measured: {by_pred == by_meas}\n  predicted order: {by_pred}\n"
              f"  measured order:  {by_meas}")


def _cap_of(run: Path) -> float:
    """The bucket cap (MB) a ``capN`` / ``capN_again`` folder was profiled with."""
    return float(run.name[3:].split("_")[0])


def _round_change(target: list[float], source: list[float]) -> tuple[float, float, float]:
    """Median and quartiles, %, over the paired rounds of target / source - 1 (as benchmarks/gpu/paired_ddp_variants.py
    gives each variant against the first)."""
    ratios = [t / s - 1 for t, s in zip(target, source)]
    q = statistics.quantiles(ratios, n=4)
    return 100 * statistics.median(ratios), 100 * q[0], 100 * q[2]


def cross_rows(sets: list[Path]) -> list[dict]:
    """Every paired cap predicted from every profiled layout of each set (module doc, ``--cross``)."""
    rows = []
    for sd in sets:
        paired = json.loads((sd / "cap25" / "paired.jsonl").read_text())
        steps = {float(v["variant"].split("=")[1]): v["step_ms"]
                 for v in paired["variants"] if v["variant"].startswith("bucket-cap-mb=")}
        for src in sorted(p for p in sd.iterdir() if p.name.startswith("cap") and (p / "run.json").exists()):
            own = _cap_of(src)
            if own not in steps:
                continue
            targets = [c for c in sorted(steps) if c != own]
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = tracekit.whatif(src, sweep=[f"bucket-cap-mb={','.join(f'{c:g}' for c in targets)}"])
            for sc in r.scenarios:
                c = sc["changes"]["bucket_cap_mb"]
                med, q1, q3 = _round_change(steps[c], steps[own])
                rows.append({"variant": f"{_name(src)}:bucket-cap-mb={c:g}", "changes": f"bucket-cap-mb={c:g}",
                             "from_cap_mb": own, "predicted_ms": sc["predicted_step_us"] / 1e3,
                             "predicted_delta_pct": sc["delta_pct"], "measured_delta_pct": med,
                             "measured_delta_q1_pct": q1, "measured_delta_q3_pct": q3,
                             "rounds": len(steps[c]), "seconds": time.perf_counter() - t0})
    return rows


def _print_cross(rows: list[dict], out: Path | None) -> None:
    from tabulate import tabulate

    from tracekit.replay.validation import ranked_pairs

    print(tabulate(rows, headers="keys", floatfmt=".2f"))
    pairs, ok, _ = ranked_pairs(rows)
    print(f"pairs whose paired timings differ beyond their quartiles (the source included): {pairs}; ordered as "
          f"measured by the predictions: {ok}")
    for label, sel in (("merges (fewer, larger buckets)", lambda r: float(r["changes"].split("=")[1]) > r["from_cap_mb"]),
                       ("splits (more, smaller buckets)", lambda r: float(r["changes"].split("=")[1]) < r["from_cap_mb"]),
                       ("all", lambda r: True)):
        errs = [abs(r["predicted_delta_pct"] - r["measured_delta_pct"]) for r in rows if sel(r)]
        if errs:
            print(f"{label}: delta error (points of the source's step) median {statistics.median(errs):.1f}, "
                  f"max {max(errs):.1f} over {len(errs)}")
    if out:
        out.write_text("".join(json.dumps(r) + "\n" for r in rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", type=Path, help="run folders (default: the committed samples)")
    ap.add_argument("--out", type=Path, default=None, help="write the rows here as JSON lines")
    ap.add_argument("--baseline", type=Path, default=None, help="scenarios: the run every variant is predicted from")
    ap.add_argument("--variant", action="append", default=[], metavar="RUN:OPTION=VALUE[,...]",
                    help="scenarios: a run made with the change, and the change as whatif options")
    ap.add_argument("--paired", nargs="+", type=Path, default=None, metavar="RUN",
                    help="graph-break runs, each with RUN/paired.jsonl (module doc)")
    ap.add_argument("--paired-variants", type=Path, default=None, metavar="BASELINE",
                    help="a profiled baseline run with BASELINE/paired.jsonl: DDP variants timed in one job (module doc)")
    ap.add_argument("--cross", nargs="+", type=Path, default=None, metavar="SET",
                    help="sets of one model profiled at several bucket caps, with SET/cap25/paired.jsonl (module doc)")
    args = ap.parse_args(argv)
    if args.cross:
        _print_cross(cross_rows([p.resolve() for p in args.cross]), args.out)
        return 0
    if args.paired or args.paired_variants:
        rows = (paired_rows([p.resolve() for p in args.paired]) if args.paired else
                paired_variant_rows(args.paired_variants.resolve()))
        _print_paired(rows, args.out, ranked=bool(args.paired_variants))
        return 0
    if args.baseline is not None:
        rows = scenario_rows(args.baseline.resolve(), args.variant)
        _print_scenarios(rows)
        if args.out:
            args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return 0
    runs = [p.resolve() for p in args.runs] or default_runs()
    rows = [measure(r) for r in runs]
    from tabulate import tabulate

    for r in [r for r in rows if "not_predicted" in r]:
        print(f"{r['run']}: not predicted: {r['not_predicted']}")
    rows = [r for r in rows if "not_predicted" not in r]
    print(tabulate(rows, headers="keys", floatfmt=".1f", missingval="-"))
    errs = [abs(r["error_pct"]) for r in rows if r["error_pct"] is not None]
    win = [abs(r["window_off_pct"]) for r in rows if r["window_off_pct"] is not None]
    if errs:
        print(f"\nprediction |error| vs measured: median {statistics.median(errs):.1f} %, max {max(errs):.1f} % "
              f"over {len(errs)} runs (window itself: median {statistics.median(win):.1f} %, max {max(win):.1f} %)")
        print(f"replay self-check |error|: max {max(abs(r['replay_pct']) for r in rows):.2f} %")
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
