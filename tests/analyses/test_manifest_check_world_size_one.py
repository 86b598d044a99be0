"""World size 1: NCCL launches no allreduce kernel, so the reducer checks of ``manifest_check`` are not
applicable, not mismatches (issue 23, item 5)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from tests.explain_builders import build_rank, load_run, manifest_for
from tracekit.analyses.manifest_check import NOT_APPLICABLE


def _run(folder: Path, world: int, drop_nccl: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(world):
        doc = build_rank(r, world, "split").to_dict()
        if drop_nccl:  # what a one-rank NCCL run records: the c10d op, no kernel
            doc["traceEvents"] = [e for e in doc["traceEvents"] if not str(e.get("name", "")).startswith("nccl")]
        (folder / f"rank{r}.trace.json").write_text(json.dumps(doc))
    (folder / "run.json").write_text(json.dumps(manifest_for("split", world=world)))
    return folder


def _checks(folder: Path) -> dict[str, tuple[str, str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = load_run(folder)[1]
    return {r.check: (r.status, r.note) for r in res.manifest_check.itertuples()}


def test_one_rank_without_allreduces_is_not_applicable(tmp_path: Path) -> None:
    got = _checks(_run(tmp_path / "one", 1, drop_nccl=True))
    for check in ("allreduces_per_step", "allreduce_bytes", "ddp_optimizer_vs_reducer"):
        assert got[check][0] == NOT_APPLICABLE, got
        assert "world size 1" in got[check][1]
    assert got["backward_subgraphs_per_step"][0] == "match"  # the compile check still applies


def test_two_ranks_without_allreduces_is_still_a_mismatch(tmp_path: Path) -> None:
    got = _checks(_run(tmp_path / "two", 2, drop_nccl=True))
    assert got["allreduces_per_step"][0] == "mismatch" and got["allreduce_bytes"][0] == "mismatch"


def test_one_rank_with_allreduces_is_compared(tmp_path: Path) -> None:
    got = _checks(_run(tmp_path / "kept", 1, drop_nccl=False))
    assert got["allreduces_per_step"][0] == "match" and got["allreduce_bytes"][0] == "match"
