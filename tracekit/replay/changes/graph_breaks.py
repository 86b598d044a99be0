"""``--no-graph-breaks``: the CPU work between compiled graphs at each graph break removed
(:mod:`tracekit.replay.breaks`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracekit.replay import breaks
from tracekit.replay.family import Edits, Family, Option, Phase

if TYPE_CHECKING:
    from tracekit.replay.family import Context


def remove(ctx: Context, ed: Edits) -> None:
    ed.notes += breaks.remove(ed.g, ctx)


SCENARIO = Family(
    name="graph_breaks", position=20,
    options=(Option("no_graph_breaks", bool, "Remove the CPU work between compiled graphs at each graph break (the "
                    "GPU idle it causes follows)."),),
    needs="a compiled run with a graph break (consecutive compiled graphs of different regions in a step)",
    edits={Phase.HOST: remove})
