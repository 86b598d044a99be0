"""Scenarios are declared once (tracekit.replay.changes): the CLI, the library keywords, the Scenario type, --sweep
and the docs table all come from the declarations; the graph's typed edges and its exclusive-resource queue."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli.whatif import whatif_command
from tracekit.errors import ConfigError
from tracekit.replay import scenarios
from tracekit.replay.api import whatif
from tracekit.replay.changes import FAMILIES, OPTIONS, options_table, update
from tracekit.replay.family import Phase
from tracekit.replay.graph import (ARRIVE, CPU_SEG, GPU_OP, GROUP, ORIGIN, SYNC_SEG, EdgeKind, Graph, NodeKind,
                                   Resource)
from tracekit.replay.scenario_spec import Scenario

ROOT = Path(__file__).resolve().parents[2]


def test_every_option_is_a_cli_option_a_keyword_and_a_field() -> None:
    cli = {p.name for p in whatif_command.params}
    assert set(OPTIONS) <= cli
    assert list(Scenario.__dataclass_fields__) == list(OPTIONS)
    for name, o in OPTIONS.items():
        param = next(p for p in whatif_command.params if p.name == name)
        assert param.opts == [o.flag]
        assert getattr(param, "is_flag", False) == (o.kind is bool)


def test_families_have_distinct_positions_and_phased_edits() -> None:
    assert [f.position for f in FAMILIES] == sorted({f.position for f in FAMILIES})
    assert all(f.edits and set(f.edits) <= set(Phase) for f in FAMILIES)


def test_scenario_name_and_changes_follow_the_declaration_order() -> None:
    sc = Scenario(world_size=4, bucket_cap_mb=5.0, no_graph_breaks=True)
    assert sc.name == "bucket-cap-mb=5 no-graph-breaks world-size=4"
    assert sc.changes() == {"bucket_cap_mb": 5.0, "no_graph_breaks": True, "world_size": 4}
    assert sc.replace(world_size=None).changes() == {"bucket_cap_mb": 5.0, "no_graph_breaks": True}
    assert Scenario(bucket_cap_mb=5.0) == Scenario(bucket_cap_mb=5.0) != Scenario(bucket_cap_mb=1.0)
    with pytest.raises(TypeError):
        Scenario(bucket_cap=5.0)


def test_bounds_choices_and_family_checks_come_from_the_declarations() -> None:
    with pytest.raises(ConfigError, match="--bucket-cap-mb must be > 0, got -1"):
        Scenario(bucket_cap_mb=-1.0).validate()
    with pytest.raises(ConfigError, match="--world-size must be >= 1, got 0"):
        Scenario(world_size=0).validate()
    with pytest.raises(ConfigError, match="--comm-hook must be bf16 or fp16, got int8"):
        Scenario(comm_hook="int8").validate()
    with pytest.raises(ConfigError, match="both set the network's bandwidth"):
        Scenario(bandwidth_x=2.0, busbw_gbps=10.0).validate()


def test_sweep_takes_every_option_but_the_flags() -> None:
    out = scenarios.expand(Scenario(), ["world-size=2,4", "comm-hook=bf16"])
    assert [s.name for s in out] == ["comm-hook=bf16 world-size=2", "comm-hook=bf16 world-size=4"]
    with pytest.raises(ConfigError, match="OPTION one of bucket-cap-mb, first-bucket-cap-mb, comm-hook"):
        scenarios.expand(Scenario(), ["no-graph-breaks=1"])


def test_the_docs_table_is_the_declarations() -> None:
    page = (ROOT / "docs" / "whatif.md").read_text(encoding="utf-8")
    assert page == update(page), "run `python -m tracekit.replay.changes --write docs/whatif.md`"
    assert options_table().count("\n") == len(OPTIONS) + 1
    with pytest.raises(ValueError, match="whatif:options:begin"):
        update("no markers")


def test_the_library_keywords_are_the_options(tmp_path: Path) -> None:
    params = inspect.signature(whatif).parameters
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    with pytest.raises(TypeError, match="bucket_cap"):
        whatif(tmp_path, bucket_cap=5)


def test_the_cli_passes_declared_options_through(tmp_path: Path) -> None:
    res = CliRunner().invoke(whatif_command, [str(tmp_path), "--busbw-gbps", "-1"])
    assert res.exit_code == 2 and "--busbw-gbps must be > 0" in res.output


def _tiny() -> Graph:
    """CPU segment 0 -> 1 (thread), GPU op 2 launched by 0, GPU op 3 after 2 on its stream, sync 4 ending at 3."""
    g = Graph()
    g.add(10, CPU_SEG, 0, 0, 10, [(ORIGIN, 0)])
    g.add(10, CPU_SEG, 0, 10, 20, [(0, 0)])
    g.add(5, GPU_OP, 0, 12, 17, [(0, 2)])
    g.add(5, GPU_OP, 0, 17, 22, [(2, 0), (0, 3)])
    s = g.add(0, SYNC_SEG, 0, 20, 25, [(1, 0)])
    g.set_end(s, [(3, 3)])
    return g


def test_edges_are_typed_by_what_they_join() -> None:
    g = _tiny()
    assert [e.kind for e in g.edges(0)] == [EdgeKind.ORIGIN]
    assert [e.kind for e in g.edges(1)] == [EdgeKind.THREAD]
    assert [e.kind for e in g.edges(2)] == [EdgeKind.LAUNCH]
    assert [e.kind for e in g.edges(3)] == [EdgeKind.STREAM, EdgeKind.LAUNCH]
    assert [(e.pred, e.delay, e.kind) for e in g.edges(4, end=True)] == [(3, 3, EdgeKind.SYNC)]
    assert NodeKind(g.kind[4]) is NodeKind.SYNC


def test_a_transfer_edit_keeps_duration_and_end_edges_equal() -> None:
    g = Graph()
    a0 = g.add(0, ARRIVE, 0, 0, 0)
    a1 = g.add(0, ARRIVE, 1, 5, 5)
    n0 = g.add(0, GPU_OP, 0, 0, 9, [(a0, 0)])
    n1 = g.add(0, GPU_OP, 1, 5, 9, [(a1, 0)])
    g.link([(a0, n0, 4), (a1, n1, 4)])
    group = g.end_edges(n0)[0][0]
    assert g.kind[group] == GROUP and g.edges(n0, end=True)[0].kind is EdgeKind.TRANSFER
    g.set_transfer(n0, 7)
    assert g.dur[n0] == 7 and g.end_edges(n0) == [(group, 7)]
    g.extend_transfer(n0, 3)
    assert g.dur[n0] == 10 and g.end_edges(n0) == [(group, 10)]
    g.clear_transfer(n1)
    assert g.dur[n1] == 0 and g.end_edges(n1) == []


def test_a_resource_queues_jobs_behind_the_one_whose_place_they_take() -> None:
    pool = Resource(2)  # two workers: the third job waits for the first, the fourth for the second
    got = []
    for node in (10, 11, 12, 13):
        got.append(pool.edge(gap=5))
        pool.queue(node)
    assert got == [[], [], [(10, 5)], [(11, 5)]]
    stream = Resource(1)
    stream.queue(7)
    assert stream.ahead() == 0 and stream.edge(0) == [(7, 0)]
    with pytest.raises(ValueError):
        Resource(0)


def test_a_copy_is_edited_alone() -> None:
    g = _tiny()
    c = g.copy()
    c.add_start(3, [(1, 0)])
    c.dur[0] = 99
    assert g.start_edges(3) == [(2, 0), (0, 3)] and c.start_edges(3) == [(2, 0), (0, 3), (1, 0)]
    assert g.dur[0] == 10
