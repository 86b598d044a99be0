"""Process groups' member lists in ``distributedInfo.pg_config``: torch writes every group with *all* its ranks
into each rank's trace, so on a large job each file repeats the world's rank list. The decoder keeps a long
arithmetic list as the equal ``range`` (tracekit.traces.decode.meta_of); everything that reads the groups
sees the same members."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import pytest

from tests.tracebuilder import TraceBuilder
from tracekit.errors import TraceSetError
from tracekit.traces import decode
from tracekit.traces.loader import load

MIN = decode.COMPACT_RANKS_MIN


def _group(name: str, ranks: list[int]) -> dict:
    return {"pg_name": name, "pg_desc": f"group {name}", "backend_config": "cuda:nccl", "pg_size": len(ranks),
            "ranks": ranks}


def _trace(tmp_path: Path, rank: int, world: int, groups: list[dict], name: str | None = None,
           device: int | None = None) -> Path:
    b = TraceBuilder(rank=rank, world_size=world, pg_config=groups, device=device)
    b.step(1, 0, 100)
    b.kernel("gemm", 10, 20, launch_at_us=5)
    b.nccl_allreduce(40, 20, launch_at_us=30, nelems=1024)
    return b.write(tmp_path / (name or f"rank{rank}.trace.json"), gz=False)


def test_long_arithmetic_rank_lists_become_ranges_and_others_stay(tmp_path: Path) -> None:
    world = 4 * MIN
    groups = [
        _group("0", list(range(world))),                    # the world: 0..N-1
        _group("1", list(range(2, world, 4))),              # a strided data-parallel group
        _group("2", [0, 1]),                                # a short group: kept as written
        _group("3", list(range(MIN - 1)) + [world - 1]),    # long but not a progression
    ]
    path = _trace(tmp_path, 0, world, groups)
    for meta in (decode.decode(path)[0], decode.decode_columns(path)[0], decode.decode_columns(path, 1024)[0]):
        cfg = meta["distributedInfo"]["pg_config"]
        assert cfg[0]["ranks"] == range(world) and isinstance(cfg[0]["ranks"], range)
        assert cfg[1]["ranks"] == range(2, world, 4) and len(cfg[1]["ranks"]) == MIN
        assert cfg[2]["ranks"] == [0, 1] and isinstance(cfg[2]["ranks"], list)
        assert cfg[3]["ranks"] == list(range(MIN - 1)) + [world - 1] and isinstance(cfg[3]["ranks"], list)
        assert [g["pg_size"] for g in cfg] == [world, MIN, 2, MIN]


def test_a_world_of_16384_ranks_costs_the_header_a_few_bytes(tmp_path: Path) -> None:
    """Without the range, every rank's header holds 16384 ints (~0.6 MB of objects; pickled from the
    engine's workers to the main process once per rank file)."""
    world = 16384
    path = _trace(tmp_path, 3, world, [_group("0", list(range(world)))])
    meta = decode.decode_columns(path)[0]
    assert len(pickle.dumps(meta)) < 2048
    assert 16383 in meta["distributedInfo"]["pg_config"][0]["ranks"]


def test_files_of_one_run_with_compacted_groups_load_together(tmp_path: Path) -> None:
    world = 2 * MIN
    for r in (0, 1):
        _trace(tmp_path, r, world, [_group("0", list(range(world)))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the ranks not given
        ts = load(tmp_path)
    assert sorted(ts.ranks) == [0, 1] and ts.world_size == world


def test_a_differing_long_group_is_still_a_different_run(tmp_path: Path) -> None:
    world = 2 * MIN
    _trace(tmp_path, 0, world, [_group("0", list(range(world)))])
    _trace(tmp_path, 1, world, [_group("0", list(range(1, world + 1)))])
    with pytest.raises(TraceSetError, match=rf"group '0'.*\[0\.\.{world - 1}\] \({world} ranks\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load(tmp_path)


def test_a_batch_sends_the_ranks_shared_header_parts_once(tmp_path: Path) -> None:
    """The engine's batch makes equal device lists and group lists of its ranks one object, which pickle
    sends once (each rank's own facts, its rank, stay its own)."""
    from tracekit.analyses import registry
    from tracekit.runner import engine

    world = 2 * MIN
    # (one GPU seen by every rank: the same device list in each header)
    paths = [_trace(tmp_path, r, world, [_group("0", list(range(world))), _group("1", [0, 1])], device=0)
             for r in (0, 1, 2)]
    job = engine.RankJob(options=registry.AnalyzeOptions(), world_size=world, n_files=world)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batch = engine.rank_batch([(str(p), p.stat().st_size) for p in paths], job)
    metas = [f.meta for f in pickle.loads(pickle.dumps(batch)).files]
    assert metas[0]["deviceProperties"] is metas[2]["deviceProperties"]
    assert metas[0]["distributedInfo"]["pg_config"] is metas[1]["distributedInfo"]["pg_config"]
    assert [m["distributedInfo"]["rank"] for m in metas] == [0, 1, 2]
    assert metas[1]["distributedInfo"]["pg_config"][1]["ranks"] == [0, 1]


@pytest.mark.parametrize("ranks", [
    [str(i) for i in range(MIN)],       # strings
    [True] + list(range(1, MIN)),       # a bool first
    list(range(MIN - 1)) + [None],      # a null last
    [[i] for i in range(MIN)],          # nested lists
    list(range(MIN, 0, -1)),            # decreasing
])
def test_odd_long_rank_lists_are_kept_as_written(tmp_path: Path, ranks: list) -> None:
    path = _trace(tmp_path, 0, 2 * MIN, [_group("0", ranks)])
    for meta in (decode.decode(path)[0], decode.decode_columns(path)[0]):
        assert meta["distributedInfo"]["pg_config"][0]["ranks"] == ranks
        assert isinstance(meta["distributedInfo"]["pg_config"][0]["ranks"], list)
