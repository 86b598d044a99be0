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


# -- the header's text: long rank lists read as text (decode._info_of) -----------------------------

BIG = 4096  # a list of this many ranks makes distributedInfo longer than decode._INFO_PLAIN_BYTES


def _both(info: bytes, events: bytes = b"[]") -> tuple[object, object]:
    """``distributedInfo`` (its text ``info``) as the typed decode reads it and as the loose decode does
    (decoded, then compacted): both through meta_of. The typed one two ways, which must agree: the lists
    cut out of the whole document's text before decoding it (decode.typed_decode, what the loaders call),
    and read from ``distributedInfo``'s own text (decode._info_of)."""
    text = b'{"distributedInfo": ' + info + b', "traceEvents": ' + events + b'}'
    cut, ranges = decode.typed_decode(text)
    typed, loose = decode._TYPED.decode(text), decode._LOOSE.decode(text)
    got = decode.meta_of(cut, ranges)["distributedInfo"]
    assert _same(got, decode.meta_of(typed)["distributedInfo"])
    return got, decode.meta_of(loose)["distributedInfo"]


def _same(a: object, b: object) -> bool:
    """Equal, with ranges where the reference has ranges and lists where it has lists."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _ranks_text(ranks: list, sep: str = ", ") -> str:
    return "[" + sep.join(str(r) for r in ranks) + "]"


@pytest.mark.parametrize("ranks_text", [
    _ranks_text(list(range(BIG))),                          # the world, as json.dumps writes it
    _ranks_text(list(range(BIG)), ","),                     # no space
    _ranks_text(list(range(3, 3 + 8 * BIG, 8)), ",  "),     # strided, two spaces
    _ranks_text(list(range(BIG - 1)) + [BIG + 5]),          # the last one off: no progression
    _ranks_text(list(range(BIG // 2)) + [BIG // 2 + 1] + list(range(BIG // 2 + 1, BIG))),  # a middle one off
    _ranks_text(list(range(BIG))).replace("1, 2,", "1.0, 2,"),   # a float: equal as a number, so a range
    _ranks_text(list(range(BIG))).replace("[0, 1", "[ 0, 1"),     # odd spacing: decoded, then compacted
    _ranks_text(list(range(BIG))).replace(", 7,", ",7,"),         # mixed separators
    _ranks_text(list(range(BIG, 0, -1))),                   # decreasing: kept as a list
    _ranks_text(list(range(-5, BIG))),                      # negative ranks
    _ranks_text([[i] for i in range(BIG)]),                 # nested lists
    _ranks_text([str(i) for i in range(BIG)]),              # strings
    "[]",
])
def test_rank_lists_read_from_the_text_equal_the_decoded_ones(ranks_text: str) -> None:
    other = _ranks_text(list(range(BIG)))
    text = ('{"backend": "nccl", "rank": 3, "ranks": ' + other + ', "pg_config": [{"pg_name": "0", "ranks": '
            + ranks_text + '}, {"pg_name": "1", "ranks": [0, 1]}, {"pg_name": "\\"ranks\\": [0, 1", "ranks": '
            + other + '}], "note": "x", "nccl_version": "2.21.5"}').encode()
    got, want = _both(text)
    assert _same(got, want)
    assert isinstance(got["pg_config"][2]["ranks"], range)
    assert got["ranks"] == list(range(BIG)) and isinstance(got["ranks"], list)  # outside pg_config: a list
    # a user's string that looks like the text path's marker: the plain path, the same value
    got, want = _both(text.replace(b'"x"', b'"\\u0000tracekit-ranks:0"'))
    assert _same(got, want) and got["note"] == "\x00tracekit-ranks:0"
    # an event's own "ranks" list right after the header (within the cut's window): read as written
    event = ('[{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0, "args": '
             '{"ranks": ' + _ranks_text(list(range(BIG))) + '}}]').encode()
    got, want = _both(text, event)
    assert _same(got, want) and isinstance(got["pg_config"][2]["ranks"], range)


def test_the_cut_before_decoding_takes_the_world_and_its_groups_and_nothing_else() -> None:
    """decode.typed_decode cuts the progression lists of distributedInfo's groups (the world and a strided
    group), follows group to group within its window, and leaves the events' text alone."""
    groups = ('[{"pg_name": "0", "ranks": ' + _ranks_text(list(range(BIG))) + '}, {"pg_name": "1", "pg_desc": "'
              + "d" * 200 + '", "ranks": ' + _ranks_text(list(range(1, BIG * 4, 4))) + '}]')
    text = ('{"schemaVersion": 1, "distributedInfo": {"rank": 1, "pg_config": ' + groups + '}, "traceEvents": '
            '[{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0}]}').encode()
    doc, ranges = decode.typed_decode(text)
    assert ranges == [range(BIG), range(1, BIG * 4, 4)]
    assert len(bytes(doc.distributedInfo)) < 500  # the lists (~20 KB each) are not in the text msgspec scanned
    cfg = decode.meta_of(doc, ranges)["distributedInfo"]["pg_config"]
    assert cfg[0]["ranks"] == range(BIG) and cfg[1]["ranks"] == range(1, BIG * 4, 4)
    assert len(doc.traceEvents) == 1
    # a group farther than the window from the one before: not cut first, still a range (from its own text)
    far = text.replace(b"d" * 200, b"d" * (decode._GROUP_WINDOW + 100))
    doc, ranges = decode.typed_decode(far)
    assert ranges == [range(BIG)]
    assert decode.meta_of(doc, ranges)["distributedInfo"]["pg_config"][1]["ranks"] == range(1, BIG * 4, 4)


def test_a_16384_rank_world_is_read_without_decoding_its_ints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The world's list is compared as text: decode._as_range (the decoded lists' path) never sees it."""
    import msgspec

    seen: list[int] = []
    real = decode._as_range
    monkeypatch.setattr(decode, "_as_range", lambda ranks: seen.append(len(ranks)) or real(ranks))
    text = ('{"distributedInfo": {"rank": 1, "pg_config": [{"pg_name": "0", "ranks": '
            + _ranks_text(list(range(16384))) + '}, {"pg_name": "1", "ranks": ' + _ranks_text(list(range(1, 16384, 8)))
            + '}]}, "traceEvents": []}').encode()
    meta = decode.meta_of(msgspec.json.decode(text, type=decode._TypedTrace))
    cfg = meta["distributedInfo"]["pg_config"]
    assert cfg[0]["ranks"] == range(16384) and cfg[1]["ranks"] == range(1, 16384, 8)
    assert seen == []


@pytest.mark.parametrize("info", ["oops", [1, 2], 5, None, {"pg_config": "not a list"}, {"pg_config": [3, "x"]}])
def test_an_odd_distributed_info_is_kept_as_written(tmp_path: Path, info: object) -> None:
    """The header's text path (decode._info_of) takes any JSON value: kept as it is, on both decode paths."""
    import json

    path = _trace(tmp_path, 0, 2, [_group("0", [0, 1])])
    doc = json.loads(path.read_text())
    doc["distributedInfo"] = info
    path.write_text(json.dumps(doc))
    for meta in (decode.decode(path)[0], decode.decode_columns(path)[0], decode.decode_columns(path, 1024)[0]):
        assert meta["distributedInfo"] == info


def test_a_file_cut_inside_the_worlds_rank_list_is_a_one_line_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tracekit.cli import main

    path = _trace(tmp_path, 0, 16384, [_group("0", list(range(16384)))])
    text = path.read_text()
    cut = text.index("8191, 8192")
    path.write_text(text[:cut])
    res = CliRunner().invoke(main, ["analyze", str(path)])
    assert res.exit_code == 2
    assert res.output.strip().startswith(f"error: {path}: truncated JSON") and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
