"""Golden outputs on committed real GPU traces (see tests/golden_util.py to regenerate)."""

from __future__ import annotations

import json

import pytest

from tests.golden_util import CASES, DIFF_CASES, GOLDEN, current, current_diff


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str) -> None:
    path = GOLDEN / f"{case}.json"
    if not path.exists():
        pytest.fail(f"missing golden {path}: run python -m tests.golden_util")
    want = json.loads(path.read_text())
    got = json.loads(json.dumps(current(case), sort_keys=True))
    tables = got.pop("tables")
    changed = sorted(k for k in set(tables) | set(want.get("tables", {})) if tables.get(k) != want["tables"].get(k))
    assert not changed, f"{case}: tables changed (rows, digest): " + ", ".join(
        f"{k} {want['tables'].get(k)} -> {tables.get(k)}" for k in changed)
    want.pop("tables")
    assert got == want


@pytest.mark.parametrize("case", sorted(DIFF_CASES))
def test_golden_diff(case: str) -> None:
    """``tracekit diff EAGER COMPILED --by module|op`` of the committed single-H100 pairs, as markdown."""
    path = GOLDEN / f"{case}.md"
    if not path.exists():
        pytest.fail(f"missing golden {path}: run python -m tests.golden_util")
    assert current_diff(case) == path.read_text()
