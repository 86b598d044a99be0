"""``--bucket-cap-mb`` / ``--first-bucket-cap-mb``: DDP's gradients regrouped into other buckets
(:mod:`tracekit.replay.buckets`), with the network's factors of the same scenario (:mod:`.network`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracekit.errors import ScenarioError
from tracekit.replay import buckets
from tracekit.replay.family import Edits, Family, Option, Phase

if TYPE_CHECKING:
    from tracekit.replay.family import Context


def grads_fp32(ctx: Context) -> bool:
    """Whether the run's gradients are fp32: it has backward collectives and every one is an fp32 allreduce
    (``Context.fp32``)."""
    if not len(ctx.colls):
        return False
    backward = (ctx.colls["phase"] == "backward").to_numpy()
    return bool(backward.any() and ctx.fp32[backward].all())


def regroup(ctx: Context, ed: Edits) -> None:
    """Replace the recorded buckets' collectives by the new layout's; the comm hook compresses the new ones too
    when the gradients are fp32."""
    sc = ed.sc
    if ed.grown:
        raise ScenarioError(f"{sc.name}: a 1-rank run grown to {sc.world_size} ranks takes no bucket change with "
                            "it (its buckets have no recorded transfer)")
    fp32 = grads_fp32(ctx)
    factor = ed.network_factor * (ed.hook_factor if fp32 else 1.0)
    ed.replaced, more, new = buckets.regroup(ed.g, ctx, ed.comm, sc, factor, drop=sc.world_size == 1)
    ed.added = new if fp32 and ed.hook_factor != 1.0 else []
    ed.notes += more


SCENARIO = Family(
    name="buckets", position=10,
    options=(Option("bucket_cap_mb", float, "DDP's gradients regrouped into buckets of this cap (DDP's rule, "
                    "run.json's layout).", metavar="MB", above=0),
             Option("first_bucket_cap_mb", float, "... with this cap for the first bucket (DDP's "
                    "bucket_cap_mb_list[0]).", metavar="MB", above=0)),
    needs="a DDP run with run.json's bucket layout and its backward allreduces matched across ranks",
    edits={Phase.REGROUP: regroup})
