#!/usr/bin/env python
"""Benchmark ``tracekit analyze`` against HolisticTraceAnalysis and a bare typed JSON decode.

1. **Generate** large traces from the real ``inductor`` reference pair
   (tests/data/reference/inductor, else /work/shared/reference_traces/...): the
   events of the ProfilerStep window (CPU events inside it, plus the GPU
   kernels/memcpys/memsets and flow events linked to its launches) are repeated
   N times, each copy shifted by ``k × period`` (period = window plus its GPU
   tail, identical for both ranks so cross-rank timing is kept), with
   correlation ids, flow ids, External ids and ``Ev Idx`` offset per copy so every
   link stays unique, and ``ProfilerStep#N`` renumbered. Pre-window kernels,
   metadata and the header (``distributedInfo`` ...) are kept once. N is picked so
   each rank's uncompressed JSON is about ``--size-mb`` (default 70). Files are
   cached in ``.bench/`` (git-ignored); ``--keep`` keeps them, otherwise they are
   deleted at the end.
2. **Measure** each contender in a fresh subprocess:

   - ``tracekit``: the ``tracekit analyze DIR -o /dev/null --timings`` command
     itself (console script; parse workers, every analysis, the findings and the
     rendered report), its phases read from ``--timings``;
   - ``hta``: ``TraceAnalysis(trace_files={rank: path}, trace_dir=dir, include_last_profiler_step=True)`` +
     ``get_comm_comp_overlap(visualize=False)``, with ``HTA_DISABLE_NS_ROUNDING=1``;
   - ``bare-decode``: read each file and ``msgspec.json.decode`` it into a minimal
     typed Struct (ph, cat, name, ts, dur, a few args): the floor for any loader;
   - ``bare-decode-parallel``: the same decode, one forked process per file (at most
     one per usable CPU, as tracekit's parse workers): the floor for any loader that
     decodes every event on this many cores. No analysis can finish before it.

   - ``tracekit-nocache``: the same command with ``--no-cache``.

   tracekit runs with a fresh, empty cache each time (``TRACEKIT_CACHE`` set to a new folder): a first run,
   which also writes the cache. Then **the cache** (:func:`warm_cache_rows`): ``analyze`` (text and JSON),
   ``whatif`` (text and JSON) and ``report``, each run once on an empty cache, then ``max(repeat, 3)``
   times again on it (the median is reported), and once with ``--no-cache``; their outputs are compared
   byte for byte.

   Wall time is measured by the parent around the whole subprocess (interpreter
   start and imports included), in a run with nothing else watching it; the
   worker also reports its own phases. Every run starts with the input files in
   the page cache (they are read just before), and tracekit's modules are
   byte-compiled once up front, as ``pip install`` does for HTA and pandas. Peak memory comes from a second run of
   the same contender, sampled every 20 ms with psutil (the sampling costs CPU,
   so it never overlaps the timed run), reported three ways: ``rss_tree``, the
   summed RSS of the worker and all its descendants (process pools included;
   pages shared after fork are counted once per process, so this over-counts),
   ``pss_tree``, the summed PSS (shared pages split between the processes that
   map them: the memory the tree really holds), and ``maxrss``, ``ru_maxrss``
   from ``wait4`` (the largest single process).

Usage::

    python benchmarks/bench_analyze.py                      # 2 × ~70 MB, all contenders
    python benchmarks/bench_analyze.py --repeat 3 --json out.json
    python benchmarks/bench_analyze.py --size-mb 10 --skip-hta
    python benchmarks/bench_analyze.py --small                # one small public trace (below)

**Single small file** (``--small [FILE]``): one public trace under 5 MB, by default HTA's own
test trace ``tests/data/external/hta_trace_filter/sampled_rank-0.json.gz`` (1.8 MB of JSON; rank 0
of a sampled 128-rank NCCL job), decompressed once into the cache dir as ``rank0.trace.json``. There
the fixed costs (interpreter, imports, worker start) are most of the time, which is where HTA used
to win. The same three contenders; HTA's figure is its load + overlap, as above.

Results go to ``--json`` (default ``benchmarks/results/bench_analyze_<shape>_m<NN>.json``) with the
machine's facts (:func:`machine_facts`: CPU model, cores, load average before the run, memory,
Python, pandas/numpy/msgspec versions, the tracekit commit).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tracekit.cpus import usable_cpus  # noqa: E402 - the count tracekit's worker defaults use
REF_DIRS = (REPO / "tests" / "data" / "reference" / "inductor",
            Path("/work/shared/reference_traces/h200x2_mlp16_fp32/inductor"))
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}
STEP = "ProfilerStep#"


# ---------------------------------------------------------------------------------------------
# generation
# ---------------------------------------------------------------------------------------------

def _ref_dir() -> Path:
    for d in REF_DIRS:
        if (d / "rank0.trace.json.gz").exists():
            return d
    sys.exit("no reference traces found (tests/data/reference/inductor)")


def _load_ref(path: Path) -> dict[str, Any]:
    import orjson

    return orjson.loads(gzip.decompress(path.read_bytes()))


def _window(doc: dict[str, Any]) -> dict[str, Any]:
    """Split one rank's events into the replicated window and the rest."""
    ev = doc["traceEvents"]
    steps = [e for e in ev if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith(STEP)]
    w0 = min(e["ts"] for e in steps)
    w1 = max(e["ts"] + e["dur"] for e in steps)
    in_win = [e for e in ev if e.get("ph") != "M" and "ts" in e and w0 <= e["ts"] < w1
              and e.get("cat") not in GPU_CATS and e.get("cat") not in ("ac2g", "gpu_user_annotation")]
    win_corr = {e["args"]["correlation"] for e in in_win
                if e.get("cat") in LAUNCH_CATS and "correlation" in (e.get("args") or {})}
    win_ext = {e["args"]["External id"] for e in in_win if "External id" in (e.get("args") or {})}
    rep: list[dict[str, Any]] = []
    for e in ev:
        cat, a = e.get("cat"), e.get("args") or {}
        if cat in GPU_CATS:
            take = a.get("correlation") in win_corr
        elif cat == "ac2g":
            take = e.get("id") in win_corr
        elif cat == "gpu_user_annotation":
            take = a.get("External id") in win_ext
        else:
            take = e.get("ph") != "M" and "ts" in e and w0 <= e["ts"] < w1
        if take:
            rep.append(e)
    rep_ids = {id(e) for e in rep}
    rest = [e for e in ev if id(e) not in rep_ids]
    end = max(e["ts"] + e.get("dur", 0.0) for e in rep)

    def mx(vals: Any) -> int:
        return max((v for v in vals if isinstance(v, int)), default=0) + 1

    return {
        "rep": rep, "rest": rest, "w0": w0, "end": end,
        "n_steps": len({e["name"] for e in steps}),
        "corr": mx((e.get("args") or {}).get("correlation") for e in ev) + mx(e.get("id") for e in ev if e.get("cat") == "ac2g"),
        "ext": mx((e.get("args") or {}).get("External id") for e in ev),
        "flow": mx(e.get("id") for e in ev if e.get("cat") != "ac2g"),
        "evidx": mx((e.get("args") or {}).get("Ev Idx") for e in ev),
        "seq": mx((e.get("args") or {}).get("Sequence number") for e in ev),
    }


def _shift(e: dict[str, Any], k: int, dt: float, w: dict[str, Any]) -> dict[str, Any]:
    c = dict(e)
    c["ts"] = round(e["ts"] + dt, 3)
    if "id" in e and isinstance(e["id"], int):
        c["id"] = e["id"] + k * (w["corr"] if e.get("cat") == "ac2g" else w["flow"])
    name = e.get("name")
    if isinstance(name, str) and name.startswith(STEP) and name[len(STEP):].isdigit():
        c["name"] = f"{STEP}{int(name[len(STEP):]) + k * w['n_steps']}"
    a = e.get("args")
    if a:
        a = dict(a)
        for key, off in (("correlation", w["corr"]), ("External id", w["ext"]), ("Ev Idx", w["evidx"]),
                         ("Sequence number", w["seq"])):
            v = a.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                a[key] = v + k * off
        c["args"] = a
    return c


def generate(out_dir: Path, size_mb: float) -> dict[str, Any]:
    """Write rank0.trace.json / rank1.trace.json of about ``size_mb`` MB each into ``out_dir``."""
    import orjson

    t0 = time.perf_counter()
    ref = _ref_dir()
    docs = {r: _load_ref(ref / f"rank{r}.trace.json.gz") for r in (0, 1)}
    wins = {r: _window(d) for r, d in docs.items()}
    period = max(w["end"] - w["w0"] for w in wins.values())
    period = math.ceil(period + 100.0)  # a 100 µs gap between copies, whole µs
    # size of one copy, from the encoded replicated events
    per_copy = max(len(orjson.dumps(w["rep"])) for w in wins.values())
    base = max(len(orjson.dumps(d)) for d in docs.values())
    copies = max(1, math.ceil((size_mb * 1e6 - base) / per_copy) + 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for r, doc in docs.items():
        w = wins[r]
        path = out_dir / f"rank{r}.trace.json"
        header = {k: v for k, v in doc.items() if k != "traceEvents"}
        with open(path, "wb") as fh:
            fh.write(orjson.dumps(header)[:-1] + b',"traceEvents":[')
            fh.write(orjson.dumps(w["rest"])[1:-1])
            for k in range(copies):
                chunk = w["rep"] if k == 0 else [_shift(e, k, k * period, w) for e in w["rep"]]
                fh.write(b"," + orjson.dumps(chunk)[1:-1])
            fh.write(b"]}")
        sizes[r] = path.stat().st_size
    info = {"copies": copies, "steps_per_rank": copies * wins[0]["n_steps"], "period_us": period,
            "events_per_rank": {r: len(wins[r]["rest"]) + copies * len(wins[r]["rep"]) for r in wins},
            "bytes": sizes, "generate_s": round(time.perf_counter() - t0, 2), "source": str(ref)}
    (out_dir / "bench_info.txt").write_text(json.dumps(info, indent=1))  # not a trace (.txt)
    return info


class BareArgs(msgspec.Struct):
    correlation: int = -1
    external_id: int = msgspec.field(default=-1, name="External id")
    stream: int = -1


class BareEv(msgspec.Struct):
    ph: str = ""
    cat: str = ""
    name: str = ""
    ts: float = 0.0
    dur: float = 0.0
    args: BareArgs | None = None


class BareDoc(msgspec.Struct):
    """Minimal typed schema: the bare-decode floor."""

    traceEvents: list[BareEv]  # noqa: N815


# ---------------------------------------------------------------------------------------------
# workers (run in a fresh interpreter: `bench_analyze.py --worker NAME DIR`)
# ---------------------------------------------------------------------------------------------

def _files(d: Path) -> list[Path]:
    return sorted(d.glob("rank*.trace.json"))


def _bare_count(p: Path) -> int:
    """Events in ``p``, decoded into the bare typed schema (a ``bare-decode-parallel`` task)."""
    return len(msgspec.json.Decoder(BareDoc).decode(p.read_bytes()).traceEvents)


def worker(name: str, d: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    if name == "hta":
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
        import logging

        logging.getLogger("hta").setLevel(logging.ERROR)
        from hta.trace_analysis import TraceAnalysis

        t1 = time.perf_counter()
        files = {int(p.name[4:p.name.index(".")]): str(p) for p in _files(d)}
        # every profiled step, as tracekit: HTA's default drops the last one (so its overlap covers another scope)
        ta = TraceAnalysis(trace_files=files, trace_dir=str(d), include_last_profiler_step=True)
        t2 = time.perf_counter()
        ov = ta.get_comm_comp_overlap(visualize=False)
        t3 = time.perf_counter()
        out = {"import_s": t1 - t0, "load_s": t2 - t1, "analyze_s": t3 - t2,
               "overlap_pct": [round(float(x), 2) for x in ov["comp_comm_overlap_pctg"]]}
    elif name == "bare-decode":
        dec = msgspec.json.Decoder(BareDoc)
        t1 = time.perf_counter()
        n = 0
        for p in _files(d):
            doc = dec.decode(p.read_bytes())
            n += len(doc.traceEvents)
            del doc
        t2 = time.perf_counter()
        out = {"import_s": t1 - t0, "load_s": t2 - t1, "analyze_s": 0.0, "events": n}
    elif name == "bare-decode-parallel":
        import multiprocessing

        files = _files(d)
        t1 = time.perf_counter()
        with multiprocessing.get_context("fork").Pool(max(1, min(len(files), usable_cpus()))) as pool:
            n = sum(pool.map(_bare_count, files, chunksize=1))
        t2 = time.perf_counter()
        out = {"import_s": t1 - t0, "load_s": t2 - t1, "analyze_s": 0.0, "events": n}
    else:
        raise SystemExit(f"unknown worker {name}")
    out["worker_total_s"] = time.perf_counter() - t0
    return out


# ---------------------------------------------------------------------------------------------
# measurement
# ---------------------------------------------------------------------------------------------

def _tree_mem(pid: int) -> tuple[int, int]:
    """(sum of RSS, sum of PSS) over ``pid`` and its descendants.

    RSS counts pages a forked child shares with its parent once per process; PSS
    splits each shared page between the processes that map it, so its sum is
    the memory the tree really holds. Both tools (tracekit and HTA) fork workers.
    """
    import psutil

    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    rss = pss = 0
    for q in procs:
        try:
            full = q.memory_full_info()
            rss += full.rss
            pss += getattr(full, "pss", full.rss)
        except psutil.Error:
            pass
    return rss, pss


def _tracekit_cmd(d: Path) -> list[str]:
    """``tracekit analyze DIR`` exactly as a user runs it: the console script when installed."""
    exe = Path(sys.executable).with_name("tracekit")
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "tracekit"]
    return [*base, "analyze", str(d), "-o", os.devnull, "--timings"]


_TIMINGS = re.compile(r"timings \(s\): (.*); total ([0-9.]+)")


def _tracekit_phases(stderr: str) -> dict[str, Any]:
    """Phases printed by ``tracekit analyze --timings`` (see tracekit.runner.pipeline)."""
    m = _TIMINGS.search(stderr)
    if not m:
        return {}
    ph = {k: float(v) for k, v in (p.rsplit(" ", 1) for p in m.group(1).split(", "))}
    # import = the analysis imports, which overlap the parse workers; load = waiting for them
    return {"phases_s": ph, "import_s": ph.get("import"), "load_s": ph.get("start", 0.0) + ph.get("load", 0.0),
            # analysis phases (per-rank tables, run tables) and rendering: everything after the load
            "analyze_s": sum(v for k, v in ph.items() if k not in ("start", "import", "load")),
            "worker_total_s": float(m.group(2))}


def _tracekit_overlap(d: Path) -> list[float]:
    """Per-rank ``overlap_pct`` from an (untimed) ``tracekit analyze --format json`` run."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [c for c in _tracekit_cmd(d) if c != "--timings"]
        cmd[cmd.index(os.devnull)] = str(out)
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   TRACEKIT_CACHE="off")
        subprocess.run([*cmd, "--format", "json"], check=True, capture_output=True, env=env)
        return [round(float(r["overlap_pct"]), 2) for r in json.loads(out.read_text())["ranks"]]


def _run(name: str, d: Path, sample_memory: bool, cache_dir: Path | None = None,
         cmd: list[str] | None = None) -> dict[str, Any]:
    """Run one contender in a fresh interpreter: wall time, ru_maxrss and (optionally) peak tree memory.

    tracekit runs with ``cache_dir`` as its cache (``TRACEKIT_CACHE``); None: a fresh empty one, removed
    after: a first run, which decodes every file and writes the cache (never the user's cache, never warm).
    ``cmd``: the command to run instead of the contender's own (a tracekit command: ``whatif``, ``report``)."""
    if cmd is not None:
        pass
    elif name.startswith("tracekit"):  # "tracekit-dask": the same command with --engine dask (a local cluster)
        extra = {"tracekit-dask": ["--engine", "dask"], "tracekit-nocache": ["--no-cache"]}
        cmd = _tracekit_cmd(d) + extra.get(name, [])
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, str(d)]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    fresh = None
    if cache_dir is None:
        fresh = Path(tempfile.mkdtemp(prefix="tracekit-bench-cache-"))
    env["TRACEKIT_CACHE"] = str(cache_dir or fresh)
    try:
        return _run_cmd(name, cmd, env, sample_memory)
    finally:
        if fresh is not None:
            shutil.rmtree(fresh, ignore_errors=True)


def _run_cmd(name: str, cmd: list[str], env: dict[str, str], sample_memory: bool) -> dict[str, Any]:
    peak = [0, 0]
    done = threading.Event()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def sample() -> None:
        while not done.is_set():
            rss, pss = _tree_mem(proc.pid)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            done.wait(0.02)

    th = threading.Thread(target=sample, daemon=True)
    if sample_memory:
        th.start()
    # drain pipes in threads so the worker never blocks on a full pipe
    bufs: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda k=k, f=f: bufs.__setitem__(k, f.read()), daemon=True)
               for k, f in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    if sample_memory:
        th.join()
    for r in readers:
        r.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = bufs.get("err", b"").decode(errors="replace")[-3000:]
        return {"name": name, "error": f"exit {proc.returncode}: {err}"}
    if name.startswith("tracekit"):
        inner = _tracekit_phases(bufs.get("err", b"").decode(errors="replace"))
    else:
        lines = [ln for ln in bufs.get("out", b"").decode().splitlines() if ln.startswith("BENCH_RESULT ")]
        inner = json.loads(lines[-1][len("BENCH_RESULT "):]) if lines else {}
    # cpu_s: user + system CPU of the process and the children it waited for (worker pools):
    # unlike wall time, hardly affected by other load on a shared machine
    return {"name": name, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_tree_mb": peak[0] / 2**20,
            "pss_tree_mb": peak[1] / 2**20, "maxrss_mb": ru.ru_maxrss / 1024.0, **inner}


#: the commands of the warm-cache rows: (name, arguments after the input folder, output file suffix)
WARM_COMMANDS = (("analyze", ["--timings"], ".txt"), ("analyze-json", ["--format", "json"], ".json"),
                 ("whatif", [], ".txt"), ("whatif-json", ["--format", "json"], ".json"), ("report", [], ".html"))
#: the targets of a second run on 2 cores (issue 55), s
WARM_TARGETS_S = {"analyze": 0.25, "whatif": 1.5, "report": 1.5}


def warm_cache_rows(d: Path, repeat: int) -> list[dict[str, Any]]:
    """Per command of :data:`WARM_COMMANDS`: a first run on an empty cache (``first_s``: it decodes, computes
    and writes the cache), then ``repeat`` second runs on that cache (``second_s``: their median, and each
    run's), and one run with ``--no-cache`` (``nocache_s``); ``identical``: the second runs' outputs are the
    first run's and the ``--no-cache`` run's, byte for byte."""
    exe = Path(sys.executable).with_name("tracekit")
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "tracekit"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tracekit-bench-warm-") as tmp:
        for name, args, suffix in WARM_COMMANDS:
            cache_dir = Path(tmp) / f"cache_{name}"

            def run(tag: str, extra: tuple[str, ...] = ()) -> tuple[dict[str, Any], bytes]:
                out = Path(tmp) / f"{name}_{tag}{suffix}"
                _warm_page_cache(d)
                r = _run(f"tracekit-{name}", d, False, cache_dir=cache_dir,
                         cmd=[*base, name.split("-")[0], str(d), "-o", str(out), *args, *extra])
                return r, (out.read_bytes() if out.exists() else b"")

            first, first_out = run("first")
            seconds = [run(f"second{i}") for i in range(repeat)]
            nocache, nocache_out = run("nocache", ("--no-cache",))
            failed = [r for r in (first, nocache, *(r for r, _ in seconds)) if "error" in r]
            if failed:
                rows.append({"command": name, "error": failed[0]["error"]})
                continue
            times = [r["wall_s"] for r, _ in seconds]
            rows.append({"command": name, "args": args, "first_s": first["wall_s"], "first_cpu_s": first["cpu_s"],
                         "second_s": statistics.median(times), "second_runs_s": times,
                         "second_cpu_s": statistics.median(r["cpu_s"] for r, _ in seconds),
                         "second_phases_s": seconds[len(seconds) // 2][0].get("phases_s"),
                         "nocache_s": nocache["wall_s"], "cache_bytes": sum(
                             f.stat().st_size for f in cache_dir.rglob("*.tkc")),
                         "identical": all(out == first_out == nocache_out for _, out in seconds)
                         and len(first_out) > 0})
            print(f"  {name}: first {first['wall_s']:.2f} s, second {statistics.median(times):.2f} s (runs "
                  f"{', '.join(f'{t:.2f}' for t in times)}), --no-cache {nocache['wall_s']:.2f} s, outputs "
                  f"{'identical' if rows[-1]['identical'] else 'DIFFER'}", flush=True)
    return rows


def _warm_page_cache(d: Path) -> None:
    """Read the input files so every run starts with them in the page cache.

    On the 2-CPU VM the kernel drops page cache after a contender frees a lot of
    memory (HTA frees ~1 GB), so without this the run after HTA measured disk reads.
    """
    for p in _files(d):
        with open(p, "rb") as fh:
            while fh.read(16 << 20):
                pass


def _byte_compile_tracekit() -> None:
    """Compile tracekit's modules to ``__pycache__`` once, as ``pip install`` does for HTA and pandas.

    With an editable install and ``PYTHONDONTWRITEBYTECODE=1`` (set on the
    development VM) every run would otherwise recompile tracekit from source.
    """
    import compileall

    compileall.compile_dir(str(REPO / "tracekit"), quiet=1)


def measure(name: str, d: Path) -> dict[str, Any]:
    """Time one contender, then measure its memory in a second, separate run.

    The memory sampler reads ``/proc/PID/smaps_rollup`` of every process of the
    tree every 20 ms; on a 2-core machine that steals enough CPU to slow the
    contender it watches (HTA by ~40 %), so times come from the unsampled run
    and memory from the sampled one.
    """
    _warm_page_cache(d)
    timed = _run(name, d, sample_memory=False)
    if "error" in timed:
        return timed
    _warm_page_cache(d)
    mem = _run(name, d, sample_memory=True)
    if "error" in mem:
        return mem
    return {**timed, "rss_tree_mb": mem["rss_tree_mb"], "pss_tree_mb": mem["pss_tree_mb"],
            "maxrss_mb": max(timed["maxrss_mb"], mem["maxrss_mb"]), "sampled_wall_s": mem["wall_s"]}


def machine_facts() -> dict[str, Any]:
    """What a benchmark figure depends on besides the code: CPU, cores, load, memory, versions, commit."""
    import importlib.metadata as md

    cpu = next((ln.split(":", 1)[1].strip() for ln in _read_lines("/proc/cpuinfo") if ln.startswith("model name")),
               platform.processor() or platform.machine())
    mem_kb = next((int(ln.split()[1]) for ln in _read_lines("/proc/meminfo") if ln.startswith("MemTotal")), 0)
    versions = {}
    for dist in ("pandas", "numpy", "msgspec", "HolisticTraceAnalysis"):
        try:
            versions[dist] = md.version(dist)
        except md.PackageNotFoundError:
            versions[dist] = None
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    return {"cpu": cpu, "cpus": os.cpu_count(), "usable_cpus": usable_cpus(), "load_avg_1_5_15": list(os.getloadavg()),
            "mem_gb": round(mem_kb / 2**20, 1), "python": platform.python_version(),
            "platform": platform.platform(), "versions": versions, "tracekit_commit": commit,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _read_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def default_json(prefix: str, shape: str) -> Path:
    """``benchmarks/results/<prefix>_<shape>_m<NN>.json``: the next measurement of that series (NN one above the
    highest committed; the time and the machine's facts are inside the file, benchmarks/results/INDEX.md says
    what cites it)."""
    results = REPO / "benchmarks" / "results"
    taken = [int(m.group(1)) for f in results.glob(f"{prefix}_{shape}_m*.json")
             if (m := re.fullmatch(rf"{re.escape(prefix)}_{re.escape(shape)}_m(\d+)(?:_.*)?\.json", f.name))]
    return results / f"{prefix}_{shape}_m{max(taken, default=0) + 1:02d}.json"


SMALL_DEFAULT = REPO / "tests" / "data" / "external" / "hta_trace_filter" / "sampled_rank-0.json.gz"


def small_input(src: Path, cache_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The one-file input dir for ``--small``: ``src`` decompressed as ``rank0.trace.json``."""
    d = cache_dir / f"small_{src.name.split('.')[0]}"
    d.mkdir(parents=True, exist_ok=True)
    raw = src.read_bytes()
    data = gzip.decompress(raw) if src.suffix == ".gz" else raw
    (d / "rank0.trace.json").write_bytes(data)
    return d, {"source": str(src.relative_to(REPO) if src.is_relative_to(REPO) else src),
               "bytes": {"0": len(data)}, "copies": 1, "steps_per_rank": None, "events_per_rank": None,
               "generate_s": 0.0}


def _fmt(x: Any, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=70.0, help="target size of each rank's JSON (default 70)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per contender; the best (min time) is reported")
    ap.add_argument("--keep", action="store_true", help="keep the generated traces in the cache dir")
    ap.add_argument("--skip-hta", action="store_true", help="do not run HTA")
    ap.add_argument("--cache-dir", type=Path, default=REPO / ".bench")
    ap.add_argument("--json", type=Path, default=None,
                    help="results file (default benchmarks/results/bench_analyze_<shape>_m<NN>.json)")
    ap.add_argument("--small", nargs="?", type=Path, const=SMALL_DEFAULT, default=None, metavar="FILE",
                    help="the single-small-file shape: one trace under 5 MB (default: HTA's sampled_rank-0)")
    ap.add_argument("--skip-warm", action="store_true", help="do not measure the cache's second runs")
    ap.add_argument("--worker", nargs=2, metavar=("NAME", "DIR"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.worker:
        res = worker(a.worker[0], Path(a.worker[1]))
        print("BENCH_RESULT " + json.dumps(res), flush=True)
        return 0

    facts = machine_facts()  # the load average before this benchmark's own work
    shape = f"small_{a.small.name.split('.')[0]}" if a.small else f"2x{int(a.size_mb)}mb"
    d = a.cache_dir / f"inductor_x2_{int(a.size_mb)}mb"
    info_path = d / "bench_info.txt"
    if a.small:
        d, info = small_input(a.small.resolve(), a.cache_dir)
    elif info_path.exists() and len(_files(d)) == 2:
        info = json.loads(info_path.read_text())
        print(f"using cached traces in {d}")
    else:
        print(f"generating 2 × ~{a.size_mb:g} MB traces in {d} ...", flush=True)
        info = generate(d, a.size_mb)
    mb = {r: b / 1e6 for r, b in info["bytes"].items()}
    if a.small:
        print(f"  single small file: {info['source']} ({mb['0']:.2f} MB of JSON)")
    else:
        print(f"  {info['copies']} copies of the 3-step window -> {info['steps_per_rank']} steps/rank, "
              f"events/rank {info['events_per_rank']}, sizes MB {json.dumps({k: round(v, 1) for k, v in mb.items()})}, "
              f"generated in {info['generate_s']} s")

    names = ["tracekit", "tracekit-nocache", "bare-decode", "bare-decode-parallel"] + ([] if a.skip_hta else ["hta"])
    _byte_compile_tracekit()
    best: dict[str, dict[str, Any]] = {}
    runs: list[dict[str, Any]] = []
    for i in range(a.repeat):
        for n in names:
            r = measure(n, d)
            r["repeat"] = i
            runs.append(r)
            if "error" in r:
                print(f"  {n}: FAILED {r['error'][:500]}", file=sys.stderr)
                continue
            if n not in best or r["wall_s"] < best[n]["wall_s"]:
                best[n] = r
            print(f"  [{i + 1}/{a.repeat}] {n}: {r['wall_s']:.2f} s, tree RSS {r['rss_tree_mb']:.0f} MB, "
                  f"tree PSS {r['pss_tree_mb']:.0f} MB", flush=True)

    tk, hta, bare = best.get("tracekit"), best.get("hta"), best.get("bare-decode")
    floor = best.get("bare-decode-parallel")
    print()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"best of {a.repeat}; input {len(mb)} rank(s) × {sum(mb.values()) / len(mb):.1f} MB JSON")
    hdr = f"{'contender':<20} {'wall s':>8} {'import s':>8} {'load s':>8} {'analyze s':>9} " \
          f"{'RSS tree MB':>11} {'PSS tree MB':>11} {'maxRSS MB':>9} {'× HTA time':>10} {'× HTA RSS':>9} " \
          f"{'× HTA PSS':>9} {'× bare time':>11}"
    print(hdr)
    print("-" * len(hdr))
    for n in names:
        r = best.get(n)
        if not r:
            print(f"{n:<20} failed")
            continue
        vs_hta_t = r["wall_s"] / hta["wall_s"] if hta else None
        vs_hta_m = r["rss_tree_mb"] / hta["rss_tree_mb"] if hta else None
        vs_hta_p = r["pss_tree_mb"] / hta["pss_tree_mb"] if hta else None
        vs_bare = r["wall_s"] / bare["wall_s"] if bare else None
        print(f"{n:<20} {r['wall_s']:>8.2f} {_fmt(r.get('import_s'), '8.2f'):>8} {_fmt(r.get('load_s'), '8.2f'):>8} "
              f"{_fmt(r.get('analyze_s'), '9.2f'):>9} {r['rss_tree_mb']:>11.0f} {r['pss_tree_mb']:>11.0f} "
              f"{r['maxrss_mb']:>9.0f} {_fmt(vs_hta_t, '10.3f'):>10} {_fmt(vs_hta_m, '9.3f'):>9} "
              f"{_fmt(vs_hta_p, '9.3f'):>9} {_fmt(vs_bare, '11.2f'):>11}")
    summary: dict[str, Any] = {}
    if tk and hta:
        summary["speedup_vs_hta"] = hta["wall_s"] / tk["wall_s"]
        summary["mem_fraction_of_hta"] = tk["rss_tree_mb"] / hta["rss_tree_mb"]
        summary["pss_fraction_of_hta"] = tk["pss_tree_mb"] / hta["pss_tree_mb"]
        print(f"\ntracekit vs HTA: {summary['speedup_vs_hta']:.1f}× faster "
              f"(target: ≥ 20× on 2 × 74 MB, ≥ 1× on one small file), "
              f"{summary['pss_fraction_of_hta']:.2f} of HTA's peak tree PSS, {summary['mem_fraction_of_hta']:.2f} of its "
              f"peak tree RSS (target ≤ 0.33)")
        print(f"overlap %: tracekit {_tracekit_overlap(d)}, HTA {hta.get('overlap_pct')} (same files; "
              "an untimed `--format json` run)")
    if tk and bare:
        summary["vs_bare_decode"] = tk["wall_s"] / bare["wall_s"]
        summary["vs_bare_decode_work"] = (tk["load_s"] + tk["analyze_s"]) / bare["load_s"]
        print(f"tracekit vs bare typed decode: {summary['vs_bare_decode']:.2f}× the wall time (target ≤ 3×); "
              f"load+analyze / decode only: {summary['vs_bare_decode_work']:.2f}×")
    if tk and floor:
        summary["vs_parallel_decode_floor"] = tk["wall_s"] / floor["wall_s"]
        summary["parallel_decode_floor_s"] = floor["wall_s"]
        print(f"tracekit vs the parallel decode floor ({floor['wall_s']:.2f} s: interpreter, msgspec and every file "
              f"decoded, one process per file): {summary['vs_parallel_decode_floor']:.2f}× its wall time")
    warm: list[dict[str, Any]] = []
    if not a.skip_warm:
        print("\nthe cache (a first run on an empty cache, then second runs on it, median of "
              f"{max(a.repeat, 3)}; --no-cache; outputs compared byte for byte):")
        warm = warm_cache_rows(d, max(a.repeat, 3))
        for row in warm:
            target = WARM_TARGETS_S.get(row["command"])
            if target is not None and "error" not in row:
                row["target_s"] = target
                row["met"] = row["second_s"] <= target and row["identical"]
    out = a.json or default_json("bench_analyze", shape)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": facts, "shape": shape, "input": info, "best": best, "runs": runs,
                               "summary": summary, "warm_cache": warm}, indent=1))
    print(f"results: {out}")
    if not a.keep and not a.small:
        shutil.rmtree(d, ignore_errors=True)
    return 0 if all(n in best for n in names) else 1


if __name__ == "__main__":
    sys.exit(main())
