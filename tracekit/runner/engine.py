"""Where the per-rank map runs: processes on this host (``local``) or a dask.distributed cluster (``dask``).

The *per-rank map* turns one rank file into its rank tables: decode it
(:func:`tracekit.traces.decode.decode_columns`), build its event table and
compute every registered rank table (:func:`tracekit.analyses.registry.compute_rank_tables`).
The run tables (cross-rank matching, waits, findings) then run in this process
on those tables alone: the events never leave the process that decoded them.

Rank files are handed out in batches (:func:`batches`, split by bytes; at least
:data:`MIN_BATCHES` of them, so that the same files make the same batches, and hit
the same cache entries, on any small number of workers: :func:`batch_count`). A batch comes back as one :class:`BatchOutcome`: the trace headers of
its files and, per table, one frame holding the rows of all its ranks (not one
frame per rank), so the cost of a task (scheduling, pickling, stacking) is paid
per batch, not per rank. The progress bar (:mod:`tracekit.progress`) moves as
batches finish.

- ``local``: a ``fork`` process pool on this host (serial below
  :data:`PARALLEL_MIN_BYTES` in total, or with one worker).
- ``dask``: the tasks go to a ``dask.distributed`` cluster: ``Client(scheduler)``,
  or a ``LocalCluster`` of ``workers`` processes when no scheduler address is
  given. The paths are listed (and ``run.json`` read) *on a worker*, so they
  must name the files as the workers see them (a shared file system, or the
  same local paths on every worker); this process needs no access to them.

Warnings raised while a worker decodes (a rank taken from a file name, dropped
events, an unreadable ``run.json``) are collected there and re-issued here.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tracekit import progress
from tracekit.cpus import usable_cpus
from tracekit.analyses import registry
from tracekit.errors import ConfigError, MissingDependencyError, TraceInputError
from tracekit.traces import cols as C
from tracekit.traces.stacking import stack_cols
from tracekit.traces.manifest import Manifest, read_manifest
from tracekit.traces import cache, loader
from tracekit.runner import rank_cache
from tracekit.traces.traceset import RankTrace, TraceSet

Engine = Literal["local", "dask"]
ENGINES: tuple[str, ...] = ("local", "dask")
#: below this many bytes in total the local engine runs in this process (forking costs more) ...
PARALLEL_MIN_BYTES = loader.PARALLEL_MIN_BYTES
#: ... or from this many rank files (each costs tens of ms of per-rank analysis)
PARALLEL_MIN_FILES = 8
#: batches per worker: enough to balance uneven files and move the progress bar
BATCHES_PER_WORKER = 8
#: the files are cut into at least this many batches (or one per file), whatever the worker count
MIN_BATCHES = 128


@dataclass(frozen=True)
class RankJob:
    """The options of the per-rank map (picklable: it travels to every worker).

    ``world_size`` is the fallback for traces that declare none (the number of
    rank files given); a trace's own ``distributedInfo.world_size`` wins.
    """

    options: registry.AnalyzeOptions = field(default_factory=registry.AnalyzeOptions)
    manifest: Manifest | None = None
    world_size: int | None = None
    #: rank files given (a lone file without rank information is rank 0)
    n_files: int = 2


@dataclass
class FileOutcome:
    """One rank file after the per-rank map: its header, or the input error."""

    path: str
    nbytes: int
    meta: dict[str, Any] | None = None
    has_gpu_activity: bool = False
    #: values the decoder dropped (:attr:`RankTrace.dropped`), warned in the main process with the others'
    dropped: list[tuple[str, int, str]] = field(default_factory=list)
    error: TraceInputError | None = None
    #: ``(message, category)`` of the warnings the map raised
    warnings: list[tuple[str, type[Warning]]] = field(default_factory=list)


@dataclass
class BatchOutcome:
    """A batch after the per-rank map: its files, and its rank tables stacked in file order."""

    files: list[FileOutcome]
    tables: dict[str, C.Cols]


def _declared_world(meta: dict[str, Any], fallback: int | None) -> int:
    info = meta.get("distributedInfo")
    w = info.get("world_size") if isinstance(info, dict) else None
    ok = isinstance(w, int) and not isinstance(w, bool) and w > 0
    return w if ok else (fallback or 1)


def rank_tables(path: str, nbytes: int, job: RankJob,
                specs: list[registry.Table]) -> tuple[FileOutcome, dict[str, C.Cols] | None]:
    """The per-rank map of one file: its outcome and rank tables (None on an input error, which is
    returned, not raised)."""
    return _rank_tables(path, nbytes, job, specs)


def _rank_tables(path: str, nbytes: int, job: RankJob,
                 specs: list[registry.Table]) -> tuple[FileOutcome, dict[str, C.Cols] | None]:
    out = FileOutcome(path=path, nbytes=nbytes)
    tables = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            # the batch's entry keeps what this computes; the columns are read if the cache holds them,
            # never stored: no command on this path reads them again, and they would push out the batches
            rt = loader.read_rank(Path(path), store=False)
            meta = rt.meta
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # gather() infers the rank again, and warns there
                rt.rank = loader.rank_of(rt, job.n_files)
            out.meta, out.has_gpu_activity, out.dropped = meta, rt.has_gpu_activity, rt.dropped
            tables = registry.compute_rank_tables(rt, specs=specs, options=job.options, manifest=job.manifest,
                                                  world_size=_declared_world(meta, job.world_size))
        except TraceInputError as e:
            out.error = e
        finally:
            out.warnings = [(str(w.message), w.category) for w in caught]
    return out, tables


def rank_batch(files: list[tuple[str, int]], job: RankJob) -> BatchOutcome:
    """The per-rank map of each ``(path, bytes)`` in ``files``: one task of either engine. Read from the
    cache where the same files were mapped before with the same job and tracekit
    (:func:`tracekit.runner.rank_cache.batch_key`; one entry per batch, not per file: 16384 small entries
    would cost the first run more than they save), else computed and stored there."""
    specs = [t for t in registry.selected(job.options) if t.scope == "rank"]
    key = rank_cache.batch_key(files, job, specs)
    hit = cache.load(rank_cache.ENGINE_BATCHES, key) if key is not None else None
    if isinstance(hit, BatchOutcome):
        return hit
    out = _rank_batch(files, job, specs)
    if key is not None:
        cache.save(rank_cache.ENGINE_BATCHES, key, out)
    return out


def _rank_batch(files: list[tuple[str, int]], job: RankJob, specs: list[registry.Table]) -> BatchOutcome:
    outcomes: list[FileOutcome] = []
    per_rank: list[dict[str, C.Cols]] = []
    shared: dict[str, Any] = {}
    for p, n in files:
        o, t = rank_tables(p, n, job, specs)
        if o.meta is not None:
            _share_header_parts(o.meta, shared)
        outcomes.append(o)
        if t is not None:
            per_rank.append(t)
    return BatchOutcome(outcomes, {t.name: stack_cols([r[t.name] for r in per_rank], tuple(t.column_names))
                                   for t in specs})


def _share_header_parts(meta: dict[str, Any], shared: dict[str, Any]) -> None:
    """Make ``meta``'s device list and process-group list the very objects an earlier rank of the batch
    had, where they are equal: the ranks of a job repeat them (every GPU of the host; every group with its
    members), and pickle sends a shared object once, so the batch's headers reach the main process as one
    copy instead of one per rank."""
    info = meta.get("distributedInfo")
    parts = (("deviceProperties", meta), ("pg_config", info if isinstance(info, dict) else {}))
    for key, holder in parts:
        value = holder.get(key)
        if not value:
            continue
        before = shared.get(key)
        if before is not None and before is not value and before == value:
            holder[key] = before
        else:
            shared[key] = value


def batch_count(n_files: int, workers: int) -> int:
    """How many batches :func:`batches` cuts ``n_files`` into for ``workers``: the smallest power of two of at
    least :data:`MIN_BATCHES` and ``workers`` x :data:`BATCHES_PER_WORKER`, at most one per file.

    Not a multiple of the worker count: a batch's cache entry names its files
    (:func:`tracekit.runner.rank_cache.batch_key`), so batches cut by the worker count are never read by a run
    on another count (``--workers``, another machine, another cluster). These are the same for every count up to
    :data:`MIN_BATCHES` / :data:`BATCHES_PER_WORKER` workers, and within each doubling beyond."""
    want = max(MIN_BATCHES, workers * BATCHES_PER_WORKER)
    return max(1, min(n_files, 1 << (want - 1).bit_length()))


def batches(files: list[tuple[str, int]], n: int) -> list[list[tuple[str, int]]]:
    """``files`` cut, in order, into at most ``n`` non-empty runs of about equal total bytes.

    Each file goes to the batch its byte midpoint falls in (so ``n`` equal files
    make ``n`` batches of one, and a large file is never merged into its neighbours' share).
    """
    n = max(1, n)
    total = sum(b for _, b in files)
    out: dict[int, list[tuple[str, int]]] = {}
    before = 0
    for i, f in enumerate(files):
        k = int(n * (before + f[1] / 2) / total) if total else i * n // len(files)
        out.setdefault(min(k, n - 1), []).append(f)
        before += f[1]
    return list(out.values())


@dataclass
class Survey:
    """What :func:`survey` found: the rank files, the run folder and its ``run.json``."""

    files: list[tuple[str, int]]
    root: str | None
    manifest: Manifest | None
    warnings: list[tuple[str, type[Warning]]]


def survey(paths: list[str], listed: list[Path] | None = None) -> Survey:
    """``(path, bytes)`` of every trace file under ``paths`` (:func:`loader.find_trace_files`, or ``listed``: its
    result, where the caller has it) and, when ``paths`` is one run folder, the folder and its manifest (run where
    the files are)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = listed if listed is not None else loader.find_trace_files(paths)
        files = [(str(p), p.stat().st_size) for p in found]
        root = paths[0] if len(paths) == 1 and Path(paths[0]).is_dir() else None
        manifest = read_manifest(Path(root)) if root else None
    return Survey(files, root, manifest, [(str(w.message), w.category) for w in caught])


_NUMBER = re.compile(r"\d+")


def _rewarn_files(outcomes: list[FileOutcome]) -> None:
    """Re-issue the warnings the workers raised. A warning that names its file (``"PATH: ..."``) is issued as
    it is for the first :data:`~tracekit.traces.loader.FILE_WARNINGS` files that raised its kind (its text
    without the path, numbers aside); the other files' warnings of that kind become one line naming how many
    files and the first (16384 rank files with the same problem would otherwise print 16384 lines)."""
    issued: dict[tuple[str, type[Warning]], int] = {}  # kind -> warnings issued as they are
    folded: dict[tuple[str, type[Warning]], tuple[str, list[str]]] = {}  # kind -> (first folded text, files)
    for o in outcomes:
        prefix = f"{o.path}: "
        for message, category in o.warnings:
            if not message.startswith(prefix):
                warnings.warn(message, category, stacklevel=3)
                continue
            kind = (_NUMBER.sub("#", message[len(prefix):]), category)
            if issued.get(kind, 0) < loader.FILE_WARNINGS:
                issued[kind] = issued.get(kind, 0) + 1
                warnings.warn(message, category, stacklevel=3)
            else:
                folded.setdefault(kind, (message[len(prefix):], []))[1].append(o.path)
    for (_, category), (text, paths) in folded.items():
        warnings.warn(f"{loader.more_files(len(paths), paths[0])} warned the same (first of them: {text})",
                      category, stacklevel=3)


# -- local -------------------------------------------------------------------------------------

def map_local(files: list[tuple[str, int]], job: RankJob, workers: int | None = None,
              show_progress: bool | None = None) -> list[BatchOutcome]:
    """The per-rank map of ``files`` in forked processes of this host, in input order."""
    total = sum(b for _, b in files)
    n = workers if workers is not None else min(len(files), usable_cpus())
    if workers is None and total < PARALLEL_MIN_BYTES and len(files) < PARALLEL_MIN_FILES:
        n = 1
    ctx = loader.fork_context()
    parts = batches(files, batch_count(len(files), n))
    results: list[BatchOutcome | None] = [None] * len(parts)
    with progress.bar(total, "analyzing ranks", show_progress) as bar:
        if n <= 1 or ctx is None or len(parts) == 1:
            for i, b in enumerate(parts):
                results[i] = rank_batch(b, job)
                bar.update(sum(s for _, s in b))
        else:
            with ProcessPoolExecutor(max_workers=min(n, len(parts)), mp_context=ctx) as pool:
                futures = {pool.submit(rank_batch, b, job): i for i, b in enumerate(parts)}
                for fu in as_completed(futures):
                    i = futures[fu]
                    try:
                        results[i] = fu.result()
                    except BrokenProcessPool:
                        raise TraceInputError(parts[i][0][0], "a worker process died while analysing this file "
                                              "or the ones after it (killed, e.g. out of memory); retry with "
                                              "--workers 1") from None
                    bar.update(sum(s for _, s in parts[i]))
    return [r for r in results if r is not None]


# -- dask --------------------------------------------------------------------------------------

@contextmanager
def dask_client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """A ``dask.distributed`` client: of the cluster at ``scheduler``, or of a fresh
    ``LocalCluster`` (``workers`` processes, one thread each) closed on exit."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependencyError("distributed", "--engine dask", 'pip install "tracekit[dask]"') from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="30s")
        except (OSError, TimeoutError) as e:
            raise ConfigError(f"--scheduler {scheduler}: cannot reach the dask scheduler ({e})") from None
        with client:
            yield client
        return
    n = workers or usable_cpus()
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        yield client


def map_dask(client: Any, files: list[tuple[str, int]], job: RankJob,
             show_progress: bool | None = None) -> list[BatchOutcome]:
    """The per-rank map of ``files`` as tasks of ``client``'s cluster, in input order."""
    from distributed import as_completed as dask_completed

    n = max(1, len(client.scheduler_info().get("workers", {})))
    parts = batches(files, batch_count(len(files), n))
    job_f = client.scatter(job, broadcast=True)  # once per worker, not once per batch
    futures = [client.submit(rank_batch, b, job_f, pure=False) for b in parts]
    index = {fu.key: i for i, fu in enumerate(futures)}
    results: list[BatchOutcome | None] = [None] * len(parts)
    with progress.bar(sum(b for _, b in files), "analyzing ranks", show_progress) as bar:
        for fu in dask_completed(futures):
            i = index[fu.key]
            results[i] = fu.result()
            bar.update(sum(s for _, s in parts[i]))
    return [r for r in results if r is not None]


# -- both --------------------------------------------------------------------------------------

def gather(outcomes: list[BatchOutcome], *, skip_bad: bool, manifest: Manifest | None,
           root: Path | None, named: set[str] = frozenset()) -> tuple[TraceSet, dict[str, C.Cols]]:
    """The :class:`TraceSet` (headers only, see :meth:`RankTrace.header_only`) and the rank tables,
    stacked over all ranks in rank order (what :func:`tracekit.runner.run.analyze` takes as ``tables``).

    The same checks as :func:`tracekit.traces.loader.load`: a bad file raises
    (or, ``skip_bad``, is listed and warned about), a JSON file found in a folder that is no trace is
    ignored with a warning (``named``: the files given by name, which are not), ranks must be unique and
    from one run.
    """
    good: list[RankTrace] = []
    skipped: list[tuple[str, str]] = []
    ignored: list[tuple[str, str]] = []
    _rewarn_files([f for b in outcomes for f in b.files])
    for o in (f for b in outcomes for f in b.files):
        if o.error is not None and loader.ignorable(o.path, o.error, named):
            ignored.append((o.path, o.error.problem))
            continue
        if o.error is not None:
            if not skip_bad:
                raise o.error
            skipped.append((o.path, o.error.problem))
            continue
        assert o.meta is not None
        good.append(RankTrace.header_only(Path(o.path), o.meta, has_gpu_activity=o.has_gpu_activity,
                                          dropped=o.dropped))
    if not good:
        loader.raise_unreadable(skipped, ignored)
    loader.warn_skipped(skipped)
    ts = loader.assemble(good, skipped)
    loader.add_ignored(ts, ignored)
    ts.manifest, ts.root = manifest, root
    names = list(outcomes[0].tables) if outcomes else []
    return ts, {n: _rank_ordered(stack_cols([b.tables[n] for b in outcomes], tuple(outcomes[0].tables[n])))
                for n in names}


def _rank_ordered(t: C.Cols) -> C.Cols:
    """``t`` with its rows in rank order, each rank's rows in their own order (files are in path
    order, where ``rank10`` comes before ``rank2``)."""
    if not C.nrows(t) or (np.diff(t["rank"]) >= 0).all():
        return t
    return C.take(t, np.argsort(t["rank"], kind="stable"))


def map_paths(paths: list[str], *, engine: Engine = "local", scheduler: str | None = None, skip_bad: bool = False,
              options: registry.AnalyzeOptions | None = None, workers: int | None = None,
              show_progress: bool | None = None, listed: list[Path] | None = None
              ) -> tuple[TraceSet, dict[str, C.Cols]]:
    """Find the rank files under ``paths`` (``listed``: :func:`loader.find_trace_files`'s result, where the caller
    has it; the dask engine lists them where the files are) and run the per-rank map on ``engine``.

    Returns the header-only :class:`TraceSet` and the rank tables stacked over ranks, for
    :func:`tracekit.runner.run.analyze` (``tables=``) with the same ``options``.
    """
    options = options or registry.AnalyzeOptions()
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    if scheduler and engine != "dask":
        raise ConfigError("--scheduler needs --engine dask")
    if engine == "local":
        found = survey(paths, listed)
        cache.writable_root()  # here, before the workers fork: an unusable cache is said once, and off in them
        outcomes = map_local(found.files, _job(found, options), workers, show_progress)
        cache.trim()  # the entries just written may take the cache past its cap
    else:
        with dask_client(scheduler, workers) as client:
            found = client.submit(survey, paths, pure=False).result()  # listed where the files are
            outcomes = map_dask(client, found.files, _job(found, options), show_progress)
    cache.rewarn(found.warnings)
    return gather(outcomes, skip_bad=skip_bad, manifest=found.manifest, root=Path(found.root) if found.root else None,
                  named=loader.named_files(paths))


def _job(found: Survey, options: registry.AnalyzeOptions) -> RankJob:
    return RankJob(options=options, manifest=found.manifest, world_size=len(found.files), n_files=len(found.files))
