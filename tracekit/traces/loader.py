"""Find per-rank trace files, decode them in parallel and check they form one run.

Entry point: :func:`load` -> :class:`~tracekit.traces.traceset.TraceSet`.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from tracekit.errors import TraceInputError, TraceSetError
from tracekit.traces import decode
from tracekit.traces.traceset import RankTrace, TraceSet

TRACE_SUFFIXES = (".json", ".json.gz")
#: files in a run folder that are not traces
NON_TRACE_NAMES = {"run.json", "manifest.json"}
_RANK_IN_NAME = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)
#: below this many bytes in total, worker start-up costs more than it saves
PARALLEL_MIN_BYTES = 16 * 1024 * 1024


class TraceLoadWarning(UserWarning):
    """Something about the inputs is suspicious but analysis can continue."""


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
            files = sorted(
                f for f in p.rglob("*")
                if f.is_file() and f.name.endswith(TRACE_SUFFIXES) and f.name not in NON_TRACE_NAMES
            )
            if not files:
                raise TraceInputError(p, "directory contains no *.json or *.json.gz trace files")
            found.extend(files)
        elif p.is_file():
            found.append(p)
        else:
            raise TraceInputError(p, "no such file or directory")
    if not found:
        raise TraceInputError(", ".join(map(str, paths)) or "(none)", "no trace files given")
    return sorted(dict.fromkeys(found))


def _parse_one(path: Path) -> RankTrace:
    meta, df = decode.decode_table(path)
    return RankTrace.from_decoded(path, meta, df)


def _rank_of(rt: RankTrace) -> int:
    info = rt.meta.get("distributedInfo") or {}
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0:
        return rank
    m = _RANK_IN_NAME.search(rt.path.name)
    if m:
        warnings.warn(
            f"{rt.path}: no distributedInfo.rank in the trace; took rank {m.group(1)} from the file name",
            TraceLoadWarning, stacklevel=3,
        )
        return int(m.group(1))
    raise TraceInputError(rt.path, "no distributedInfo.rank in the trace and no 'rank<N>' in the file name")


def _pg_ranks(rt: RankTrace) -> dict[str, str]:
    """Process group name -> its ranks, as this trace declares them."""
    pgs = rt.distributed_info.get("pg_config") or []
    return {str(pg.get("pg_name")): str(pg.get("ranks")) for pg in pgs if isinstance(pg, dict)}


def _check_same_run(ranks: dict[int, RankTrace]) -> int | None:
    """Raise if the traces come from different runs; return the declared world size.

    Same run = same ``world_size`` and, for every process group that several
    files declare, the same member ranks. (A rank lists only the groups it belongs
    to, so subgroups legitimately differ between files.)
    """
    worlds = {rt.distributed_info.get("world_size"): rt for rt in ranks.values()}
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
    world = next(iter(worlds))
    return world if isinstance(world, int) and not isinstance(world, bool) and world > 0 else None


def load(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    skip_bad: bool = False,
    workers: int | None = None,
) -> TraceSet:
    """Load per-rank Chrome traces into a :class:`TraceSet`.

    - ``paths``: a run directory (searched recursively), a file, or a list of them.
    - The rank comes from the parsed ``distributedInfo.rank`` (never a regex over
      raw text); the file name's ``rank<N>`` is a fallback, with a warning.
    - Two files with one rank, or files whose ``world_size``/process-group config
      differ, raise :class:`TraceSetError`. Ranks missing for the declared world
      size give a :class:`TraceLoadWarning` and analysis goes on with the rest.
    - ``skip_bad``: a file that fails to parse is recorded in
      :attr:`TraceSet.skipped` (with a warning) instead of raising, as long as
      one good rank remains.
    - ``workers``: parallel decode processes (default: one per file, at most the
      CPU count; serial for small inputs).
    """
    files = find_trace_files(paths)
    results: list[RankTrace | TraceInputError] = []
    total = sum(f.stat().st_size for f in files)
    n_workers = workers if workers is not None else min(len(files), os.cpu_count() or 1)
    if n_workers > 1 and len(files) > 1 and (workers is not None or total >= PARALLEL_MIN_BYTES):
        with ProcessPoolExecutor(max_workers=n_workers) as pool:
            futures = [pool.submit(_guarded_parse, f) for f in files]
            results = [fu.result() for fu in futures]
    else:
        results = [_guarded_parse(f) for f in files]

    good: list[RankTrace] = []
    skipped: list[tuple[str, str]] = []
    for f, r in zip(files, results):
        if isinstance(r, TraceInputError):
            if not skip_bad:
                raise r
            skipped.append((str(f), r.problem))
            warnings.warn(f"skipped {f}: {r.problem}", TraceLoadWarning, stacklevel=2)
        else:
            good.append(r)
    if not good:
        raise TraceSetError("no readable trace among: " + "; ".join(f"{p}: {why}" for p, why in skipped))
    ts = _assemble(good, skipped)
    roots = [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if len(roots) == 1 and roots[0].is_dir():
        ts.root = roots[0]
        ts.manifest = read_run_manifest(roots[0])
    return ts


def read_run_manifest(run_dir: Path) -> dict[str, Any] | None:
    """The ``run.json`` written by ``tracekit profile`` in ``run_dir``, or None.

    An unreadable manifest only warns: the traces alone are still analyzable.
    """
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        return None
    try:
        doc = msgspec.json.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError) as e:
        warnings.warn(f"{path}: ignoring unreadable manifest ({e})", TraceLoadWarning, stacklevel=3)
        return None
    if not isinstance(doc, dict):
        warnings.warn(f"{path}: ignoring manifest that is not a JSON object", TraceLoadWarning, stacklevel=3)
        return None
    return doc


def _guarded_parse(path: Path) -> RankTrace | TraceInputError:
    try:
        return _parse_one(path)
    except TraceInputError as e:
        return e


def _assemble(traces: list[RankTrace], skipped: list[tuple[str, str]]) -> TraceSet:
    by_rank: dict[int, RankTrace] = {}
    for rt in traces:
        rt.rank = _rank_of(rt)
        if rt.rank in by_rank:
            raise TraceSetError(f"rank {rt.rank} appears twice: {by_rank[rt.rank].path} and {rt.path}")
        by_rank[rt.rank] = rt
    world_size = _check_same_run(by_rank)
    if world_size is not None:
        too_big = sorted(r for r in by_rank if r >= world_size)
        if too_big:
            raise TraceSetError(f"rank(s) {too_big} out of range for world_size {world_size}: "
                                + ", ".join(str(by_rank[r].path) for r in too_big))
        missing = sorted(set(range(world_size)) - set(by_rank))
        if missing:
            warnings.warn(
                f"world_size is {world_size} but no trace for rank(s) {missing}; analyzing ranks {sorted(by_rank)}",
                TraceLoadWarning, stacklevel=3,
            )
    ranks = dict(sorted(by_rank.items()))
    return TraceSet(ranks=ranks, world_size=world_size or len(ranks), skipped=skipped)
