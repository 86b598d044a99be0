"""Golden outputs on committed real GPU traces (see tests/golden_util.py to regenerate)."""

from __future__ import annotations

import json

import pytest

from tests.golden_util import CASES, GOLDEN, current


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str) -> None:
    path = GOLDEN / f"{case}.json"
    if not path.exists():
        pytest.fail(f"missing golden {path}: run python -m tests.golden_util")
    want = json.loads(path.read_text())
    got = json.loads(json.dumps(current(case), sort_keys=True))
    assert got == want
