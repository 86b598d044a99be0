"""Missing ``distributedInfo`` (or one field of it) is unknown, not a different run (issue 23, item 4)."""

from __future__ import annotations

import json
import warnings

from click.testing import CliRunner

from tracekit.cli import main
from tracekit.errors import TraceLoadWarning
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder


def _rank(rank: int, **kw) -> TraceBuilder:  # noqa: ANN003
    tb = TraceBuilder(rank=rank, world_size=2, **kw)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 0, 10, launch_at_us=0)
    tb.nccl_allreduce(20, 10, launch_at_us=12, nelems=1000)
    return tb


def test_no_distributed_info_is_not_a_mismatch(tmp_path):
    _rank(0).write(tmp_path / "rank0.json")
    _rank(1, distributed=False).write(tmp_path / "rank1.json")  # no distributedInfo at all
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ts = load(tmp_path)
    assert sorted(ts.ranks) == [0, 1] and ts.world_size == 2
    msgs = [str(w.message) for w in caught if issubclass(w.category, TraceLoadWarning)]
    assert any("took rank 1 from the file name" in m for m in msgs)
    assert any("record no distributedInfo.world_size (rank1.json)" in m for m in msgs)
    assert not any("different runs" in m for m in msgs)


def test_missing_world_size_field_only(tmp_path):
    _rank(0).write(tmp_path / "a.json")
    tb = _rank(1)
    doc = tb.to_dict()
    del doc["distributedInfo"]["world_size"]
    (tmp_path / "b.json").write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["analyze", str(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert "different runs" not in res.output
    out = json.loads(res.stdout)
    assert out["meta"]["ranks"] == [0, 1] and out["meta"]["world_size"] == 2


def test_two_known_world_sizes_still_differ(tmp_path):
    _rank(0).write(tmp_path / "rank0.json")
    TraceBuilder(rank=1, world_size=4).write(tmp_path / "rank1.json")
    res = CliRunner().invoke(main, ["analyze", str(tmp_path)])
    assert res.exit_code == 2
    assert "world_size differs" in res.output and "has 2" in res.output and "has 4" in res.output
