"""Write ``benchmarks/results/INDEX.md``: every result file, what it is, and which doc, test or code uses it.

A result file is *used* when a doc (``docs/``, ``README.md``, ``sample_traces/README.md``), a test, a
benchmark or the package names it: its file name or stem, a glob or brace pattern that matches it
(``whatif_scenarios_cpu16_{a,b}.jsonl``, ``bench_*_m0[1-4]*.json``), or, for the replay's evidence
(``tracekit/replay/evidence/*.json``), a source that is the file or a prefix of its name. What a file *is*
comes from :data:`KINDS` (by name pattern) and the machine its name gives (:data:`MACHINES`).

``tests/benchmarks/test_results_index.py`` fails when a file is not described, is used by nothing, or the committed
index differs from what this writes::

    python benchmarks/results_index.py --write     # regenerate benchmarks/results/INDEX.md
    python benchmarks/results_index.py --check     # exit 1, saying why, when it is stale or a file unused
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
INDEX = RESULTS / "INDEX.md"
sys.path.insert(0, str(ROOT))

from tracekit.replay import evidence  # noqa: E402

#: what a file is, by the first name pattern it matches (fnmatch)
KINDS: tuple[tuple[str, str], ...] = (
    ("whatif_scenarios_*", "what-if scenarios predicted from a profiled baseline against the change made for real "
                           "(benchmarks/bench_whatif.py --baseline/--variant, --paired*, --cross)"),
    ("whatif_*", "the replay's predicted unprofiled step against the measured one, one row per run "
                 "(benchmarks/bench_whatif.py, benchmarks/bench_unsynced.py)"),
    ("bench_analyze_*", "tracekit analyze against HTA and the bare decode (benchmarks/bench_analyze.py)"),
    ("bench_ops_*", "the ops table's GEMM, convolution and attention FLOPs against FlopCounterMode and the formula, "
                    "eager and compiled (benchmarks/bench_ops.py)"),
    ("bench_many_ranks_*", "many small ranks: tracekit analyze's time and memory by rank count "
                           "(benchmarks/bench_many_ranks.py)"),
    ("cache_first_runs_*", "first runs on an empty decode cache against the build without it, alternating "
                           "(docs/performance.md)"),
    ("cache_cold_write_*", "what writing the cache costs a first analyze: an empty cache against --no-cache, two "
                           "builds (docs/performance.md)"),
    ("ab_many_ranks_*", "two builds of tracekit analyze timed alternately on 16384 small ranks"),
    ("bench_whatif_cost_*", "what tracekit whatif costs by rank count (benchmarks/bench_whatif_cost.py)"),
    ("bench_distortion_*", "the profiler's distortion of the step, paired blocks (benchmarks/bench_distortion.py)"),
    ("gpu_nccl_scenarios_*", "log of a benchmarks/gpu/nccl_scenarios.sh batch"),
    ("gpu_cupti_kinds_*", "log of a benchmarks/gpu/cupti_kinds.sh batch"),
    ("cupti_kinds_*", "CUPTI's cost per CUDA operation by kind (benchmarks/gpu/cupti_cost_by_kind.py)"),
    ("nccl_busbw_*", "allreduce bus bandwidth by message size (benchmarks/gpu/nccl_busbw.py)"),
    ("paired_solo_*", "one rank timed alone against two ranks, paired (benchmarks/gpu/paired_ddp_variants.py)"),
    ("profiler_cost_compiled_*", "the profiler's cost per event, eager against compiled probes "
                                 "(benchmarks/gpu/profiler_cost_compiled.py)"),
    ("profiler_states_*", "the run's own step under three profiler states (benchmarks/gpu/profiler_states.py)"),
    ("window_phases_*", "the profiler window's steps phase by phase (benchmarks/gpu/window_phases.sh)"),
)

#: what a token of a file name says about where it ran
MACHINES: tuple[tuple[str, str], ...] = (
    (r"h200x4", "4 x H200"), (r"h200x2", "2 x H200"), (r"h100x2", "2 x H100"), (r"h200", "1 x H200"),
    (r"h100", "1 x H100"), (r"cpu16", "16-core CPU host, gloo"), (r"cpu2", "2-core CPU host, gloo"),
    (r"cpu_gloo", "CPU, gloo"),
)

#: where users of a result file are looked for (globs under the repository root)
SEARCHED = ("docs/**/*.md", "README.md", "sample_traces/README.md", "tests/**/*.py", "benchmarks/*.py",
            "benchmarks/gpu/*", "tracekit/**/*.py")

_TOKEN = re.compile(r"[\w./*{},\[\]-]+\.(?:jsonl|json|txt|log)\b")


def describe(name: str) -> str | None:
    """What the file is (None: no pattern of :data:`KINDS` matches it)."""
    kind = next((text for pat, text in KINDS if fnmatch.fnmatch(name, pat)), None)
    if kind is None:
        return None
    stem = name.rsplit(".", 1)[0]
    where = next((m for pat, m in MACHINES if re.search(rf"(?:^|_){pat}(?:[a-z]|host\d?)?(?:_|$)", stem)), None)
    notes = [where] if where else []
    series = re.search(r"_m(\d\d)(?:_|$)", stem)
    if series:
        notes.append(f"sitting {series.group(1)} of the measurements in docs/performance.md")
    if stem.endswith("_no_traces") or "_no_traces_" in stem:
        notes.append("the runs' traces are not committed")
    return kind + (f"; {', '.join(notes)}" if notes else "")


def _expand(pattern: str) -> list[str]:
    """A brace pattern's alternatives (``a_{x,y}.json`` -> ``a_x.json``, ``a_y.json``)."""
    parts = re.split(r"\{([^{}]*)\}", pattern)
    alts = [p.split(",") if i % 2 else [p] for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*alts)]


def users(names: list[str]) -> dict[str, list[str]]:
    """name -> the repository files that use it (sorted), for each result file in ``names``."""
    found: dict[str, set[str]] = {n: set() for n in names}
    for pattern in SEARCHED:
        for f in ROOT.glob(pattern):
            if not f.is_file() or RESULTS in f.parents or f == Path(__file__).resolve():
                continue
            rel = str(f.relative_to(ROOT))
            text = f.read_text(errors="replace")
            for token in set(_TOKEN.findall(text)):
                # a pattern counts only where it names this folder: a bare ``*.json`` is any JSON file
                wild = any(c in token for c in "*[")
                if wild and "results/" not in token:
                    continue
                for alt in _expand(token.rsplit("/", 1)[-1]):
                    for n in fnmatch.filter(names, alt) if wild else [alt] * (alt in found):
                        found[n].add(rel)
    for rel, sources in _evidence_sources().items():
        for n in names:
            if any(n == s or n.startswith(s) for s in sources):
                found[n].add(rel)
    return {n: sorted(v) for n, v in found.items()}


def _evidence_sources() -> dict[str, set[str]]:
    """Each evidence file -> the result files (or name prefixes) it names."""
    base = "tracekit/replay/evidence/"
    return {base + "regimes.json": set(evidence.regimes().sources),
            base + "checks.json": {s for c in evidence.checks() for s in c.sources},
            base + "rankings.json": {s for k in evidence.rankings() for s in k.sources}}


def result_files() -> list[str]:
    return sorted(p.name for p in RESULTS.iterdir() if p.is_file() and p != INDEX)


def render() -> tuple[str, list[str]]:
    """The index's text, and the problems (a file without a description, or used by nothing)."""
    names = result_files()
    used = users(names)
    problems = [f"{n}: no pattern in benchmarks/results_index.py KINDS describes it" for n in names if not describe(n)]
    problems += [f"{n}: used by no doc, test, benchmark or code (delete it, or cite it)" for n in names if not used[n]]
    lines = ["# benchmarks/results", "",
             "Every committed benchmark result: what it is and what uses it. Generated by "
             "`python benchmarks/results_index.py --write`; `tests/benchmarks/test_results_index.py` fails when a file is missing "
             "here or used by nothing.", "",
             "| file | what | used by |", "|---|---|---|"]
    lines += [f"| `{n}` | {describe(n) or '?'} | {', '.join(f'`{u}`' for u in used[n]) or '–'} |" for n in names]
    return "\n".join(lines) + "\n", problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write or check benchmarks/results/INDEX.md (module doc).")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the index")
    mode.add_argument("--check", action="store_true", help="exit 1 when the index is stale or a file is unused")
    args = ap.parse_args(argv)
    text, problems = render()
    for p in problems:
        print(p, file=sys.stderr)
    if args.write:
        INDEX.write_text(text)
        print(f"wrote {INDEX.relative_to(ROOT)} ({len(result_files())} files)")
        return 1 if problems else 0
    stale = not INDEX.exists() or INDEX.read_text() != text
    if stale:
        print(f"{INDEX.relative_to(ROOT)} is stale: python benchmarks/results_index.py --write", file=sys.stderr)
    return 1 if stale or problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
