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


def _keys(traces: TraceSet, specs: list[registry.Table], options: AnalyzeOptions) -> dict[int, str | None]:
    """Every rank's entry key (module doc), once per analysis: the parts the ranks share (options, manifest,
    tables, code) and each folder's side files are hashed once, not once per rank. None for a rank without a
    file identity (:attr:`RankTrace.source_key` None: the cache is off, or a rank built from a frame)."""
    ranks = [(r, rt) for r, rt in traces.ranks.items() if rt.source_key is not None]
    if not ranks:
        return dict.fromkeys(traces.ranks)
    shared = cache.digest(RANK_TABLES, traces.world_size, options_key(options), traces.manifest,
                          tuple(t.name for t in specs), cache.code_key())
    sides: dict[Path, Any] = {}
    for _, rt in ranks:
        folder = Path(rt.path).parent
        if folder not in sides:
            sides[folder] = loader.side_files_key([folder])
    keys: dict[int, str | None] = dict.fromkeys(traces.ranks)
    for r, rt in ranks:
        keys[r] = cache.digest(shared, rt.source_key, str(rt.path), rt.rank, sides[Path(rt.path).parent])
    return keys


def options_key(options: AnalyzeOptions) -> tuple[AnalyzeOptions, str | None]:
    """``options`` as a cache key: with the identity of the ``peaks`` file where it is given as a path
    (``tracekit.analyze(run, peaks="gpu.json")``), so an edited file is read again."""
    peaks = options.peaks
    return options, cache.file_key(peaks) if isinstance(peaks, (str, os.PathLike)) else None


def _computed(rt: RankTrace, *, keys: dict[int, str | None], specs: list[registry.Table], options: AnalyzeOptions,
              world_size: int, manifest: Any) -> tuple[dict[str, Any], list[tuple[str, type[Warning]]]]:
    """:func:`registry.compute_rank_tables` of ``rt`` stored under its key (``keys[rt.rank]``; None: not
    stored), with the warnings it raised: this may run in a forked child, whose warnings would not reach the
    user, so they go back with the tables and the parent raises them (:func:`map_rank_tables`)."""
    return cache.memo_caught(RANK_TABLES, keys[rt.rank],
                             lambda: registry.compute_rank_tables(rt, specs=specs, options=options,
                                                                  world_size=world_size, manifest=manifest),
                             trim_after=False)


def map_rank_tables(traces: TraceSet, *, specs: list[registry.Table], options: AnalyzeOptions,
                    workers: int | None = None) -> dict[int, dict[str, Any]]:
    """``{rank: rank tables}`` for every rank, in rank order (:func:`registry.compute_rank_tables`): those the
    cache holds, computed before from the same inputs (module doc), read here; the others computed over
    :func:`~tracekit.runner.per_rank.map_ranks`' processes (none start when every rank is cached) and stored.
    The warnings the tables raise are raised here, once each, whether read or computed, in rank order."""
    keys = _keys(traces, specs, options)
    got: dict[int, tuple[dict[str, Any], list[tuple[str, type[Warning]]]]] = {}
    for r in traces.ranks:
        hit = cache.memo_lookup(RANK_TABLES, keys[r])
        if hit is not None:
            got[r] = hit
    if len(got) < len(traces.ranks):
        got |= map_ranks(traces, partial(_computed, keys=keys, specs=specs, options=options,
                                         world_size=traces.world_size, manifest=traces.manifest), workers,
                         skip=set(got))
        cache.trim()  # once for every rank stored (each rank's entry is stored without a trim)
    for r in traces.ranks:
        cache.rewarn(got[r][1])
    return {r: got[r][0] for r in traces.ranks}


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
