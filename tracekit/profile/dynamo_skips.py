"""Why dynamo ran a frame eagerly, in dynamo's own words, with the fix where one is known.

``torch.compile`` can run a whole model eagerly without any failure being recorded: a frame
whose code lies in dynamo's skip list (torch's own ``nn.Sequential.forward``, reached from DDP's
forward, which dynamo also skips) is never compiled, so ``get_compilation_metrics()`` has no
record with a ``fail_type`` for it. Dynamo says so only in a DEBUG log of
``torch._dynamo.convert_frame`` (``eval_frame`` before torch 2.5)::

    skipping: forward (reason: frame is in the Dynamo skipfiles list, file: .../torch/nn/modules/container.py)

and, for a frame it tried and gave up on, ``WON'T CONVERT <name> <file> line <n>`` followed by
the error. :func:`capture_dynamo_skips` routes those two loggers into a list for the run (without
printing them) and :func:`skips` keeps the entries that can explain a model running eagerly:
every ``WON'T CONVERT``, and skipped ``forward`` frames (a module's forward), minus the ones
dynamo always skips by design (DDP's and FSDP's own wrappers). :data:`KNOWN_FIXES` maps a skip to
what to change.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LOGGERS = ("torch._dynamo.convert_frame", "torch._dynamo.eval_frame")
_SKIP_RE = re.compile(r"^skipping: (?P<function>\S+) \(reason: (?P<reason>.*), file: (?P<file>[^,]*)\)\s*$", re.S)
_WONT_RE = re.compile(r"^WON'T CONVERT (?P<function>\S+) (?P<file>\S+) line (?P<line>\d+)\s*(?P<rest>.*)$", re.S)
#: forwards dynamo skips by design (they hand the wrapped module to dynamo): not a reason for anything
_BY_DESIGN = ("torch/nn/parallel/distributed.py", "torch/distributed/fsdp/", "torch/distributed/_composable/")
#: (file pattern, reason pattern, fix): the first match gives the fix of a skipped frame
KNOWN_FIXES: tuple[tuple[str, str, str], ...] = (
    (r"torch/nn/modules/container\.py$", r"skipfiles",
     "the top module is torch's own nn.Sequential (or another torch container), whose forward dynamo does not "
     "trace when DDP's forward calls it: compile the model before wrapping it (DDP(torch.compile(model))), or "
     "wrap it in a module of your own whose forward calls it"),
    (r"torch/nn/modules/", r"skipfiles",
     "the top module is one of torch's own nn modules, whose forward dynamo does not trace when DDP's forward "
     "calls it: compile the model before wrapping it (DDP(torch.compile(model))), or wrap it in a module of "
     "your own"),
    (r".", r"^WON'T CONVERT",
     "dynamo gave up on this frame (the error above); TORCH_LOGS=graph_breaks,recompiles shows where"),
)
#: at most this many distinct skips are kept per rank (the first ones: the cause comes first)
MAX_KEPT = 20


class _SkipHandler(logging.Handler):
    """Keeps the ``skipping:`` and ``WON'T CONVERT`` records, formatted only when they match."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        head = str(record.msg)[:16]
        if not (head.startswith("skipping") or head.startswith("WON'T CONVERT")):
            return
        try:
            self.messages.append(record.getMessage())
        except Exception:  # noqa: BLE001 - a bad log record must not break training
            return


@contextmanager
def capture_dynamo_skips() -> Iterator[_SkipHandler]:
    """Route :data:`LOGGERS` at DEBUG into a list for the duration (nothing printed); restore them after."""
    handler = _SkipHandler()
    saved = []
    for name in LOGGERS:
        lg = logging.getLogger(name)
        saved.append((lg, lg.level, lg.propagate, list(lg.handlers)))
        lg.handlers = [handler]
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
    try:
        yield handler
    finally:
        for lg, level, propagate, handlers in saved:
            lg.setLevel(level)
            lg.propagate = propagate
            lg.handlers = handlers


def parse(message: str) -> dict[str, Any] | None:
    """One log message as ``{"function", "file", "line", "reason", "kind"}`` (kind ``skipped`` or
    ``wont_convert``), or None for any other message."""
    m = _SKIP_RE.match(message)
    if m:
        reason = m.group("reason").strip().splitlines()[0] if m.group("reason").strip() else ""
        return {"function": m.group("function"), "file": m.group("file").strip(), "line": None,
                "reason": reason, "kind": "skipped"}
    m = _WONT_RE.match(message)
    if m:
        lines = [ln.strip() for ln in m.group("rest").splitlines() if ln.strip() and ln.strip() != "due to:"]
        # the exception line ends a traceback; without one the first line is the reason
        exc = [ln for ln in lines if re.match(r"^[\w.]+(?:Error|Exception|Unsupported|Skip\w*)\b", ln)]
        return {"function": m.group("function"), "file": m.group("file"), "line": int(m.group("line")),
                "reason": "WON'T CONVERT: " + (exc[-1] if exc else lines[0] if lines else "no reason given"),
                "kind": "wont_convert"}
    return None


def _relevant(s: dict[str, Any]) -> bool:
    if s["kind"] == "wont_convert":
        return True
    path = s["file"].replace("\\", "/")
    return s["function"] == "forward" and not any(k in path for k in _BY_DESIGN)


def fix_for(skip: dict[str, Any]) -> str | None:
    """The known fix for a skip (:data:`KNOWN_FIXES`), or None."""
    path = str(skip.get("file") or "").replace("\\", "/")
    for file_re, reason_re, fix in KNOWN_FIXES:
        if re.search(file_re, path) and re.search(reason_re, str(skip.get("reason") or "")):
            return fix
    return None


def skips(messages: list[str]) -> list[dict[str, Any]]:
    """The skips that can explain eager execution (module doc), first seen first, each once with its
    ``count`` and ``fix``; at most :data:`MAX_KEPT`."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for msg in messages:
        s = parse(msg)
        if s is None or not _relevant(s):
            continue
        key = (s["function"], s["file"], s["reason"])
        if key in out:
            out[key]["count"] += 1
        elif len(out) < MAX_KEPT:
            out[key] = {**s, "count": 1, "fix": fix_for(s)}
    return list(out.values())
