"""How a family of what-if scenario options is declared (:class:`Option`, :class:`Family`, :class:`Phase`), what
its edits read (:class:`Context`) and what they share (:class:`Edits`).

Each module of :mod:`tracekit.replay.changes` declares one family of scenario options: their names, types and
help (which give the CLI option, the library keyword, the JSON ``changes`` key, ``--sweep`` and the docs row), what
the family needs from the run, and its edits of the replay graph, each in one :class:`Phase`. The engine
(:func:`tracekit.replay.scenarios.apply`) runs the phases in their order, every family's edit of a phase in
family order: that order is how scenarios compose.

Apart from :mod:`tracekit.replay.scenario_spec` (:class:`~tracekit.replay.scenario_spec.Scenario`, made from
every family's options), so that the families and the modules they call can name these types without importing
it. They see a scenario as :class:`ScenarioValues`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol

import numpy as np
import pandas as pd

from tracekit.replay import ddp, network
from tracekit.replay.graph import Graph
from tracekit.traces.traceset import TraceSet


class ScenarioValues(Protocol):
    """A scenario as its edits see it (:class:`tracekit.replay.scenario_spec.Scenario`): every declared option as
    an attribute (None / False: unchanged), its ``name``, and :meth:`replace`."""

    @property
    def name(self) -> str: ...

    def replace(self, **values: Any) -> ScenarioValues: ...

    def __getattr__(self, option: str) -> Any: ...


class Phase(IntEnum):
    """Where an edit runs in a scenario, in this order (docs/whatif.md, "How scenarios compose")."""

    #: checks and the factors later phases share, before any edit (the network's factors; a 1-rank run grown)
    PLAN = 1
    #: compiled graphs split or merged (DDPOptimizer's split of the backward)
    GRAPHS = 2
    #: DDP's gradients regrouped into other buckets: the recorded buckets' collectives replaced
    REGROUP = 3
    #: every remaining collective's transfer scaled; the comm hook's casts
    SCALE = 4
    #: what a group of one rank does not do (enqueueing collectives; compute slowed by communication)
    RANKS = 5
    #: host work removed: graph breaks' CPU work, kernel launches replaced by graph launches
    HOST = 6


@dataclass(frozen=True)
class Option:
    """One scenario option. ``name`` is the library keyword and the JSON ``changes`` key; the CLI option is
    ``--name`` with ``-`` for ``_``. ``kind`` is ``float``, ``int``, ``str`` or ``bool`` (a flag, never swept)."""

    name: str
    kind: type
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    #: values must be above this (``--x must be > 0``)
    above: float | None = None
    #: values must be at least this (``--x must be >= 1``)
    at_least: float | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, text: str) -> Any:
        """One ``--sweep`` value."""
        return self.kind(text)


@dataclass
class Edits:
    """What a scenario's edits share while it is applied (:func:`tracekit.replay.scenarios.apply`): the graph
    copy, the communication masks, the notes, and what an earlier phase decided for a later one."""

    g: Graph
    comm: dict[int, np.ndarray]
    #: the scenario as the phases see it (PLAN may drop a change that is the run's own)
    sc: ScenarioValues
    notes: list[str] = field(default_factory=list)
    #: factors on every collective's bandwidth term (the network's bandwidth, the world size's ring factor), and
    #: the comm hook's on fp32 allreduces
    bandwidth_factor: float = 1.0
    world_factor: float = 1.0
    hook_factor: float = 1.0
    #: rows of ``Context.colls`` that a regrouping replaced
    replaced: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    #: the regrouped buckets' collectives that the hook compresses: (arrive node, collective node, rank, bytes)
    added: list[tuple[int, int, int, float]] = field(default_factory=list)
    #: the run was grown from one rank (:mod:`tracekit.replay.grow`): its collectives are new, not scaled
    grown: bool = False
    #: re-time compute for its overlap with communication at the end (off where a group has one rank)
    retime: bool = True

    @property
    def network_factor(self) -> float:
        """The factor on every collective's bandwidth term."""
        return self.bandwidth_factor * self.world_factor


#: an edit: ``(context, edits)``, in place on ``edits.g``; raises ScenarioError where it cannot apply
Edit = Callable[["Context", Edits], None]


@dataclass(frozen=True)
class Family:
    """One family of scenario options and its edits (module doc). ``position`` orders families among each other:
    their options in the CLI, the library keywords, a scenario's name and ``changes``, and their edits within a
    phase. ``needs``: what the family needs from the run (the docs row)."""

    name: str
    position: int
    options: tuple[Option, ...]
    needs: str
    edits: dict[Phase, Edit]
    #: checks across the family's options (a message naming them), after each option's own
    check: Callable[[ScenarioValues], str | None] | None = None
    #: the scenario applies (its edits run) when this is true; default: any of its options is set
    active: Callable[[ScenarioValues], bool] | None = None

    def applies(self, sc: ScenarioValues) -> bool:
        if self.active is not None:
            return self.active(sc)
        return any(getattr(sc, o.name) not in (None, False) for o in self.options)


@dataclass
class Context:
    """What every scenario reads: the run, its matched collectives (``colls``, one row per rank and
    instance, with ``node``: the collective's node in the graph), the fit and the bucket layout."""

    traces: TraceSet
    colls: pd.DataFrame
    comm: dict[int, np.ndarray]
    fit: network.AlphaBeta
    layout: ddp.Layout | None
    layout_error: str | None
    backend: str | None
    world_size: int
    applied_hook: str | None
    #: per rank, which of ``Graph.ranks[rank].gpu_node`` are compute kernels (the contention model's
    #: kernels, :func:`tracekit.replay.contention.readjust`); empty: none modelled
    compute: dict[int, np.ndarray] = field(default_factory=dict)
    #: the baseline prediction's node times (start, end); None: the recorded window's (the baseline prediction
    #: of a graph built without profiler cost)
    base_times: tuple[np.ndarray, np.ndarray] | None = None
    #: per row of ``colls``: an fp32 allreduce (what a comm hook compresses) / its bytes
    #: (:func:`tracekit.replay.network.collective_bytes`); once per baseline, read by every scenario
    fp32: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    coll_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0))
