"""A graph break that holds a host sync (a data-dependent ``.item()``): named in ``break_boundaries``
(``host_sync_us``) and ``graph_breaks`` (``sync_breaks``), and removed with the break by ``--no-graph-breaks``."""

from __future__ import annotations

from pathlib import Path

import tracekit
from tracekit.replay import scenarios as sc

from tests.replay.test_scenarios import _kernel_end, _scenario, _step_us
from tests.tracebuilder import TraceBuilder


def _item_break_run(tmp_path: Path, sync: bool = True) -> Path:
    """One rank, step [0, 110] µs. Graph A (region [5, 30], CompiledFunction [10, 28]) launches a 40 µs kernel at
    20 ([20, 22]; it runs [22, 62]); the eager code between the graphs blocks in cudaStreamSynchronize [32, 64]
    (the kernel's end, 2 µs to wake up: an ``.item()``); graph B (region [66, 100], CompiledFunction [68, 94])
    launches a 10 µs kernel at 76 ([76, 78]; it runs [78, 88])."""
    tb = TraceBuilder(rank=0, world_size=1)
    tmp_path.mkdir(parents=True, exist_ok=True)
    tb.step(1, 0, 110)
    tb.cpu_op("Torch-Compiled Region: 0/0", 5, 25)
    tb.cpu_op("CompiledFunction", 10, 18)
    tb.kernel("triton_a", 22, 40, launch_at_us=20)
    if sync:
        tb.cpu_op("aten::item", 31, 34)
        tb.launch(32, 990, name="cudaStreamSynchronize", dur_us=32)
    tb.cpu_op("Torch-Compiled Region: 1/0", 66, 34)
    tb.cpu_op("CompiledFunction", 68, 26)
    tb.kernel("triton_b", 78, 10, launch_at_us=76)
    return tb.write(tmp_path / "rank0.trace.json.gz")


def test_the_break_tables_name_the_sync(tmp_path: Path) -> None:
    res = tracekit.analyze(_item_break_run(tmp_path / "sync"))
    b = res.tables["break_boundaries"]
    assert list(b["kind"]) == ["graph_break"] and list(b["host_sync_us"]) == [32.0]
    assert list(res.tables["graph_breaks"]["sync_breaks"]) == [1]
    res = tracekit.analyze(_item_break_run(tmp_path / "plain", sync=False))
    assert list(res.tables["break_boundaries"]["host_sync_us"]) == [0.0]
    assert list(res.tables["graph_breaks"]["sync_breaks"]) == [0]


def test_no_graph_breaks_removes_the_sync_with_the_break(tmp_path: Path) -> None:
    base, out, start, end = _scenario([_item_break_run(tmp_path)], sc.Scenario(no_graph_breaks=True))
    # the CPU work from A's last launch (22) to B's first (76) goes, the sync with it: B's launch call [76, 78]
    # starts at 22, then the rest of B's op and region (16 + 6 µs) and the step's last 10 µs
    assert _step_us(out, start, end) == [22 + 2 + 16 + 6 + 10]
    assert _kernel_end(out, end, 0, 78) == 62 + 10  # B's kernel still follows A's on the stream
    w = tracekit.whatif(_item_break_run(tmp_path / "w"), no_graph_breaks=True)
    assert any("1 host syncs in the eager code at the breaks" in n for n in w.notes)
