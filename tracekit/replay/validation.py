"""How far each what-if scenario has been checked against the same change made for real.

A scenario's predicted change is only as good as the checks behind it, so ``tracekit whatif`` prints,
next to the scenarios it was asked for, the checks of those changes: the same model profiled twice,
once as it was and once with the change really made, and the scenario predicted from the first run
compared with the second run's measured unprofiled step. The measure is the **delta error**: the
absolute difference, in percentage points of the baseline step, between the predicted change
(``predicted_delta_pct``) and the measured one (``measured_delta_pct``); the measured baseline is the
first run's own timed steps (run.json), never an input to the prediction.

The checks and the rankings are data: ``tracekit/replay/evidence/checks.json`` and ``rankings.json``
(:mod:`tracekit.replay.evidence`). Each names the result files under ``benchmarks/results/`` it summarises and
the variant runs it takes from them (``variants``, a regex on the variant's run folder);
``tests/replay/test_validation.py`` recomputes every figure from those files, so the data cannot drift from
the measurements. ``verdict`` says what the figures mean: ``checked`` (the truth was
steady enough to check the prediction), ``not checkable here`` (the same program's measured step
moved between runs by more than the change: the figures are the host's noise as much as the
model's error) or ``not run`` (no machine here could make the change).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from tracekit.replay import evidence
from tracekit.replay.evidence import CHECKED, NOISY, NOT_RUN, Check, Ranking

__all__ = ["CHECKED", "CHECKS", "NOISY", "NOT_RUN", "RANKINGS", "Check", "Ranking", "checks_for", "ranked_pairs",
           "rankings_for"]

#: every scenario check, in the order the reports list them
CHECKS: tuple[Check, ...] = evidence.checks()


def checks_for(changes: list[str], one_rank: bool | None = None, backend: str | None = None) -> list[Check]:
    """The checks of the scenario fields in ``changes``, in :data:`CHECKS` order; with ``one_rank`` (the run has one
    rank, or several) the ``world_size`` checks of that kind of run only (:attr:`Check.from_one_rank`); with
    ``backend`` those of runs over it and of single GPUs (:attr:`Check.backend`)."""
    wanted = set(changes)
    return [c for c in CHECKS if c.change in wanted
            and (one_rank is None or c.change != "world_size" or c.from_one_rank == one_rank)
            and (backend is None or c.backend in (None, backend))]


# -- ranking: do the predictions order the variants as the paired timings do? ----------------------------------
#
# A *pair* is two variants of the same profiled baseline, the baseline itself among them (its change is 0 % with
# no spread), from a paired timing (every variant timed in one job, steps alternating: each variant's change has
# quartiles over rounds). Only pairs whose measured changes differ beyond those quartiles count (**separated**:
# the interquartile ranges do not overlap); closer pairs have no measured order to check. A separated pair is
# **ranked as measured** when the predicted changes differ in the same direction; a predicted tie counts against.

#: every ranking check (:class:`~tracekit.replay.evidence.Ranking`), in the order the reports list them
RANKINGS: tuple[Ranking, ...] = evidence.rankings()


def ranked_pairs(rows: Iterable[dict[str, Any]]) -> tuple[int, int, list[tuple[str, str, str]]]:
    """(separated pairs, pairs ranked as measured, the misses as (baseline run, change a, change b)) over
    the paired result rows (``variant`` ``RUN:CHANGES``, ``predicted_delta_pct``, ``measured_delta_pct``
    and its quartiles ``measured_delta_q1_pct``/``measured_delta_q3_pct``); see :class:`Ranking`."""
    by_base: dict[str, list[tuple[str, float, float, float, float]]] = {}
    for r in rows:
        if r.get("measured_delta_q1_pct") is None:
            continue
        base = r["variant"].rsplit(":", 1)[0]
        items = by_base.setdefault(base, [("baseline", 0.0, 0.0, 0.0, 0.0)])
        items.append((r["changes"], r["predicted_delta_pct"], r["measured_delta_pct"], r["measured_delta_q1_pct"],
                      r["measured_delta_q3_pct"]))
    pairs = ranked = 0
    misses = []
    for base, items in by_base.items():
        for a, b in itertools.combinations(items, 2):
            if not (a[4] < b[3] or b[4] < a[3]):
                continue  # the quartiles overlap: no measured order
            pairs += 1
            if (a[2] - b[2]) * (a[1] - b[1]) > 0:
                ranked += 1
            else:
                misses.append((base, a[0], b[0]))
    return pairs, ranked, misses


def rankings_for(n_scenarios: int) -> list[Ranking]:
    """The ranking checks to quote beside ``n_scenarios`` scenarios: all of them when there is at least one
    (a scenario is ranked against the baseline, a sweep's against each other), none without."""
    return list(RANKINGS) if n_scenarios else []
