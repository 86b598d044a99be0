#!/usr/bin/env python
"""Benchmark ``tracekit analyze`` on many small rank files against HTA on the same files.

1. **Build** the rank files: a ~40 KB window of a real trace
   (``sample_traces/fixtures/eager_ddp/rank0.trace.json.gz``, 2 x H200 eager DDP: the
   metadata events, the enclosing ``ProfilerStep#4`` and ``tracekit.backward``
   annotations, and every CPU event in a stretch of the backward pass that
   holds DDP allreduces, plus the GPU kernels/memcpys those CPU launches
   started and their flow events) is written once per rank with
   ``distributedInfo.rank`` and ``world_size`` rewritten and, as torch writes it, the default
   process group listing all N ranks in ``pg_config`` (every rank's file repeats the job's rank list), as
   uncompressed ``rank<N>.trace.json``. Every copy carries the same collectives,
   so the cross-rank step matches each allreduce over all N ranks. Files are
   cached in ``.bench/`` (git-ignored) and removed at the end unless ``--keep``.
2. **Measure** for each rank count (default 64, 512, 2048), each contender in a
   fresh subprocess:

   - ``tracekit``: ``tracekit analyze DIR -o /dev/null --timings`` (the console
     script, exactly as a user runs it); with ``--dask`` also ``tracekit-dask``, the same
     command with ``--engine dask`` (tracekit starts a LocalCluster);
   - ``hta``: ``TraceAnalysis(trace_files={rank: path}, trace_dir=DIR, include_last_profiler_step=True)`` +
     ``get_comm_comp_overlap(visualize=False)``, with ``HTA_DISABLE_NS_ROUNDING=1``.

   Wall time is taken around the subprocess, CPU time (user + system, the
   worker pools included) from its rusage: on a shared machine CPU time moves
   much less with other load than wall time does. Peak memory is the summed PSS and
   RSS of the process tree (worker pools included), sampled every 50 ms in a
   second, separate run (sampling costs CPU), as in ``bench_analyze.py``.
   ``--repeat`` keeps the best time.

Usage::

    nice python benchmarks/bench_many_ranks.py                    # 64, 512, 2048 ranks
    nice python benchmarks/bench_many_ranks.py --ranks 256 --skip-hta --repeat 3
    nice python benchmarks/bench_many_ranks.py --ranks 2048 4096 8192 16384 --skip-hta --repeat 0

3. **Fit** wall time against rank count per contender (least squares, :func:`linear_fit`): the fixed
   cost and the cost per rank, and how far the worst point is from that line (linear in ranks means
   small residuals). Results (rows, fits, the machine's facts) go to ``--json``, by default
   ``benchmarks/results/bench_many_ranks_<kb>kb_m<NN>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

from bench_analyze import _byte_compile_tracekit, _run, default_json, machine_facts  # noqa: E402 - shared code
from tests.generators import build  # noqa: E402 - the rank files (shared with the tests)

import tempfile  # noqa: E402


def linear_fit(points: list[tuple[int, float]]) -> dict[str, Any] | None:
    """Least-squares ``wall_s = fixed_s + ms_per_rank/1000 × ranks`` over ``(ranks, wall_s)`` points
    (None below two distinct rank counts); ``max_residual_pct``: the worst point's distance from the line."""
    if len({n for n, _ in points}) < 2:
        return None
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    fixed = my - slope * mx
    worst = max(abs(y - (fixed + slope * x)) / y for x, y in points)
    return {"fixed_s": fixed, "ms_per_rank": 1000 * slope, "points": n, "max_residual_pct": 100 * worst}


def _measure(name: str, d: Path, repeat: int) -> dict[str, Any]:
    """Best-of-``repeat`` timed runs (``cpu_s`` of the best one), then one memory-sampled run.

    ``repeat`` 0: one memory-sampled run gives time and memory (half the work; the sampler's
    CPU slows the run it watches a little).
    """
    if repeat == 0:
        r = _run(name, d, sample_memory=True)
        return r if "error" in r else {**r, "times_s": [r["wall_s"]]}
    best: dict[str, Any] | None = None
    times = []
    for _ in range(repeat):
        r = _run(name, d, sample_memory=False)
        if "error" in r:
            return r
        times.append(r["wall_s"])
        if best is None or r["wall_s"] < best["wall_s"]:
            best = r
    assert best is not None
    mem = _run(name, d, sample_memory=True)
    if "error" in mem:
        return mem
    return {**best, "times_s": times, "rss_tree_mb": mem["rss_tree_mb"], "pss_tree_mb": mem["pss_tree_mb"],
            "maxrss_mb": max(best["maxrss_mb"], mem["maxrss_mb"])}


def second_pass(d: Path, ranks: int, pairs: int) -> dict[str, Any]:
    """``pairs`` times: ``tracekit analyze`` on an empty cache (the first pass: decode, tables, cache writes),
    then again on that cache (the second pass); the medians, each run, and the second's share of the first."""
    import statistics

    first, second = [], []
    for _ in range(pairs):
        with tempfile.TemporaryDirectory(prefix="tracekit-bench-cache-") as cache_dir:
            a = _run("tracekit", d, False, cache_dir=Path(cache_dir))
            b = _run("tracekit", d, False, cache_dir=Path(cache_dir))
        if "error" in a or "error" in b:
            return {"ranks": ranks, "error": a.get("error") or b.get("error")}
        first.append(a)
        second.append(b)
    f, s = statistics.median(r["wall_s"] for r in first), statistics.median(r["wall_s"] for r in second)
    out = {"ranks": ranks, "first_s": f, "second_s": s, "second_over_first": s / f,
           "first_runs_s": [r["wall_s"] for r in first], "second_runs_s": [r["wall_s"] for r in second],
           "first_cpu_s": statistics.median(r["cpu_s"] for r in first),
           "second_cpu_s": statistics.median(r["cpu_s"] for r in second)}
    print(f"  second pass: first {f:.2f} s, second {s:.2f} s ({100 * s / f:.0f} % of the first; CPU "
          f"{out['first_cpu_s']:.1f} -> {out['second_cpu_s']:.1f} s)", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[64, 512, 2048], help="rank counts (default 64 512 2048)")
    ap.add_argument("--kb", type=int, default=40, help="size of each rank file in KB (default 40)")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per contender; the best is reported "
                    "(0: time and memory from one memory-sampled run)")
    ap.add_argument("--skip-hta", action="store_true", help="do not run HTA")
    ap.add_argument("--dask", action="store_true", help="also run tracekit with --engine dask (a LocalCluster of "
                    "one worker per CPU, started by tracekit: cluster start-up included)")
    ap.add_argument("--keep", action="store_true", help="keep the generated rank files")
    ap.add_argument("--cache-dir", type=Path, default=REPO / ".bench")
    ap.add_argument("--json", type=Path, default=None,
                    help="results file (default benchmarks/results/bench_many_ranks_<kb>kb_m<NN>.json)")
    ap.add_argument("--second-pass", type=int, default=0, metavar="N",
                    help="also N pairs of tracekit runs sharing one cache: a first run on an empty cache, then a "
                         "second on it (the cache's second look; medians reported)")
    a = ap.parse_args(argv)

    machine = machine_facts()  # the load average before this benchmark's own work
    _byte_compile_tracekit()
    names = ["tracekit"] + (["tracekit-dask"] if a.dask else []) + ([] if a.skip_hta else ["hta"])
    rows: list[dict[str, Any]] = []
    passes: list[dict[str, Any]] = []
    for n in a.ranks:
        d = a.cache_dir / f"many_ranks_{n}x{a.kb}kb_pgworld"  # ("pgworld": the process group lists every rank)
        info_path = d / "bench_info.txt"
        if info_path.exists() and len(list(d.glob("rank*.trace.json"))) == n:
            facts = json.loads(info_path.read_text())
        else:
            shutil.rmtree(d, ignore_errors=True)
            facts = build(d, n, a.kb * 1000)
        print(f"{n} ranks x {facts['bytes_per_rank'] / 1e3:.1f} KB = {facts['bytes_total'] / 1e6:.1f} MB "
              f"(built in {facts['build_s']} s)", flush=True)
        for name in names:
            r = _measure(name, d, a.repeat)
            r.update(ranks=n, mb=facts["bytes_total"] / 1e6)
            rows.append(r)
            if "error" in r:
                print(f"  {name}: FAILED {r['error'][:500]}", file=sys.stderr, flush=True)
            else:
                print(f"  {name}: {r['wall_s']:.2f} s (runs {', '.join(f'{t:.2f}' for t in r['times_s'])}), "
                      f"CPU {r['cpu_s']:.1f} s, "
                      f"tree PSS {r['pss_tree_mb']:.0f} MB, tree RSS {r['rss_tree_mb']:.0f} MB", flush=True)
        if a.second_pass:
            passes.append(second_pass(d, n, a.second_pass))
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)

    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"best of {a.repeat}")
    hdr = (f"{'ranks':>6} {'MB':>6} {'contender':<9} {'wall s':>7} {'ms/rank':>7} {'CPU s':>7} {'PSS MB':>7} "
           f"{'RSS MB':>7} {'× HTA time':>10}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if "error" in r:
            print(f"{r['ranks']:>6} {r['mb']:>6.1f} {r['name']:<9} failed")
            continue
        hta = next((h for h in rows if h["ranks"] == r["ranks"] and h["name"] == "hta" and "error" not in h), None)
        ratio = f"{r['wall_s'] / hta['wall_s']:.3f}" if hta else "-"
        print(f"{r['ranks']:>6} {r['mb']:>6.1f} {r['name']:<9} {r['wall_s']:>7.2f} {1000 * r['wall_s'] / r['ranks']:>7.2f} "
              f"{r['cpu_s']:>7.1f} {r['pss_tree_mb']:>7.0f} {r['rss_tree_mb']:>7.0f} {ratio:>10}")
    fits = {name: linear_fit([(r["ranks"], r["wall_s"]) for r in rows if r["name"] == name and "error" not in r])
            for name in names}
    for name, fit in fits.items():
        if fit:
            print(f"{name}: wall s = {fit['fixed_s']:.2f} + {fit['ms_per_rank']:.2f} ms × ranks "
                  f"(least squares over {fit['points']} rank counts, max residual {fit['max_residual_pct']:.1f} %)")
    out = a.json or default_json("bench_many_ranks", f"{a.kb}kb")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "repeat": a.repeat, "rows": rows, "fits": fits,
                               "second_pass": passes}, indent=1))
    print(f"results: {out}")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
