"""The package's shape (docs/architecture.md): layer contracts (import-linter, declared in pyproject.toml),
no import cycles, no private name reached across folders, and the lazy imports that keep the CLI quick."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "tracekit"
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_layer_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    rc = lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True, no_logo=True)
    assert rc == 0, capsys.readouterr().out


def _layered() -> set[str]:
    names = set()
    for c in CONTRACTS:
        for layer in c.get("layers", ()):
            names.update(n.strip() for n in layer.split("|"))
    return names


def test_every_folder_and_top_module_is_in_a_layer() -> None:
    # a new folder (or module beside them) must be placed in the pipeline, not slip past the contracts
    tops = {f"tracekit.{p.name}" for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    tops |= {f"tracekit.{p.stem}" for p in PKG.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert tops - _layered() == set()


def test_replay_and_the_analysis_side_never_import_torch() -> None:
    no_torch = next(c for c in CONTRACTS if c["id"] == "no-torch")
    assert "tracekit.replay" in no_torch["source_modules"] and no_torch["forbidden_modules"] == ["torch"]


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("tracekit")
    for a in sorted(graph.modules):
        for b in sorted(graph.find_modules_directly_imported_by(a)):
            if a == b or a.startswith(f"{b}.") or b.startswith(f"{a}."):  # itself (registry as __main__), its package
                continue
            back = graph.find_shortest_chain(importer=b, imported=a)
            assert back is None, f"import cycle: {a} -> {' -> '.join(back)}"


def _folder(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_no_private_names_across_folders() -> None:
    # a folder's _names are its own; another folder needing one means it should be public
    for f in PKG.rglob("*.py"):
        here = _folder(".".join(f.relative_to(REPO).with_suffix("").parts))
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tracekit."):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not (private and _folder(node.module) != here), f"{f}: imports {private} from {node.module}"


def _fresh_modules(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_cli_group_imports_no_analysis_stack() -> None:
    # `tracekit profile` (and --help) start without pandas, numpy, HTA or the analysis modules
    _fresh_modules(
        "import sys, tracekit.cli\n"
        "bad = [m for m in sys.modules if m.startswith(('pandas', 'numpy', 'hta', 'tracekit.traces', 'tracekit.analyses'))]\n"
        "assert not bad, bad\n"
    )


def test_manifest_reader_needs_no_torch_and_profile_no_analysis() -> None:
    _fresh_modules(
        "import sys\n"
        "from tracekit.traces.manifest import read_manifest\n"
        "import tracekit.profile, tracekit.profile.config, tracekit.profile.launcher\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "import tracekit.profile.worker, tracekit.profile.harness, tracekit.profile.models\n"
        # the run.json and compiled_kernels.json formats are the trace side's (tracekit.traces.manifest,
        # tracekit.traces.provenance: msgspec only); nothing else of it, no pandas
        "ok = {'tracekit.traces', 'tracekit.traces.manifest', 'tracekit.traces.provenance'}\n"
        "bad = [m for m in sys.modules if m.startswith(('pandas', 'tracekit.traces', 'tracekit.analyses', 'hta'))\n"
        "       and m not in ok]\n"
        "assert not bad, bad\n"
    )


#: the modules that edit a scenario's copy of the replay graph (tracekit.replay.scenarios applies them)
SCENARIO_MODULES = sorted((PKG / "replay" / "changes").glob("*.py")) + [
    PKG / "replay" / f"{m}.py" for m in ("buckets", "breaks", "network", "grow", "hook", "enqueue", "contention")]
#: what only tracekit.replay.graph (and the builder, simulate) may touch: the raw edge lists, the per-rank table by key
GRAPH_INTERNALS = {"sp", "ep", "sp_rec", "ep_rec"}
RANK_KEYS = {"steps", "gpu", "gpu_node", "origin", "threads", "coll"}


def _graph_internals_used(path: Path) -> list[str]:
    """Where ``path`` reads or writes the graph's edge lists (``g.sp``, ``self.g.ep``...), its ``ranks`` dict, or a
    per-rank table by string key, instead of the graph's methods."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and (node.attr in GRAPH_INTERNALS or node.attr == "ranks") and (
                (isinstance(node.value, ast.Name) and node.value.id in ("g", "base", "graph"))
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "g")):
            out.append(f"{path.name}:{node.lineno} .{node.attr}")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in RANK_KEYS \
                and isinstance(node.value, ast.Name) and node.value.id == "info":
            out.append(f"{path.name}:{node.lineno} info[{node.slice.value!r}]")
    return out


def test_scenario_modules_reach_the_graph_through_its_api() -> None:
    """Scenario modules edit the graph through tracekit.replay.graph's methods (typed edges, transfers, resources)
    and read a rank's nodes through ``RankNodes``; the import side is the ``scenarios-through-graph-api`` contract."""
    assert len(SCENARIO_MODULES) >= 10
    assert [u for p in SCENARIO_MODULES for u in _graph_internals_used(p)] == []


def test_the_graph_check_sees_raw_edits(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(g, info):\n    g.sp[3] = [(1, 0)]\n    return self.g.ep[2], g.ranks[0], info['threads']\n")
    assert len(_graph_internals_used(bad)) == 4
