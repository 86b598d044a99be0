"""Cross-rank wait bounded by the kernel, and validation of cross-rank matches (matched / accepted /
rejected, and why), on hand-built traces (arithmetic in the asserts) and on every committed trace."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.runner.pipeline import analyze_paths
from tracekit.analyses.registry import AnalysisWarning
from tracekit.runner.run import analyze
from tracekit.cli import main
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder

ROOT = Path(__file__).parents[2]
COMMITTED = sorted({p.parent for base in ("sample_traces", "tests/data/reference")
                    for p in (ROOT / base).rglob("*.json*") if p.name not in ("run.json", "compiled_kernels.json")})


def two_ranks(tmp_path, colls):  # noqa: ANN001, ANN201
    """``colls``: per collective ``(coll, (start0, dur0, nelems0), (start1, dur1, nelems1))`` in µs, launched
    1 µs before rank 0's start; one step [0, 10000)."""
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.step(1, 0, 10000)
        for coll, *per_rank in colls:
            start, dur, n = per_rank[r]
            name = coll if isinstance(coll, str) else coll[r]
            tb.collective(name, start, dur, launch_at_us=per_rank[0][0] - 1, nelems=n)
        tb.write(tmp_path / f"rank{r}.json.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnalysisWarning)
        return analyze(load(tmp_path))


def test_wait_is_bounded_by_own_kernel(tmp_path):
    """A broadcast whose rank 0 kernel [100, 110) ends before rank 1 starts at 200 (LL protocol):
    rank 0 waited its whole 10 µs kernel, not 200 - 100 = 100 µs."""
    res = two_ranks(tmp_path, [("broadcast", (100, 10, 1000), (200, 5, 1000)),
                               ("allreduce", (300, 50, 1000), (320, 30, 1000))])
    w = res.waits.set_index(["rank", "step_seq"])["wait_us"]
    assert w[(0, 0)] == min(100 + 10, 200) - 100 == 10   # bounded by the kernel
    assert w[(1, 0)] == 0
    assert w[(0, 1)] == min(300 + 50, 320) - 300 == 20   # the usual case: latest start - own start
    assert w[(1, 1)] == 0
    r = res.ranks.set_index("rank")
    assert r.loc[0, "wait_total_us"] == 10 + 20 and r.loc[0, "wait_total_us"] <= r.loc[0, "comm_total_us"] == 10 + 50
    assert res.meta["matching"]["rejected"] == 0  # a broadcast need not overlap: it is not checked


def test_rejected_matches_and_why(tmp_path):
    """#0 op differs, #1 size differs, #2 all-reduce kernels that never overlap (rank 1 starts 1000 µs after
    rank 0 ended), #3 all_to_all with uneven sizes (kept, flagged), #4 fine."""
    res = two_ranks(tmp_path, [
        (("allreduce", "allgather"), (100, 10, 1000), (100, 10, 1000)),
        ("allreduce", (200, 10, 1000), (200, 10, 2000)),
        ("allreduce", (300, 10, 1000), (1310, 10, 1000)),
        ("all_to_all", (2000, 10, 1000), (2005, 10, 3000)),
        ("allreduce", (3000, 10, 1000), (3004, 10, 1000)),
    ])
    inst = res.instances.sort_values("step_seq")
    assert inst["check"].tolist() == ["op differs", "size differs", "kernels do not overlap",
                                      "size differs (uneven split)", "ok"]
    assert inst["accepted"].tolist() == [False, False, False, True, True]
    assert res.meta["matching"] == {"matched": 5, "accepted": 2, "rejected": 3, "flagged": {"size differs (uneven split)": 1},
                                    "rejected_by": {"op differs": 1, "size differs": 1, "kernels do not overlap": 1}}
    # only the accepted ones count: rank 0 waits 5 (#3) + 4 (#4), the 1010 µs of #2 are not a wait
    assert sorted(res.waits["step_seq"].unique()) == [3, 4]
    assert res.ranks.set_index("rank").loc[0, "wait_total_us"] == 5 + 4


def test_overlap_tolerance(tmp_path):
    """Kernels 40 µs apart (within the 50 µs clock tolerance) still match; 60 µs apart do not."""
    res = two_ranks(tmp_path, [("allreduce", (100, 10, 1000), (150, 10, 1000)),
                               ("allreduce", (300, 10, 1000), (370, 10, 1000))])
    assert res.instances.sort_values("step_seq")["check"].tolist() == ["ok", "kernels do not overlap"]


def test_text_report_notes_rejections_under_the_wait_table(tmp_path):
    two_ranks(tmp_path, [("allreduce", (300, 10, 1000), (1310, 10, 1000)),
                         ("allreduce", (3000, 10, 1000), (3004, 10, 1000))])
    r = CliRunner().invoke(main, ["analyze", str(tmp_path)])
    assert r.exit_code == 0, r.output
    out = r.stdout
    section = out[out.index("Cross-rank wait"):]
    assert ("note: 2 collectives matched across ranks, 1 accepted; 1 rejected (1 kernels do not overlap) and left "
            "out of the wait figures") in section
    assert "warning:" in r.stderr and "1 rejected" in r.stderr


@pytest.mark.parametrize("run", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_wait_never_exceeds_comm_on_committed_traces(run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyze_paths([str(run)])
    if res.waits.empty:
        pytest.skip("no cross-rank matches (CPU-only or one rank)")
    own = res.collectives[["rank", "pg_name", "step", "step_seq", "dur_us"]]
    own = own.assign(pg_name=own["pg_name"].astype(object).fillna("?"))  # the match names unknown groups "?"
    w = res.waits.merge(own, on=["rank", "pg_name", "step", "step_seq"], how="left")
    assert (w["wait_us"] >= 0).all()
    assert (w["wait_us"] <= w["dur_us"] + 1e-9).all(), w[w["wait_us"] > w["dur_us"]]
    r = res.ranks.dropna(subset=["wait_total_us"])
    # a CPU run has no GPU communication time: its wait is bounded by its collectives' own (CPU range) time
    coll_total = res.collectives.groupby("rank")["dur_us"].sum()
    bound = r["comm_total_us"].fillna(r["rank"].map(coll_total))
    assert (r["wait_total_us"] <= bound + 1e-6).all(), r[["rank", "wait_total_us", "comm_total_us"]]
    m = res.meta["matching"]
    assert m["matched"] == len(res.instances) == m["accepted"] + m["rejected"]
