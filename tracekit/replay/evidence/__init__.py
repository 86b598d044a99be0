"""The replay's measured accuracy, as committed data: one reader for the code, the docs and the tests.

Three files beside this module hold what benchmark runs measured of the replay; each names the result files
under ``benchmarks/results/`` its figures come from, so ``tests/replay/test_trust.py`` and
``tests/replay/test_validation.py`` recompute every figure from them:

- ``regimes.json`` (:class:`RegimeFile`): the baseline prediction's |error| by what bounds the step
  (:mod:`tracekit.replay.trust` quotes it beside every prediction);
- ``checks.json`` (:class:`Check`): each scenario's change made for real and compared with its prediction
  (:mod:`tracekit.replay.validation`);
- ``rankings.json`` (:class:`Ranking`): how often the predictions ordered paired variants as measured.

The files say what was measured and on what (machine, backend, shapes); ``tracekit whatif`` prints their
``setting`` and ``why`` text as it stands. They are decoded strictly (an unknown or missing field is an error),
once per process. ``python -m tracekit.replay.docs_tables --write docs/whatif.md`` copies them into the docs.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

import msgspec

HERE = Path(__file__).resolve().parent

#: verdicts of a :class:`Check`: the truth was steady enough to check the prediction; the same program's measured
#: step moved between runs by more than the change (the figures are the host's noise as much as the model's
#: error); no machine here could make the change
Verdict = Literal["checked", "not checkable here", "not run"]
CHECKED: Verdict = "checked"
NOISY: Verdict = "not checkable here"
NOT_RUN: Verdict = "not run"


class MultiRank(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Which way a regime's predictions erred on its runs of 2 ranks or more."""

    #: such runs, and in how many the predicted step was below the measured one
    runs: int
    below: int
    #: median of (predicted − measured) / measured over them, % (signed)
    error_pct_median: float


class Regime(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What bounds a step, and the replay's |error| on the benchmark runs of that kind (:mod:`~tracekit.replay.trust`).

    A range ``[low, high)`` whose high is 100.000000001 takes in 100 % itself."""

    #: ``gpu-bound``, ``gpu-bound-once-shed`` or ``cpu-bound``
    name: str
    #: the predicted GPU idle share range, %: [low, high)
    idle_pct_low: float
    idle_pct_high: float
    #: benchmark runs in the regime, and their |predicted − measured| / measured, %: median and max
    runs: int
    error_pct_median: float
    error_pct_max: float
    #: the window's GPU idle share range, %: [low, high)
    window_idle_pct_low: float
    window_idle_pct_high: float
    #: result files under benchmarks/results/ the figures come from (the file's ``sources``)
    sources: tuple[str, ...] = ()
    #: the multi-rank runs' lean (quoted for a run of several ranks: the 2-rank CPU-bound steps carry time that
    #: comes with the communication and that the trace does not show, docs/whatif.md); None without such runs
    multi_rank: MultiRank | None = None

    def holds(self, idle_pct: float, window_idle_pct: float) -> bool:
        return (self.idle_pct_low <= idle_pct < self.idle_pct_high
                and self.window_idle_pct_low <= window_idle_pct < self.window_idle_pct_high)

    def to_dict(self, *, several_ranks: bool = True) -> dict[str, Any]:
        """The regime as JSON; ``multi_rank`` as ``{"runs", "below", "error_pct_median"}``, null for a run of one
        rank (``several_ranks`` False) or a regime without multi-rank runs."""
        d = msgspec.structs.asdict(self)
        d["sources"] = list(self.sources)
        d["multi_rank"] = self.multi_rank_dict() if several_ranks else None
        return d

    def multi_rank_dict(self) -> dict[str, Any] | None:
        """``multi_rank`` as ``{"runs", "below", "error_pct_median"}`` (None without it)."""
        return msgspec.structs.asdict(self.multi_rank) if self.multi_rank else None


class CpuRuns(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Runs without GPU activity (CPU/gloo; no regime) in the result files: how many, their |error|, %."""

    runs: int
    error_pct_median: float
    error_pct_max: float


class RegimeFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``regimes.json``."""

    #: what the file holds and how its figures are computed
    about: str
    #: a step whose predicted GPU idle share is below this is GPU-bound
    gpu_bound_max_idle_pct: float
    #: result files under benchmarks/results/ every regime's figures come from
    sources: tuple[str, ...]
    cpu_runs: CpuRuns
    regimes: tuple[Regime, ...]


class _FromResults(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Figures recomputed from result files: ``sources`` (name fragments under benchmarks/results/) and
    ``variants`` (a regex on the variant's run folder picking the runs in them)."""

    def to_dict(self) -> dict[str, Any]:
        """As JSON, without the regex picking the runs."""
        d = msgspec.structs.asdict(self)
        d.pop("variants")
        d["sources"] = list(d["sources"])
        return d


class Check(_FromResults, frozen=True):
    """One setting in which a scenario's change was made for real and compared with its prediction."""

    #: the :class:`~tracekit.replay.scenario_spec.Scenario` field the check is about
    change: str
    #: where it was checked: machine, backend, what bound the step
    setting: str
    #: variant runs compared (each a real run with the change made)
    runs: int
    #: median and max |predicted − measured change|, percentage points of the baseline step (None: not run)
    delta_error_pp_median: float | None
    delta_error_pp_max: float | None
    verdict: Verdict
    #: one sentence: why the verdict
    why: str
    sources: tuple[str, ...] = ()
    variants: str = "."
    #: a ``world_size`` check of runs of one rank grown to more (:mod:`tracekit.replay.grow`), not of runs of several
    from_one_rank: bool = False

    @property
    def backend(self) -> str | None:
        """The backend of the runs checked, from the setting's wording: ``gloo`` (CPU/gloo), ``nccl``, or None
        (one GPU: no collective)."""
        return "gloo" if "CPU/gloo" in self.setting else "nccl" if "NCCL" in self.setting else None


class Ranking(_FromResults, frozen=True):
    """How often the predictions ordered two variants of one baseline as their paired timing did
    (:mod:`tracekit.replay.validation` defines the pairs)."""

    #: where the variants were timed
    setting: str
    #: separated pairs, and those the prediction orders as measured
    pairs: int
    ranked: int
    #: one sentence: which pairs it did not order as measured, and why
    misses: str
    sources: tuple[str, ...] = ()
    variants: str = "."


class _Checks(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    about: str
    checks: tuple[Check, ...]


class _Rankings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    about: str
    rankings: tuple[Ranking, ...]


def _read(name: str, typ: type) -> Any:
    return msgspec.json.decode((HERE / name).read_bytes(), type=typ)


@functools.cache
def regimes() -> RegimeFile:
    """``regimes.json``, each regime carrying the file's ``sources``."""
    f = _read("regimes.json", RegimeFile)
    return msgspec.structs.replace(f, regimes=tuple(msgspec.structs.replace(r, sources=f.sources)
                                                    for r in f.regimes))


@functools.cache
def checks() -> tuple[Check, ...]:
    """``checks.json``'s checks, in the file's order."""
    return _read("checks.json", _Checks).checks


@functools.cache
def rankings() -> tuple[Ranking, ...]:
    """``rankings.json``'s rankings, in the file's order."""
    return _read("rankings.json", _Rankings).rankings


def result_files(results: Path, fragment: str, suffix: str = ".jsonl") -> list[Path]:
    """The result files under ``results`` a source names: the file itself, or every file whose name starts with the
    fragment, sorted."""
    exact = results / fragment
    return [exact] if exact.is_file() else sorted(results.glob(f"{fragment}*{suffix}"))
