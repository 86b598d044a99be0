"""How ranks are inferred for traces from elsewhere (no ``distributedInfo``): a lone file is
rank 0 of world size 1 with a note, ``rank<N>`` / ``worker<N>`` in the name are hints, and
only several files that cannot be told apart are an error."""

from __future__ import annotations

import warnings

import pytest

from tracekit.runner.engine import map_paths
from tracekit.runner.run import analyze
from tracekit.errors import TraceInputError
from tracekit.traces.loader import TraceLoadWarning, load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder


def plain(path, rank=0):  # noqa: ANN001, ANN201
    """A one-step GPU trace without distributedInfo: 20 µs compute, 10 µs comm."""
    tb = TraceBuilder(rank=rank, world_size=1, distributed=False)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 10, 20, launch_at_us=5)
    tb.nccl_allreduce(40, 10, launch_at_us=30, nelems=1000)
    return tb.write(path)


@pytest.mark.parametrize("name", ["trace.json.gz", "train_resnet18.json.gz", "host_1234.1623.pt.trace.json"])
@pytest.mark.parametrize("as_folder", [False, True])
def test_single_file_is_rank_zero_with_a_note(tmp_path, name, as_folder):
    p = plain(tmp_path / name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLoadWarning)  # a note, not a warning
        ts = load(tmp_path if as_folder else p)
    assert list(ts.ranks) == [0] and ts.world_size == 1
    assert len(ts.notes) == 1 and name in ts.notes[0] and "rank 0 of world size 1" in ts.notes[0]
    res = analyze(ts)
    assert any("rank 0 of world size 1" in n for n in res.meta["notes"])
    assert res.ranks["compute_total_us"].tolist() == [20] and res.ranks["comm_total_us"].tolist() == [10]


def test_single_file_through_the_engine(tmp_path):
    plain(tmp_path / "trace.json.gz")
    ts, tables = map_paths([str(tmp_path)])
    assert list(ts.ranks) == [0] and ts.notes
    assert tables["rank_totals"]["rank"].tolist() == [0]


@pytest.mark.filterwarnings("ignore:.*took rank 0 from the file name")  # the same warning, asserted for rank 1
def test_worker_in_kineto_name_is_a_rank_hint(tmp_path):
    plain(tmp_path / "worker0.1623143089861.pt.trace.json.gz")
    plain(tmp_path / "worker1.1623143089999.pt.trace.json.gz")
    with pytest.warns(TraceLoadWarning, match=r"took rank 1 from the file name \('worker<N>'\)"):
        ts = load(tmp_path)
    assert sorted(ts.ranks) == [0, 1] and ts.notes == []
    assert ts.ranks[1].path.name.startswith("worker1.")


def test_rank_in_name_wins_over_worker(tmp_path):
    plain(tmp_path / "worker0_rank3.json")
    with pytest.warns(TraceLoadWarning, match="took rank 3 from the file name \\('rank<N>'\\)"):
        ts = load(tmp_path)
    assert list(ts.ranks) == [3]


def test_dataloader_worker_is_not_a_hint(tmp_path):
    """``worker`` must start the word: ``dataloaderworker2`` says nothing about the rank."""
    plain(tmp_path / "dataloaderworker2.json")
    ts = load(tmp_path)
    assert list(ts.ranks) == [0] and ts.notes


def test_several_indistinguishable_files_are_an_error(tmp_path):
    a, b = plain(tmp_path / "a.json.gz"), plain(tmp_path / "b.json.gz")
    with pytest.raises(TraceInputError) as ei:
        load(tmp_path)
    msg = str(ei.value)
    assert "\n" not in msg and str(a) in msg and "one of 2 trace files" in msg and str(b) not in msg


def test_distributed_info_rank_wins(tmp_path):
    tb = TraceBuilder(rank=5, world_size=8)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 10, 20, launch_at_us=5)
    p = tb.write(tmp_path / "worker0.json")
    with pytest.warns(TraceLoadWarning, match="no trace for rank"):
        ts = load(p)
    assert list(ts.ranks) == [5] and ts.world_size == 8 and ts.notes == []


def test_many_ranks_from_file_names_warn_in_few_lines(tmp_path):
    """Five files named rank<N> without distributedInfo: the first three warn each, the other two are one
    line naming their ranks (16384 files would otherwise print 16384 lines)."""
    for r in range(5):
        plain(tmp_path / f"rank{r}.trace.json", rank=r)
    with pytest.warns(TraceLoadWarning) as rec:
        ts = load(tmp_path)
    msgs = [str(w.message) for w in rec if "distributedInfo.rank" in str(w.message)]
    assert len(msgs) == 4 and sorted(ts.ranks) == [0, 1, 2, 3, 4]
    assert sum("took rank" in m for m in msgs) == 3
    assert msgs[-1] == ("2 more rank files have no distributedInfo.rank: their ranks [3-4] were taken from their "
                        "file names too (rank3.trace.json, ...)")
