#!/usr/bin/env python
"""What ``tracekit whatif`` costs on large inputs: issue 21's budgets (2 x ~74 MB <= 3 s, 2048 ranks <= 30 s).

Inputs, generated as the analyze benchmarks make them and cached in ``--cache-dir``:

- ``large``: 2 ranks x ``--size-mb`` (default 70) built from the real inductor reference pair
  (:func:`bench_analyze.generate`), the shape ``bench_analyze.py`` times ``analyze`` on;
- ``ranks``: ``--ranks`` (default 2048) rank files of ~40 KB each (:func:`tests.generators.build`).

Each is measured in a fresh interpreter: ``python -m tracekit whatif DIR --format json -o FILE`` with the
checkout's modules byte-compiled and the input in the page cache, best of ``--repeat`` for wall time, with
``cpu_s`` (user + system of the process and the workers it waited for) and ``maxrss_mb`` (``wait4``'s
``ru_maxrss``, the largest single process). ``--against DIR`` times another checkout (e.g. a ``git worktree``
of the previous commit) in the same run, alternating with this one, and checks the two print the same JSON.

Results go to ``--json`` (default ``benchmarks/results/bench_whatif_cost_<shape>_m<NN>.json``) with the machine's
facts (:func:`bench_analyze.machine_facts`).

Usage::

    nice python benchmarks/bench_whatif_cost.py --cache-dir /tmp/bench --keep
    nice python benchmarks/bench_whatif_cost.py --against /tmp/old-checkout --repeat 3 --shape large
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_analyze as ba  # noqa: E402 - the sibling benchmark's generator and machine facts
from tests import generators  # noqa: E402 - the many small rank files

REPO = Path(__file__).resolve().parents[1]
#: issue 21's budgets, wall seconds
BUDGET_S = {"large": 3.0, "ranks": 30.0}


def inputs(cache_dir: Path, shapes: list[str], size_mb: float, ranks: int) -> dict[str, tuple[Path, dict, bool]]:
    """{shape: (folder, facts, generated here)}, generated unless cached (a cached input is never removed)."""
    out = {}
    if "large" in shapes:
        d = cache_dir / f"inductor_x2_{int(size_mb)}mb"  # the name bench_analyze.py caches it under
        new = not any(d.glob("rank*.trace.json"))
        out["large"] = (d, ba.generate(d, size_mb) if new else {"cached": True}, new)
    if "ranks" in shapes:
        d = cache_dir / f"many_ranks_{ranks}x40kb"
        new = not (d / "bench_info.txt").exists()
        out["ranks"] = (d, generators.build(d, ranks) if new else json.loads((d / "bench_info.txt").read_text()), new)
    return out


def run_once(checkout: Path, d: Path, out: Path) -> dict[str, Any]:
    """One ``whatif`` of ``d`` by ``checkout``'s tracekit in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tracekit", "whatif", str(d), "--format", "json", "-o", str(out)],
                            cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{checkout}: whatif {d} failed: {err.decode(errors='replace')[-2000:]}")
    return {"wall_s": round(wall, 3), "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
            "maxrss_mb": round(ru.ru_maxrss / 1024.0, 1)}


def measure(checkouts: dict[str, Path], d: Path, repeat: int, tmp: Path) -> dict[str, Any]:
    """Best-of-``repeat`` per checkout (alternating), and whether their JSON agreed."""
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in checkouts}
    outs = {k: tmp / f"{k}.json" for k in checkouts}
    for _ in range(repeat):
        for name, checkout in checkouts.items():
            ba._warm_page_cache(d)  # noqa: SLF001 - the sibling benchmark's helper
            runs[name].append(run_once(checkout, d, outs[name]))
    best = {k: min(v, key=lambda r: r["wall_s"]) | {"walls_s": [r["wall_s"] for r in v]} for k, v in runs.items()}
    texts = {k: p.read_text() for k, p in outs.items()}
    same = len(set(texts.values())) == 1 if len(texts) > 1 else None
    return {"runs": best, "same_json": same}


def _compile(checkout: Path) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "tracekit")], check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=("large", "ranks", "both"), default="both")
    ap.add_argument("--size-mb", type=float, default=70.0)
    ap.add_argument("--ranks", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against", type=Path, default=None, help="another checkout, timed in the same run")
    ap.add_argument("--cache-dir", type=Path, default=REPO / ".bench")
    ap.add_argument("--keep", action="store_true", help="keep the inputs this run generates (cached ones are kept)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    shapes = ["large", "ranks"] if a.shape == "both" else [a.shape]
    checkouts = {"this": REPO} | ({"against": a.against.resolve()} if a.against else {})
    facts = ba.machine_facts()
    for c in checkouts.values():
        _compile(c)
    made = inputs(a.cache_dir, shapes, a.size_mb, a.ranks)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape, (d, info, _) in made.items():
            m = measure(checkouts, d, a.repeat, Path(tmp))
            row = {"shape": shape, "input": info, "budget_s": BUDGET_S[shape], **m}
            rows.append(row)
            for name, r in m["runs"].items():
                print(f"{shape:6} {name:8} wall {r['wall_s']:7.2f} s (runs {r['walls_s']})  cpu {r['cpu_s']:7.2f} s  "
                      f"maxrss {r['maxrss_mb']:7.0f} MB  budget {BUDGET_S[shape]:.0f} s")
            if m["same_json"] is not None:
                print(f"{shape:6} same JSON from both checkouts: {m['same_json']}")
    if not a.keep:  # only what this run generated: inputs cached by another benchmark stay
        for d, _, generated in made.values():
            if generated:
                shutil.rmtree(d, ignore_errors=True)
    out = a.json or ba.default_json("bench_whatif_cost", a.shape)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": facts, "against": str(a.against) if a.against else None, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
