"""The ``graphs`` section of ``run.json`` and the files behind it (``graphs/*.fx.txt``, ``autograd.dot``).

Called by every rank at the end of a profile run (:mod:`tracekit.profile.worker`); rank 0
writes the files and returns the section, the others return None. See
:mod:`tracekit.profile.graph_capture` (compiled graphs) and :mod:`tracekit.profile.autograd_viz`
(``--torchviz``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracekit.profile.config import ProfileConfig
from tracekit.profile.graph_capture import GraphRecorder, reducer_layout


def torchviz_step(trainer: Any, model: Any, rank: int, out_dir: Path) -> dict[str, Any] | None:
    """Run one more training step on this rank (every rank must: DDP's backward is collective);
    rank 0 draws its autograd graph before the backward. Returns rank 0's manifest entry."""
    got: dict[str, Any] = {}

    def draw(loss: Any) -> None:
        from tracekit.profile.autograd_viz import dump_autograd_graph

        try:
            got["entry"] = dump_autograd_graph(loss, model, out_dir)
        except Exception as e:  # noqa: BLE001 - a drawing failure must not fail the run
            got["entry"] = {"dot": None, "svg": None, "nodes": None, "note": f"torchviz failed: {type(e).__name__}: {e}"}

    trainer.on_loss = draw if rank == 0 else None
    try:
        trainer.step()
    finally:
        trainer.on_loss = None
    return got.get("entry")


def graphs_section(config: ProfileConfig, rank: int, out_dir: Path, recorder: GraphRecorder | None,
                   trainer: Any, ddp: Any) -> dict[str, Any] | None:
    """Rank 0: the ``graphs`` manifest section (files written); other ranks: None (after taking
    part in the ``--torchviz`` step). None on every rank when neither ``--dynamo`` nor ``--torchviz``."""
    autograd = torchviz_step(trainer, getattr(trainer.model, "module", trainer.model), rank, out_dir) if config.torchviz else None
    if rank != 0 or (recorder is None and not config.torchviz):
        return None
    section: dict[str, Any] = {"rank": rank, "optimize_ddp": config.resolved_optimize_ddp, "graphs": [],
                               "reducer_params": None, "reducer_buckets": None, "autograd": autograd,
                               "unavailable": {}}
    model = getattr(trainer.model, "module", trainer.model)
    names = recorder.param_names if recorder is not None else {id(p): n for n, p in model.named_parameters()}
    params, buckets, why = reducer_layout(ddp, names)
    section["reducer_params"] = params
    section["reducer_buckets"] = buckets
    if why:
        section["unavailable"]["reducer_buckets"] = why
    if recorder is None:
        section["unavailable"]["graphs"] = "not compiled (--dynamo none)"
        return section
    summary = recorder.summary(params, buckets)
    try:
        recorder.write(out_dir, summary)
    except OSError as e:
        summary["unavailable"]["files"] = f"{type(e).__name__}: {e}"
    section["graphs"] = summary["graphs"]
    section["unavailable"].update(summary["unavailable"])
    return section
