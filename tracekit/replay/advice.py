"""Findings that advise a change, quoted with the replay's predicted saving (``tracekit whatif --advice``).

analyze's findings (:mod:`tracekit.analyses.findings`) estimate a cost from the window with a
heuristic (the idle GPU at a graph break, the exposed time of a bucket). Here each finding that
suggests a change gets the scenarios that make it (:data:`CANDIDATES`), they are replayed with
the rest (:mod:`tracekit.replay.scenarios`), and the best one is quoted in the finding's
``evidence["whatif"]``: ``{"scenario", "changes", "predicted_step_us", "predicted_saving_us",
"predicted_saving_pct"}`` (saving = baseline prediction − scenario's, per step; negative: the
change would cost); a finding listed with no scenario gets ``{"scenario": None, "note": ...}``: no
scenario models its cause, and no other scenario's saving is quoted for it. ``profiler_distortion`` gets the predicted unprofiled step instead
(``{"predicted_step_us", "measured_unprofiled_step_us", "error_pct"}``). The findings are ranked
by predicted saving (``profiler_distortion`` first, findings without a scenario last, by their
own cost).

Kept apart from the findings module on purpose: the findings only need ``evidence["whatif"]`` from
here, and the replay's scenarios stay out of the analysis layer.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tracekit.replay.scenario_spec import Scenario

_CAPS_MB = (1.0, 5.0, 10.0, 25.0, 50.0, 100.0)
_FIRST_MB = (1.0, 5.0, 10.0)
#: finding code -> the scenarios that carry out its advice
CANDIDATES: dict[str, tuple[Scenario, ...]] = {
    "graph_break": (Scenario(no_graph_breaks=True),),
    "exposed_last_bucket": tuple(Scenario(bucket_cap_mb=c) for c in _CAPS_MB),
    # its cause is a backward that ran as one graph: DDPOptimizer's split is the one change that addresses it (a
    # bucket cap does not change when the allreduces can start, so none is quoted); on a run the split does not
    # apply to (eager with a python reducer, say) no scenario models the cause
    "allreduce_after_backward": (Scenario(optimize_ddp="ddp_optimizer"),),
    # a launch-bound GPU (evidence cpu_bound): CUDA graphs replace the launches (compiled runs: _applies)
    "gpu_idle": (Scenario(cuda_graphs=True),),
    "backward_comm_exposed": (*(Scenario(bucket_cap_mb=c) for c in _CAPS_MB), Scenario(comm_hook="bf16")),
    "exposed_first_bucket": tuple(Scenario(first_bucket_cap_mb=c) for c in _FIRST_MB),
}


#: findings whose scenarios address their cause and nothing else: where none applies, the quote says so
_CAUSE_ONLY = frozenset({"allreduce_after_backward"})
#: the quote of such a finding with no scenario that applies: none models its cause
UNMODELLED = "no what-if scenario models this finding's cause, so no saving is predicted"


def findings_of(table: pd.DataFrame | None) -> list[dict[str, Any]]:
    """analyze's ``findings`` table as dicts."""
    if table is None or not len(table):
        return []
    return [dict(r) for r in table.to_dict("records")]


def _applies(f: dict[str, Any]) -> tuple[Scenario, ...]:
    """The scenarios of finding ``f`` (:data:`CANDIDATES`): ``gpu_idle`` only where the rank is launch-bound."""
    if f["code"] == "gpu_idle" and not (f.get("evidence") or {}).get("cpu_bound"):
        return ()
    return CANDIDATES.get(f["code"], ())


def candidates(found: list[dict[str, Any]]) -> list[Scenario]:
    """The scenarios to replay for ``found``, each once."""
    return list(dict.fromkeys(s for f in found for s in _applies(f)))


def quote(found: list[dict[str, Any]], scenarios: list[dict[str, Any]], baseline: dict[str, Any]) -> list[dict]:
    """``found`` with ``evidence["whatif"]`` (module doc), ranked by predicted saving."""
    by_name = {s["name"]: s for s in scenarios}
    out = []
    for f in found:
        f = {**f, "evidence": dict(f.get("evidence") or {})}
        if f["code"] == "profiler_distortion":
            f["evidence"]["whatif"] = {k: baseline.get(k) for k in ("predicted_step_us", "measured_unprofiled_step_us",
                                                                    "error_pct")}
        rows = [by_name[s.name] for s in _applies(f) if s.name in by_name]
        if not rows and f["code"] in _CAUSE_ONLY:  # the one scenario for its cause does not apply to this run
            f["evidence"]["whatif"] = {"scenario": None, "note": UNMODELLED}
        if rows:
            best = min(rows, key=lambda s: s["delta_us"])
            f["evidence"]["whatif"] = {"scenario": best["name"], "changes": best["changes"],
                                       "predicted_step_us": best["predicted_step_us"],
                                       "predicted_saving_us": -best["delta_us"],
                                       "predicted_saving_pct": -best["delta_pct"] if best["delta_pct"] is not None
                                       else None}
        out.append(f)
    return sorted(out, key=_rank_key)


def _rank_key(f: dict[str, Any]) -> tuple[int, float]:
    w = f["evidence"].get("whatif") or {}
    if f["code"] == "profiler_distortion":
        return 0, 0.0
    if "predicted_saving_us" in w:
        return 1, -float(w["predicted_saving_us"])
    return 2, -float(f["evidence"].get("cost_us") or 0.0)
