"""Find per-rank trace files, decode them in parallel and check they form one run.

Entry points: :func:`load` -> :class:`~tracekit.traces.traceset.TraceSet`, and
:func:`start_load`, which starts the parse workers and returns at once so the
caller can import the analysis code (pandas and all) while they decode.

Importing this module does not import pandas: workers are forked from a lean
parent and only ever run the numpy/msgspec decoder.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracekit import progress
from tracekit.cpus import usable_cpus
from tracekit.errors import NotATraceError, TraceInputError, TraceLoadWarning, TraceSetError
from tracekit.traces import cache, decode, shared

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from tracekit.traces.traceset import RankTrace, TraceSet

TRACE_SUFFIXES = (".json", ".json.gz")
#: files in a run folder that are not traces
NON_TRACE_NAMES = {"run.json", "manifest.json", "compiled_kernels.json"}
_RANK_IN_NAME = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)
#: below this many bytes in total, worker start-up costs more than it saves
PARALLEL_MIN_BYTES = 16 * 1024 * 1024


def find_trace_files(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """Expand directories (recursively) and files into a sorted list of trace files.

    A directory contributes every ``*.json`` and ``*.json.gz`` below it
    (``*.pt.trace.json(.gz)`` from ``tensorboard_trace_handler`` included),
    except ``run.json`` manifests. Explicit files are taken as given.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            # in Path's order by parts, so the final sort below has little to do
            files = [Path(f) for f in sorted(_walk(str(p)), key=lambda f: f.split(os.sep))]
            if not files:
                _raise_if_failed_run(p)
                raise TraceInputError(p, "directory contains no *.json or *.json.gz trace files")
            found.extend(files)
        elif p.is_file():
            found.append(p)
        else:
            raise TraceInputError(p, "no such file or directory")
    if not found:
        raise TraceInputError(", ".join(map(str, paths)) or "(none)", "no trace files given")
    return sorted(dict.fromkeys(found))


def _walk(root: str) -> list[str]:
    """Trace files below ``root`` (as ``Path.rglob``: symlinked files count, symlinked folders are not entered),
    with ``os.scandir``: no stat per file where the folder entry tells its type (16384 files: 0.05 s, rglob 0.3 s).
    A folder that cannot be read is skipped with a warning naming it (rglob skipped it silently)."""
    out: list[str] = []
    todo = [root]
    while todo:
        folder = todo.pop()
        try:
            entries = os.scandir(folder)
        except OSError as e:
            warnings.warn(f"{folder}: cannot read this folder ({e.strerror or e}): its traces are not analysed",
                          TraceLoadWarning, stacklevel=3)
            continue
        with entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                elif entry.name.endswith(TRACE_SUFFIXES) and entry.name not in NON_TRACE_NAMES and entry.is_file():
                    out.append(entry.path)
    return out


def named_files(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> set[str]:
    """The files given by name in ``paths`` (not found in a folder): :func:`ignorable` spares them."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return {str(Path(p)) for p in paths if Path(p).is_file()}


def ignorable(path: str | os.PathLike, error: Exception, named: set[str]) -> bool:
    """Is ``error`` (reading ``path``) that of a JSON file that is no profiler trace, found in a folder? Such a
    file (a results or config file beside the traces) is ignored with a warning rather than failing the run.
    A file named as a rank's trace (``rank<N>``, ``worker<N>``, ``*.pt.trace.json``) never is: it is a broken
    rank file, reported with its problem (or skipped under ``--skip-bad``), not a missing rank."""
    name = Path(path).name
    rank_file = bool(_RANK_IN_NAME.search(name) or _WORKER_IN_NAME.search(name)) or ".pt.trace." in name
    return isinstance(error, NotATraceError) and str(Path(path)) not in named and not rank_file


def note_ignored(ignored: Sequence[tuple[str, str]]) -> str | None:
    """The warning and note for the non-trace files ignored in folders (None when none)."""
    if not ignored:
        return None
    names = ", ".join(str(p) for p, _ in ignored[:SKIPPED_SHOWN]) + (", ..." if len(ignored) > SKIPPED_SHOWN else "")
    return (f"ignored {len(ignored)} JSON file{'s' if len(ignored) != 1 else ''} in the folder that "
            f"{'are' if len(ignored) != 1 else 'is'} not a profiler trace (no 'traceEvents' list): {names}")


def _raise_if_failed_run(folder: Path) -> None:
    """A run folder without traces whose ``run.json`` says the run failed: say why (RunError, exit code 1)."""
    from tracekit.errors import RunError
    from tracekit.traces.manifest import read_manifest

    m = read_manifest(folder)
    if m is not None and m.status == "failed":
        why = (m.failure or {}).get("summary") or "no failure recorded"
        raise RunError(f"{folder}: the run failed before any rank wrote a trace: {why}")


_WORKER_IN_NAME = re.compile(r"(?<![a-z])worker[_-]?(\d+)", re.IGNORECASE)


#: files a per-file warning of one kind names before the rest of them are summed in one line (ranks taken from
#: file names, dropped values, and the engine's workers' warnings: :func:`tracekit.runner.engine.gather`)
FILE_WARNINGS = 3


def more_files(count: int, first: Path | str) -> str:
    """``"N more rank file(s) (FIRST, ...)"``: the files a folded per-file warning stands for."""
    return f"{count} more rank file{'s' if count > 1 else ''} ({Path(first).name}{', ...' if count > 1 else ''})"


def _rank_of(rt: RankTrace, n_files: int = 2, named: list[tuple[Path, int, str]] | None = None) -> int:
    """The rank of one trace file of ``n_files`` given, by the first rule that applies:

    1. ``distributedInfo.rank`` in the trace;
    2. ``rank<N>`` (``rank_N``, ``rank-N``) in the file name, with a warning;
    3. ``worker<N>`` in the file name (kineto's ``tensorboard_trace_handler`` names files
       ``WORKER.TIMESTAMP.pt.trace.json``), with a warning;
    4. the only file given: rank 0 (:func:`_assemble` adds a note: world size 1).

    Several files that none of these tells apart raise :class:`TraceInputError`. ``named``: where rules 2
    and 3 record ``(path, rank, pattern)`` instead of warning (:func:`_warn_named`).
    """
    info = rt.meta.get("distributedInfo") or {}
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0:
        return rank
    for pattern, what in ((_RANK_IN_NAME, "rank<N>"), (_WORKER_IN_NAME, "worker<N>")):
        m = pattern.search(rt.path.name)
        if m:
            if named is not None:
                named.append((rt.path, int(m.group(1)), what))
            else:
                _warn_named([(rt.path, int(m.group(1)), what)], stacklevel=4)
            return int(m.group(1))
    if n_files == 1:
        return 0
    raise TraceInputError(rt.path, f"cannot tell which rank this file is (one of {n_files} trace files): no "
                                   "distributedInfo.rank in the trace and no 'rank<N>' or 'worker<N>' in its name")


def _warn_named(named: list[tuple[Path, int, str]], stacklevel: int = 3) -> None:
    """A warning per file whose rank came from its name, the first :data:`FILE_WARNINGS` of them, and one
    line for the rest (16384 rank files would otherwise print 16384 lines)."""
    for path, rank, what in named[:FILE_WARNINGS]:
        warnings.warn(f"{path}: no distributedInfo.rank in the trace; took rank {rank} from the file name "
                      f"('{what}')", TraceLoadWarning, stacklevel=stacklevel)
    rest = named[FILE_WARNINGS:]
    if rest:
        ranks = rank_ranges(sorted(r for _, r, _ in rest))
        warnings.warn(f"{len(rest)} more rank files have no distributedInfo.rank: their ranks {ranks} were taken "
                      f"from their file names too ({rest[0][0].name}, ...)", TraceLoadWarning, stacklevel=stacklevel)


def warn_dropped(traces: list[RankTrace], stacklevel: int = 4) -> str | None:
    """Warn the values the decoder dropped (:attr:`RankTrace.dropped`): a line per file for the first
    :data:`FILE_WARNINGS` files that dropped any, then one line per kind of value for all the other files,
    with the values summed (16384 rank files would otherwise print 16384 lines). Returns the run note on them
    (every file, every kind, summed: the JSON report's ``meta.notes``), None when nothing was dropped."""
    hit = sorted((rt for rt in traces if rt.dropped), key=lambda rt: rt.rank)
    if not hit:
        return None
    for rt in hit[:FILE_WARNINGS]:
        for what, n, detail in rt.dropped:
            warnings.warn(f"{rt.path}: dropped {n} {what}" + (f", {detail}" if detail else ""), TraceLoadWarning,
                          stacklevel=stacklevel)
    for what, (n, files, first) in _dropped_sums(hit[FILE_WARNINGS:]).items():
        warnings.warn(f"{more_files(files, first)} dropped {n} {what} in all", TraceLoadWarning, stacklevel=stacklevel)
    sums = _dropped_sums(hit)
    return "the decoder dropped " + "; ".join(
        f"{n} {what} ({files} rank file{'s' if files > 1 else ''})" for what, (n, files, _) in sums.items())


def _dropped_sums(traces: list[RankTrace]) -> dict[str, tuple[int, int, Path]]:
    """What the decoder dropped over ``traces``: per kind of value, ``(values, files, the first file)``."""
    out: dict[str, tuple[int, int, Path]] = {}
    for rt in traces:
        for what, n, _detail in rt.dropped:
            values, files, first = out.get(what, (0, 0, rt.path))
            out[what] = (values + n, files + 1, first)
    return out


def single_file_note(rt: RankTrace) -> str | None:
    """The note for a lone trace whose rank was not recorded (rule 4 of :func:`_rank_of`), else None."""
    info = rt.meta.get("distributedInfo")
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0:
        return None
    if _RANK_IN_NAME.search(rt.path.name) or _WORKER_IN_NAME.search(rt.path.name):
        return None
    return (f"{rt.path.name}: a single trace with no distributedInfo and no rank in its name: "
            "analyzed as rank 0 of world size 1")


def _pg_ranks(rt: RankTrace) -> dict[str, str]:
    """Process group name -> its ranks, as this trace declares them."""
    pgs = rt.distributed_info.get("pg_config") or []
    return {str(pg.get("pg_name")): _ranks_text(pg.get("ranks")) for pg in pgs if isinstance(pg, dict)}


def _ranks_text(ranks: Any) -> str:
    """A group's member ranks as compared between files and named in errors (a long list is kept as a
    ``range`` by the decoder, :func:`tracekit.traces.decode.meta_of`)."""
    if isinstance(ranks, range):
        step = f" step {ranks.step}" if ranks.step != 1 else ""
        return f"[{ranks.start}..{ranks[-1]}{step}] ({len(ranks)} ranks)" if ranks else "[]"
    return str(ranks)


def _declared_world_size(rt: RankTrace) -> int | None:
    """``distributedInfo.world_size`` of one trace when it is a positive int, else None (not recorded)."""
    w = rt.distributed_info.get("world_size")
    return w if isinstance(w, int) and not isinstance(w, bool) and w > 0 else None


def _check_same_run(ranks: dict[int, RankTrace]) -> int | None:
    """Raise if the traces come from different runs; return the declared world size.

    Same run = same ``world_size`` and, for every process group that several
    files declare, the same member ranks. (A rank lists only the groups it belongs
    to, so subgroups legitimately differ between files.) A trace that does not
    record ``world_size`` (no ``distributedInfo``, or one without that field) is
    *unknown*, not different: it is left out of the comparison, with one warning
    naming the files.
    """
    known = {r: _declared_world_size(rt) for r, rt in ranks.items()}
    unknown = [ranks[r] for r, w in known.items() if w is None]
    if unknown and len(unknown) < len(ranks):
        names = ", ".join(rt.path.name for rt in unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
        warnings.warn(f"{len(unknown)} trace(s) record no distributedInfo.world_size ({names}): taken to be "
                      "from the same run as the others", TraceLoadWarning, stacklevel=3)
    worlds = {w: ranks[r] for r, w in known.items() if w is not None}
    if len(worlds) > 1:
        (w1, a), (w2, b) = list(worlds.items())[:2]
        raise TraceSetError(f"traces come from different runs (world_size differs): {a.path} has {w1}, "
                            f"{b.path} has {w2}")
    seen: dict[str, tuple[str, RankTrace]] = {}
    for rt in ranks.values():
        for name, members in _pg_ranks(rt).items():
            if name in seen and seen[name][0] != members:
                other = seen[name][1]
                raise TraceSetError(
                    f"traces come from different runs (process-group config differs, group {name!r}): {other.path} has ranks "
                    f"{seen[name][0]}, {rt.path} has {members}")
            seen.setdefault(name, (members, rt))
    return next(iter(worlds), None)


class PendingLoad:
    """Trace files being decoded; :meth:`result` waits and assembles the :class:`TraceSet`.

    Made by :func:`start_load`. The workers return plain numpy columns
    (:class:`~tracekit.traces.decode.Columns`), the large arrays through shared
    memory (:mod:`.shared`) where the platform has it; the event DataFrames are
    built here, in the parent, so the workers never import pandas.
    """

    def __init__(self, paths: Any, files: list[Path], skip_bad: bool, n_workers: int,
                 show_progress: bool | None = None, sizes: list[int] | None = None,
                 cached: dict[int, tuple[dict[str, Any], Any]] | None = None) -> None:
        self._paths, self._skip_bad = paths, skip_bad
        #: the files served by the cache (index in ``files`` -> decoded), found before any worker starts
        self._cached = cached or {}
        #: each file's bytes (0 where it cannot be read: the decode reports it), listed once
        sizes = sizes if sizes is not None else [_size(f) for f in files]
        self._all_files, self._all_sizes = files, sizes
        #: the files to decode here: the others
        self._files = [f for i, f in enumerate(files) if i not in self._cached]
        self._sizes = [n for i, n in enumerate(sizes) if i not in self._cached]
        self._progress = show_progress
        self._pool: ProcessPoolExecutor | None = None
        self._futures: list[Future] = []
        self._buffers: list[int | None] | None = None
        if n_workers > 1 and len(self._files) > 1:
            # opened before the workers fork, so each inherits every buffer
            self._buffers = shared.open_buffers_for(shared.shareable(self._sizes))
            import concurrent.futures  # here: 10 ms of imports one small file does without

            self._pool = concurrent.futures.ProcessPoolExecutor(max_workers=min(n_workers, len(self._files)),
                                                                mp_context=fork_context())
            try:
                self._futures = [self._pool.submit(_worker_decode, f, fd) for f, fd in
                                 zip(self._files, self._fds())]
            except BaseException:
                self._pool.shutdown(cancel_futures=True)
                shared.close_buffers(self._buffers)
                raise

    def _fds(self) -> list[int | None]:
        """The shared buffer of each file (None: its columns come back pickled)."""
        return list(self._buffers) if self._buffers else [None] * len(self._files)

    def result(self) -> TraceSet:
        """Wait for every file, build the per-rank tables and check they form one run."""
        from tracekit.traces.traceset import RankTrace

        sizes = self._sizes
        try:
            with progress.bar(sum(sizes), "decoding", self._progress) as bar:
                if self._pool is not None:
                    from concurrent.futures import as_completed

                    where = {fu: i for i, fu in enumerate(self._futures)}
                    for fu in as_completed(self._futures):
                        bar.update(sizes[where[fu]])
                    decoded = [_worker_result(fu, f, fd) for fu, f, fd in zip(self._futures, self._files, self._fds())]
                else:
                    decoded = []
                    for f, n in zip(self._files, sizes):
                        decoded.append(_guarded_decode(f))
                        bar.update(n)
        finally:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None
            shared.close_buffers(self._buffers)  # mapped columns keep their own reference
            self._buffers = None
        if self._files:
            cache.trim()  # the entries just written may take the cache past its cap
        fresh = iter(decoded)
        decoded = [self._cached[i] if i in self._cached else next(fresh) for i in range(len(self._all_files))]
        good: list[RankTrace] = []
        skipped: list[tuple[str, str]] = []
        ignored: list[tuple[str, str]] = []
        named = named_files(self._paths)
        for i, (f, r) in enumerate(zip(self._all_files, decoded)):
            decoded[i] = None  # type: ignore[call-overload]  # the RankTrace holds the columns now
            if isinstance(r, TraceInputError) and ignorable(f, r, named):
                ignored.append((str(f), r.problem))
            elif isinstance(r, TraceInputError):
                if not self._skip_bad:
                    raise r
                skipped.append((str(f), r.problem))
            else:
                meta, cols = r
                del r
                good.append(RankTrace.from_decoded(f, meta, cols))  # its event table is built if asked for
                del cols
        if not good:
            raise_unreadable(skipped, ignored)
        warn_skipped(skipped)
        ts = _assemble(good, skipped)
        add_ignored(ts, ignored)
        paths = self._paths
        roots = [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
        if len(roots) == 1 and roots[0].is_dir():
            ts.root = roots[0]
            # imported here, after the workers started (~8 ms off the critical path); no cycle
            from tracekit.traces.manifest import read_manifest

            ts.manifest = read_manifest(roots[0])  # typed, tolerant: warns, never raises
            if ts.manifest is not None and ts.manifest.status == "failed":
                why = (ts.manifest.failure or {}).get("summary") or "see run.json"
                warnings.warn(f"{roots[0]}: this run failed ({why}); analysing the traces the surviving ranks "
                              "wrote", TraceLoadWarning, stacklevel=2)
        return ts


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reported by the decode


def _worker_result(fu: Future, path: Path, fd: int | None) -> Any:
    from concurrent.futures.process import BrokenProcessPool

    try:
        r = fu.result()
    except BrokenProcessPool:
        raise TraceInputError(path, "the parse worker process died while reading this file "
                                    "(killed, e.g. out of memory); retry with --workers 1") from None
    if isinstance(r, _InCache):  # mapped from the entry the worker stored (decoded here if it is gone since)
        key, hit = cache.cached_columns(path)
        if hit is None:
            return _guarded_decode(path)
        hit[0][decode.SOURCE_KEY] = key
        return hit
    if isinstance(r, tuple):
        meta, cols = r
        return meta, shared.attach(cols, fd)
    return r


def fork_context() -> Any:
    """The ``fork`` multiprocessing context where it is safe and cheap (Linux), else None (the default).

    Forked workers start in milliseconds and inherit what the parent has loaded.
    """
    import multiprocessing

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


def start_load(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    skip_bad: bool = False,
    workers: int | None = None,
    progress: bool | None = None,
) -> PendingLoad:
    """Find the trace files and start decoding them; see :func:`load` for the arguments.

    ``progress``: a progress bar on stderr while :meth:`PendingLoad.result` waits
    (None: when stderr is a terminal, see :mod:`tracekit.progress`).

    Missing paths and empty directories raise here, before any worker starts.
    """
    files = find_trace_files(paths)
    sizes = [_size(f) for f in files]
    cached = _from_cache(files)
    left = [n for i, n in enumerate(sizes) if i not in cached]
    n_workers = workers if workers is not None else min(len(left), usable_cpus())
    parallel = n_workers > 1 and len(left) > 1 and (workers is not None or sum(left) >= PARALLEL_MIN_BYTES)
    if left:
        cache.writable_root()  # here, before the workers fork: an unusable cache is said once, and off in them
    return PendingLoad(paths, files, skip_bad, min(n_workers, len(left)) if parallel else 1, progress, sizes,
                       cached)


def _from_cache(files: list[Path]) -> dict[int, tuple[dict[str, Any], Any]]:
    """The files the cache holds (:mod:`tracekit.traces.cache`): index -> ``(meta, columns)``, their columns
    mapped from the cache's files. Looked up here, before any worker starts: a command whose files are all
    cached starts none."""
    out = {}
    for i, f in enumerate(files):
        key, hit = cache.cached_columns(f)
        if hit is not None:
            meta, cols = hit
            meta[decode.SOURCE_KEY] = key
            out[i] = (meta, cols)
    return out


def load(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    skip_bad: bool = False,
    workers: int | None = None,
) -> TraceSet:
    """Load per-rank Chrome traces into a :class:`TraceSet`.

    - ``paths``: a run directory (searched recursively), a file, or a list of them.
    - The rank comes from the parsed ``distributedInfo.rank`` (never a regex over
      raw text); the file name's ``rank<N>``, then ``worker<N>``, is a fallback, with a
      warning; a single file without either is rank 0 of world size 1 (a note in
      :attr:`TraceSet.notes`). See :func:`_rank_of`.
    - Two files with one rank, or files whose ``world_size``/process-group config
      differ, raise :class:`TraceSetError`. Ranks missing for the declared world
      size give a :class:`TraceLoadWarning` and analysis goes on with the rest.
    - ``skip_bad``: a file that fails to parse is recorded in
      :attr:`TraceSet.skipped` (with a warning) instead of raising, as long as
      one good rank remains.
    - ``workers``: parallel decode processes (default: one per file, at most the
      CPU count; serial for small inputs).
    """
    return start_load(paths, skip_bad=skip_bad, workers=workers).result()


def _guarded_decode(path: Path, fd: int | None = None, *,
                    store: bool = True) -> tuple[dict[str, Any], Any] | TraceInputError:
    """Decode one file; input errors are returned (not raised) so one bad rank does not lose the others.

    With ``fd`` (in a worker), the large arrays go into that shared buffer (:func:`shared.share`). ``store``:
    see :func:`read_rank`.
    """
    try:
        meta, cols, key = cache.decode_columns(path, store=store)  # read from the cache, or decoded (and stored)
    except TraceInputError as e:
        return e
    if key is not None:
        meta[decode.SOURCE_KEY] = key
    return meta, (cols if fd is None else shared.share(cols, fd))


@dataclass(frozen=True)
class _InCache:
    """A parse worker's answer for a file whose columns the cache holds (just stored there): the parent maps
    them from the cache's entry (:func:`_worker_result`) rather than from a shared buffer the worker would
    copy them into once more."""


def _worker_decode(path: Path, fd: int | None) -> tuple[dict[str, Any], Any] | TraceInputError | _InCache:
    """:func:`_guarded_decode` in a parse worker: :class:`_InCache` where the cache holds the file's columns."""
    try:
        meta, cols, key, held = cache.decode_columns_held(path)
    except TraceInputError as e:
        return e
    if held:
        return _InCache()
    if key is not None:
        meta[decode.SOURCE_KEY] = key
    return meta, (cols if fd is None else shared.share(cols, fd))


#: files named in the one-line summary of skipped files (the rest are in ``meta.skipped_files``)
SKIPPED_SHOWN = 3


def skipped_summary(skipped: Sequence[tuple[str, str]]) -> str:
    """One line for the files skipped under ``--skip-bad``, however many: the count, the first
    :data:`SKIPPED_SHOWN` names and how many were skipped for each kind of problem (most common first).

    ``"skipped 3000 unreadable files (first: a.json, b.json, c.json, ...; 2990 not valid JSON, 10 empty
    file); full list in the JSON report's meta.skipped_files"``. One file: ``"skipped PATH: PROBLEM"``.
    """
    if len(skipped) == 1:
        return f"skipped {skipped[0][0]}: {skipped[0][1]}"
    return (f"skipped {len(skipped)} unreadable files ({_skipped_detail(skipped)}); "
            "full list in the JSON report's meta.skipped_files")


def _skipped_detail(skipped: Sequence[tuple[str, str]]) -> str:
    """``first: a.json, b.json, c.json, ...; 2990 not valid JSON, 10 empty file``."""
    reasons: dict[str, int] = {}
    for _, why in skipped:
        key = _problem_kind(why)
        reasons[key] = reasons.get(key, 0) + 1
    first = ", ".join(Path(p).name for p, _ in skipped[:SKIPPED_SHOWN])
    more = ", ..." if len(skipped) > SKIPPED_SHOWN else ""
    why = ", ".join(f"{n} {k}" for k, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"first: {first}{more}; {why}"


def _problem_kind(problem: str) -> str:
    """A problem without its details, so that files broken the same way count together
    (``not valid JSON (line 3 column 7: ...)`` -> ``not valid JSON``; ``traceEvents[12] ...`` ->
    ``traceEvents[N] ...``)."""
    head = re.split(r" \(|: ", problem, maxsplit=1)[0].strip() or problem
    return re.sub(r"\[\d+\]", "[N]", head)


def raise_unreadable(skipped: Sequence[tuple[str, str]], ignored: Sequence[tuple[str, str]]) -> None:
    """No file was a readable trace: one file's own error when there was one file, else the list."""
    if len(skipped) + len(ignored) == 1:
        path, problem = (*skipped, *ignored)[0]
        raise (NotATraceError if ignored else TraceInputError)(path, problem)
    raise TraceSetError(no_readable_message([*skipped, *ignored]))


def add_ignored(ts: TraceSet, ignored: Sequence[tuple[str, str]]) -> None:
    """Warn about the ignored non-trace files (:func:`ignorable`) and keep the same line in ``ts.notes``
    (the JSON report's ``meta.notes``)."""
    line = note_ignored(ignored)
    if line:
        warnings.warn(line, TraceLoadWarning, stacklevel=3)
        ts.notes.append(line)


def warn_skipped(skipped: Sequence[tuple[str, str]]) -> None:
    """One :class:`TraceLoadWarning` for all the skipped files (:func:`skipped_summary`); none when none."""
    if skipped:
        warnings.warn(skipped_summary(skipped), TraceLoadWarning, stacklevel=3)


def no_readable_message(skipped: Sequence[tuple[str, str]]) -> str:
    """The error when no file could be read: each file while they are few, else one summary line."""
    if len(skipped) <= SKIPPED_SHOWN:
        return "no readable trace among: " + "; ".join(f"{p}: {why}" for p, why in skipped)
    return f"no readable trace among {len(skipped)} files ({_skipped_detail(skipped)})"


def rank_ranges(ranks: list[int]) -> str:
    """Sorted ranks as ``[0-3, 7, 9-12]``: one line however many ranks a run has."""
    runs: list[str] = []
    i = 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        runs.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return "[" + ", ".join(runs) + "]"


def _warn_unread(traces: list[RankTrace]) -> None:
    """One warning for every rank file with no GPU activity tracekit reads but events of categories it does not
    read (:func:`tracekit.traces.decode.unread_categories`): named, never taken for a CPU-only run."""
    hit = [rt for rt in traces if rt.meta.get(decode.UNREAD_KEY)]
    if not hit:
        return
    which = str(hit[0].path) if len(hit) == 1 else f"{len(hit)} rank files ({hit[0].path.name}, ...)"
    warnings.warn(f"{which}: no GPU kernel, copy or memset that tracekit reads, but events of categories it does not "
                  f"read: {decode.unread_text(decode.unread_of(rt.meta for rt in hit))}; device-side metrics are "
                  "unavailable for these ranks", TraceLoadWarning, stacklevel=3)


def _warn_lost_kernels(traces: list[RankTrace]) -> None:
    """One warning for every rank file that launched device work but holds no kernel, copy or memset: its
    device records were lost (:func:`tracekit.traces.decode.device_launches`); never taken for a CPU-only run."""
    hit = [rt for rt in traces if rt.meta.get(decode.LAUNCHES_KEY) and not rt.meta.get(decode.UNREAD_KEY)]
    if not hit:
        return
    which = str(hit[0].path) if len(hit) == 1 else f"{len(hit)} rank files ({hit[0].path.name}, ...)"
    n = sum(int(rt.meta[decode.LAUNCHES_KEY]) for rt in hit)
    warnings.warn(f"{which}: kernel records missing: {n} device launches but no kernel, copy or memset recorded; "
                  "device-side metrics are unavailable for these ranks", TraceLoadWarning, stacklevel=3)


def _raise_if_several_runs(traces: list[RankTrace], first: Path, second: Path) -> None:
    """A rank seen twice, in two folders that each hold traces: the folder given holds several runs (the
    variants of ``tracekit profile --compare``, a sweep): one line naming them and the commands that fit."""
    if first.parent == second.parent:
        return
    runs = sorted({str(rt.path.parent) for rt in traces})
    shown = ", ".join(runs[:4]) + (", ..." if len(runs) > 4 else "")
    raise TraceSetError(f"these traces are {len(runs)} runs, one per folder ({shown}; a `tracekit profile --compare` "
                        f"folder?): analyze one run, `tracekit analyze {runs[0]}`, or compare two, "
                        f"`tracekit diff {runs[0]} {runs[1]}`")


def _assemble(traces: list[RankTrace], skipped: list[tuple[str, str]]) -> TraceSet:
    by_rank: dict[int, RankTrace] = {}
    n_files = len(traces) + len(skipped)
    named: list[tuple[Path, int, str]] = []
    for rt in traces:
        rt.rank = _rank_of(rt, n_files, named)
        if rt.rank in by_rank:
            _raise_if_several_runs(traces, by_rank[rt.rank].path, rt.path)
            raise TraceSetError(f"rank {rt.rank} appears twice: {by_rank[rt.rank].path} and {rt.path}")
        by_rank[rt.rank] = rt
    _warn_named(named)
    dropped = warn_dropped(traces)
    _warn_unread(list(by_rank.values()))
    _warn_lost_kernels(list(by_rank.values()))
    world_size = _check_same_run(by_rank)
    if world_size is not None:
        too_big = sorted(r for r in by_rank if r >= world_size)
        if too_big:
            raise TraceSetError(f"rank(s) {too_big} out of range for world_size {world_size}: "
                                + ", ".join(str(by_rank[r].path) for r in too_big))
        missing = sorted(set(range(world_size)) - set(by_rank))
        if missing:
            warnings.warn(
                f"world_size is {world_size} but no trace for rank(s) {rank_ranges(missing)}; "
                f"analyzing ranks {rank_ranges(sorted(by_rank))}",
                TraceLoadWarning, stacklevel=3,
            )
    ranks = dict(sorted(by_rank.items()))
    from tracekit.traces.traceset import TraceSet

    notes = [n for n in (single_file_note(traces[0]),) if n] if n_files == 1 else []
    notes += [dropped] if dropped else []
    # no declared world size: at least every rank seen (ranks from file names need not start at 0)
    world = world_size or max(len(ranks), max(ranks) + 1)
    return TraceSet(ranks=ranks, world_size=world, skipped=skipped, notes=notes)


def read_rank(path: Path, *, store: bool = True) -> RankTrace:
    """One rank file decoded into its :class:`RankTrace`, in this process (its ``rank`` still to be set:
    :func:`rank_of`). Raises :class:`TraceInputError` for a file that cannot be read. ``store``: a file the
    cache does not hold has its columns stored there (:func:`tracekit.traces.cache.decode_columns`)."""
    from tracekit.traces.traceset import RankTrace

    r = _guarded_decode(path, store=store)
    if isinstance(r, TraceInputError):
        raise r
    meta, cols = r
    return RankTrace.from_decoded(path, meta, cols)  # the event table is built only if an analysis asks


# the steps of load() that the engines (tracekit.runner.engine) run themselves, one file at a time
decode_file = _guarded_decode
rank_of = _rank_of
assemble = _assemble


def inputs_key(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> str | None:
    """The identity of everything a command reads from ``paths`` (:mod:`tracekit.traces.cache`): each trace
    file found (:func:`find_trace_files`, :func:`tracekit.traces.cache.file_key`) and the ``run.json`` of each
    folder given, with the paths as written. None when the cache is off or a file cannot be read (the command
    then runs uncached and reports the problem itself). Warnings of the search are left to the command."""
    if cache.settings().root is None:
        return None
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            files = find_trace_files(given)
    except TraceInputError:
        return None
    keys = [cache.file_key(f) for f in files]
    if None in keys:
        return None
    folders = [Path(p) for p in given if Path(p).is_dir()] + [Path(f).parent for f in files]
    return cache.digest([str(p) for p in given], [str(f) for f in files], keys, side_files_key(folders))


def side_files_key(folders: Iterable[str | os.PathLike]) -> list[tuple[str, str, str | None]]:
    """The identity of the files beside the traces that the analyses read (:data:`NON_TRACE_NAMES`: run.json,
    compiled_kernels.json, ...) in each of ``folders``: part of every cache key of what was computed from
    traces, so that a side file written or changed later is never answered from the cache."""
    out = []
    for d in sorted({str(f) for f in folders}):
        for name in sorted(NON_TRACE_NAMES):
            p = Path(d) / name
            if p.is_file():
                out.append((d, name, cache.file_key(p)))
    return out
