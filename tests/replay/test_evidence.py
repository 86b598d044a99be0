"""The replay's evidence files (tracekit/replay/evidence/*.json): one strict schema, text that says what and on
what, never when, and every result file they name present (the figures themselves are recomputed in
tests/replay/test_trust.py and tests/replay/test_validation.py)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from tracekit.replay import evidence

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def test_files_decode_into_the_schema_and_an_unknown_field_is_refused() -> None:
    assert len(evidence.regimes().regimes) == 3 and evidence.checks() and evidence.rankings()
    assert all(r.sources == evidence.regimes().sources for r in evidence.regimes().regimes)
    bad = (evidence.HERE / "checks.json").read_text().replace('"verdict": "checked"', '"verdict": "fine"', 1)
    with pytest.raises(msgspec.ValidationError, match="verdict"):
        msgspec.json.decode(bad, type=evidence._Checks)
    extra = (evidence.HERE / "rankings.json").read_text().replace('"pairs":', '"pears": 1, "pairs":', 1)
    with pytest.raises(msgspec.ValidationError, match="pears"):
        msgspec.json.decode(extra, type=evidence._Rankings)


def test_text_names_no_date_or_work_log() -> None:
    for f in evidence.HERE.glob("*.json"):
        text = f.read_text()
        assert not re.search(r"20\d\d-\d\d-\d\d|session|\buntil\b|\bsince\b", text, re.IGNORECASE), f.name


@pytest.mark.parametrize("fragment", sorted({s for c in (*evidence.checks(), *evidence.rankings()) for s in c.sources}
                                            | set(evidence.regimes().sources)))
def test_every_source_names_result_files(fragment: str) -> None:
    assert evidence.result_files(RESULTS, fragment), fragment


def test_a_check_as_json_drops_the_regex_and_keeps_the_field_order() -> None:
    c = evidence.checks()[0]
    d = c.to_dict()
    assert list(d) == ["change", "setting", "runs", "delta_error_pp_median", "delta_error_pp_max", "verdict", "why",
                       "sources", "from_one_rank"]
    assert d["sources"] == list(c.sources)


def test_evidence_classes_runs_with_analyzes_gpu_bound_threshold() -> None:
    """The regimes' figures were gathered with analyze's GPU-bound threshold; a change to one must move the other."""
    from tracekit.analyses import gpu_idle
    from tracekit.replay import evidence

    assert evidence.regimes().gpu_bound_max_idle_pct == gpu_idle.GPU_BOUND_MAX_IDLE_PCT
