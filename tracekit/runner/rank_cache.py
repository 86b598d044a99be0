"""A rank's tables through the cache (:mod:`tracekit.traces.cache`): computed once per file, options and code.

A rank's tables (:func:`tracekit.analyses.registry.compute_rank_tables`) follow from its trace file and
what the analysis was asked (the tables, :class:`~tracekit.analyses.options.AnalyzeOptions`, the run's
manifest, its world size, the rank) and tracekit's code. Their entry key is a hash of all of these
(:func:`tracekit.traces.cache.code_key` for the code: any change to tracekit is a new key), so a second
``analyze`` of the same files reads each rank's tables instead of computing them, and a changed file, option
or tracekit never reads another's.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

from tracekit.analyses import registry
from tracekit.analyses.options import AnalyzeOptions
from tracekit.runner.per_rank import map_ranks
from tracekit.traces import cache, loader
from tracekit.traces.traceset import RankTrace, TraceSet

#: the cache kind of a rank's tables on the parse path, and of a batch of rank files on the engine path
RANK_TABLES = "rank_tables"
ENGINE_BATCHES = "engine_batches"


def _key(rt: RankTrace, specs: list[registry.Table], options: AnalyzeOptions, world_size: int,
         manifest: Any) -> str | None:
    if rt.source_key is None:
        return None
    return cache.digest(RANK_TABLES, rt.source_key, str(rt.path), rt.rank, world_size, options_key(options),
                        manifest, loader.side_files_key([Path(rt.path).parent]), tuple(t.name for t in specs),
                        cache.code_key())


def options_key(options: AnalyzeOptions) -> tuple[AnalyzeOptions, str | None]:
    """``options`` as a cache key: with the identity of the ``peaks`` file where it is given as a path
    (``tracekit.analyze(run, peaks="gpu.json")``), so an edited file is read again."""
    peaks = options.peaks
    return options, cache.file_key(peaks) if isinstance(peaks, (str, os.PathLike)) else None


def rank_tables(rt: RankTrace, *, specs: list[registry.Table], options: AnalyzeOptions, world_size: int,
                manifest: Any) -> dict[str, Any]:
    """:func:`registry.compute_rank_tables` of ``rt``, read from the cache where it was computed before with
    the same inputs (module doc), else computed and stored. A rank without a file identity
    (:attr:`RankTrace.source_key` None: the cache is off, or a rank built from a frame) is computed."""
    return cache.memo(RANK_TABLES, _key(rt, specs, options, world_size, manifest),
                      lambda: registry.compute_rank_tables(rt, specs=specs, options=options, world_size=world_size,
                                                           manifest=manifest), trim_after=False)


def map_rank_tables(traces: TraceSet, *, specs: list[registry.Table], options: AnalyzeOptions,
                    workers: int | None = None) -> dict[int, dict[str, Any]]:
    """``{rank: rank_tables(rank)}`` for every rank, in rank order: those the cache holds read here, the
    others computed over :func:`~tracekit.runner.per_rank.map_ranks`' processes (none start when every rank
    is cached)."""
    got: dict[int, dict[str, Any]] = {}
    for r, rt in traces.ranks.items():
        found, value = cache.memo_get(RANK_TABLES, _key(rt, specs, options, traces.world_size, traces.manifest))
        if found:
            got[r] = value
    if len(got) < len(traces.ranks):
        got |= map_ranks(traces, partial(rank_tables, specs=specs, options=options, world_size=traces.world_size,
                                         manifest=traces.manifest), workers, skip=set(got))
        cache.trim()  # once for every rank stored (rank_tables does not trim after each)
    return {r: got[r] for r in traces.ranks}


def batch_key(files: list[tuple[str, int]], job: Any, specs: list[registry.Table]) -> str | None:
    """The entry key of a batch of rank files on the engine path (``job``: its
    :class:`~tracekit.runner.engine.RankJob`): every file's path and identity, the job, the tables and the
    code. None when the cache is off or a file cannot be read (the map then reports it). A file that changes
    while its batch is mapped is stored under the identity it had before, which it never has again (its ctime
    moved): such an entry is never read."""
    if cache.settings().root is None:
        return None
    keys = [cache.file_key(p) for p, _ in files]
    if None in keys:
        return None
    return cache.digest(ENGINE_BATCHES, [p for p, _ in files], keys, job,
                        loader.side_files_key(Path(p).parent for p, _ in files), tuple(t.name for t in specs),
                        cache.code_key())
