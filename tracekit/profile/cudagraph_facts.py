"""What inductor's CUDA graphs did on this rank (``torch.compile(mode="reduce-overhead" | "max-autotune")``): the
``cudagraphs`` entry of run.json's compile facts.

* ``torch._dynamo.utils.counters["inductor"]``: ``cudagraph_skips`` (graphs inductor ran without a CUDA graph)
  and ``cudagraph_recorded_non_static_inputs``;
* inductor's ``cudagraphs`` log (``torch._inductor.cudagraph_utils``): one "skipping cudagraphs due to ..." line
  per skip, the reason in torch's words (a CPU op, a mutated input, dynamic shapes, the re-recording limit);
* the CUDA graph tree of the device (``torch._inductor.cudagraph_trees``): the graphs recorded (nodes of the
  tree) and how often a function was recorded again because its inputs changed (``num_rerecord``).

Each source is read inside a try: what cannot be read is named in the facts' ``unavailable``.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: inductor's artifact logger for CUDA graph decisions (``torch._logging.getArtifactLogger(..., "cudagraphs")``)
CUDAGRAPHS_LOGGER = "torch._inductor.cudagraph_utils.__cudagraphs"
_SKIP_RE = re.compile(r"skipping cudagraphs? due to (.*)", re.IGNORECASE | re.DOTALL)
#: modes that capture CUDA graphs (torch._inductor.list_mode_options: ``triton.cudagraphs``)
CAPTURING_MODES = ("reduce-overhead", "max-autotune")


class _SkipHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            m = _SKIP_RE.search(record.getMessage())
        except Exception:  # noqa: BLE001 - a bad log record must not break training
            return
        if m:
            self.reasons.append(m.group(1).strip().splitlines()[0][:300])


@contextmanager
def capture_cudagraph_skips() -> Iterator[_SkipHandler]:
    """Collect inductor's "skipping cudagraphs due to ..." lines for the duration (its handlers kept)."""
    lg = logging.getLogger(CUDAGRAPHS_LOGGER)
    handler = _SkipHandler()
    saved = (lg.level, lg.disabled)
    lg.addHandler(handler)
    lg.setLevel(logging.WARNING)
    lg.disabled = False
    try:
        yield handler
    finally:
        lg.removeHandler(handler)
        lg.setLevel(saved[0])
        lg.disabled = saved[1]


def _tree_counts() -> tuple[int | None, int | None]:
    """(CUDA graphs recorded, re-recordings) over the CUDA graph trees of this thread's devices."""
    import torch

    from torch._inductor import cudagraph_trees

    recorded = rerecords = 0
    for device in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
        mgr = cudagraph_trees.get_manager(device, create_if_none_exists=False)
        if mgr is None:
            continue
        todo = [n for nodes in (mgr.roots or {}).values() for n in nodes]
        while todo:
            node = todo.pop()
            recorded += 1
            todo += [c for kids in node.children.values() for c in kids]
        rerecords += sum(n for per in mgr.num_rerecord.values() for n in per.values())
    return recorded, rerecords


def cudagraph_facts(mode: str | None, inductor_counters: dict[str, int] | None, reasons: list[str] | None,
                    unavailable: dict[str, str]) -> dict[str, Any]:
    """The ``cudagraphs`` entry (module doc): ``mode``, ``captures`` (whether the mode captures CUDA graphs),
    ``graphs_recorded``, ``rerecords``, ``skips`` (count, from the counters), ``skip_reasons``
    ([{"reason", "count"}], from the log) and ``recorded_non_static_inputs``."""
    out: dict[str, Any] = {"mode": mode or "default", "captures": (mode or "default") in CAPTURING_MODES}
    c = inductor_counters or {}
    out["skips"] = int(c.get("cudagraph_skips", 0)) if inductor_counters is not None else None
    out["recorded_non_static_inputs"] = (int(c.get("cudagraph_recorded_non_static_inputs", 0))
                                         if inductor_counters is not None else None)
    out["skip_reasons"] = ([{"reason": r, "count": n} for r, n in Counter(reasons).items()]
                           if reasons is not None else None)
    unlogged = (out["skips"] or 0) - sum(r["count"] for r in out["skip_reasons"] or ())
    if out["skip_reasons"] is not None and unlogged > 0:
        # inductor counts a skip without logging it when the graph holds no CUDA op (a CPU graph)
        out["skip_reasons"].append({"reason": "not logged by inductor (a graph without CUDA ops)", "count": unlogged})
    out["graphs_recorded"] = out["rerecords"] = None
    if out["captures"]:
        try:
            out["graphs_recorded"], out["rerecords"] = _tree_counts()
        except Exception as e:  # noqa: BLE001 - torch internals: say what could not be read
            unavailable["cudagraph_trees"] = f"{type(e).__name__}: {e}"
    return out
