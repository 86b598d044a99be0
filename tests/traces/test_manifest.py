"""The typed run.json reader: every committed manifest, hostile field types, and the writer/reader round trip."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from tests.explain_builders import write_run
from tracekit.cli import main
from tracekit.traces.manifest import Manifest, ManifestWarning, decode_manifest, read_manifest, write_manifest

ROOT = Path(__file__).parents[2]
COMMITTED = sorted(ROOT.glob("sample_traces/**/run.json")) + sorted(ROOT.glob("tests/data/**/run.json"))


def _contained(a: object, b: object, path: str = "$") -> list[str]:
    """Where ``a`` (the file) has something ``b`` (the typed manifest, as builtins) lacks or differs."""
    if isinstance(a, dict):
        return [p for k, v in a.items() for p in ([f"{path}.{k} missing"] if k not in b
                                                  else _contained(v, b[k], f"{path}.{k}"))]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path} length"]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in _contained(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


@pytest.mark.parametrize("path", COMMITTED, ids=[str(p.relative_to(ROOT)) for p in COMMITTED])
def test_every_committed_manifest_reads_whole_and_without_warnings(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = read_manifest(path)
    assert isinstance(m, Manifest)
    assert _contained(json.loads(path.read_text()), m.to_dict()) == []  # nothing dropped or changed
    assert m.compile_facts(0) is not None and m.hosts() and m.step_time_s("p50") > 0


def test_writer_and_reader_share_the_types(tmp_path: Path) -> None:
    src = json.loads(COMMITTED[0].read_text())
    write_manifest(tmp_path, src)
    assert read_manifest(tmp_path) == msgspec.convert(src, Manifest)
    with pytest.raises(ValueError, match=r"not declared .*\$\.run\.new_fact"):
        write_manifest(tmp_path, dict(src, run={"world_size": 2, "new_fact": 1}))  # would be lost silently
    bad = dict(src, run={"world_size": "two"})
    with pytest.raises(msgspec.ValidationError, match=r"\$\.run\.world_size"):
        write_manifest(tmp_path, bad)  # a writer bug surfaces when writing, not in every reader


def test_which_ranks_entry_one_rule() -> None:
    m = msgspec.convert({"compile": {"per_rank": [{"rank": 1, "graph_count": 5}, {"rank": 0, "graph_count": 3}]}},
                        Manifest)
    assert m.compile_facts(0).graph_count == 3 and m.compile_facts(1).graph_count == 5
    assert m.compile_facts(2) is None and m.first_compile_facts().rank == 0
    unnamed = msgspec.convert({"compile": {"per_rank": [{"graph_count": 7}, {"graph_count": 8}]}}, Manifest)
    assert unnamed.compile_facts(1).graph_count == 8  # no rank field: its position


WRONG = {
    "schema_version": 1,
    "config": {"model": "toy"},
    "timings": {"overall": "fast", "per_rank": [{"rank": 0, "steps": "20"}]},
    "hardware": {"ranks": [{"rank": "zero", "hostname": "a"}, {"rank": 1, "hostname": "b"}]},
    "compile": {"per_rank": [{"rank": 0, "enabled": "yes", "graph_count": 2}, "junk"]},
    "buckets": {"reducer": {"bucket_cap_bytes": 26214400, "bucket_sizes_bytes": ["big"]}},
}


def test_wrong_types_drop_the_field_with_a_warning_naming_file_and_field() -> None:
    with pytest.warns(ManifestWarning) as rec:
        m = decode_manifest(WRONG, "runs/x/run.json")
    msgs = [str(w.message) for w in rec]
    for field in ("$.timings.overall", "$.timings.per_rank[0].steps", "$.hardware.ranks[0].rank",
                  "$.compile.per_rank[0].enabled", "$.compile.per_rank[1]", "$.buckets.reducer.bucket_sizes_bytes[0]"):
        assert any(msg.startswith(f"runs/x/run.json: ignoring manifest field {field}: Expected") for msg in msgs), field
    assert m.config == {"model": "toy"} and m.compile_facts(0).graph_count == 2
    assert m.compile_facts(0).enabled is False  # the bad value is gone, the default stays
    assert m.hosts() == {1: "b"} and m.timings.overall is None
    assert m.reducer().bucket_cap_bytes == 26214400 and m.reducer().bucket_sizes_bytes == []


def test_not_an_object_or_newer_version() -> None:
    with pytest.warns(ManifestWarning, match="x/run.json: ignoring manifest that is not a JSON object"):
        assert decode_manifest([1, 2], "x/run.json") is None
    with pytest.warns(ManifestWarning, match="schema_version 9 is newer"):
        assert decode_manifest({"schema_version": 9, "future": {}}, "x/run.json").schema_version == 9


def test_analyze_with_a_wrong_typed_run_json_warns_and_reports(tmp_path: Path) -> None:
    """Was an AttributeError traceback (issue 16): now one warning per bad field, the traces analysed."""
    run = write_run(tmp_path / "run", "split", manifest=WRONG)
    r = CliRunner().invoke(main, ["analyze", str(run), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    lines = r.stderr.splitlines()
    assert any(ln.startswith("warning: ") and "run.json: ignoring manifest field $.timings.overall" in ln
               for ln in lines) and "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    assert len(doc["ranks"]) == 2 and doc["meta"]["manifest"]["config"] == {"model": "toy"}
