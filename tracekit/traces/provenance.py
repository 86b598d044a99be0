"""What inductor says about its compiled kernels: ``compiled_kernels.json`` in a run folder.

``tracekit profile --dynamo inductor`` writes the file (format below); the ``ops`` table
(:mod:`tracekit.analyses.ops`) reads it through :func:`read_compiled_kernels` to give each compiled kernel the
modules and aten ops it fused::

    {"version": 1, "kernels": {"<kernel name as in the trace>": {
        "modules": ["blocks.3.mlp.0", ...], "aten_ops": ["aten::addmm", ...], "source_nodes": [...],
        "graph": "forward" | "backward" | "inference", "flops": null | int, "bytes": null | int}}}

A missing file is an empty mapping; an unreadable one too, with a :class:`TraceLoadWarning` naming it (the
analysis then falls back to the kernel names, and says so).
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

import msgspec

from tracekit.errors import TraceLoadWarning

FILE_NAME = "compiled_kernels.json"


class CompiledKernel(msgspec.Struct, frozen=True):
    """One kernel's entry (unknown keys are ignored, so the writer may add some)."""

    modules: list[str] = []
    aten_ops: list[str] = []
    source_nodes: list[str] = []
    graph: str | None = None
    flops: int | None = None
    bytes: int | None = None


class _File(msgspec.Struct):
    version: int = 1
    kernels: dict[str, CompiledKernel] = {}


@functools.lru_cache(maxsize=16)
def read_compiled_kernels(run_dir: str | Path) -> dict[str, CompiledKernel]:
    """kernel name -> :class:`CompiledKernel` of ``run_dir``'s :data:`FILE_NAME` ({} when there is none)."""
    path = Path(run_dir) / FILE_NAME
    try:
        raw = path.read_bytes()
    except OSError:
        return {}
    try:
        return dict(msgspec.json.decode(raw, type=_File).kernels)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        warnings.warn(f"{path}: not a compiled-kernels file ({e}); compiled kernels are attributed by their names",
                      TraceLoadWarning, stacklevel=2)
        return {}


def module_of(entry: CompiledKernel) -> str | None:
    """The module a compiled kernel belongs to: the longest common dotted prefix of its modules (the nearest
    module enclosing every op it fused; ``""``, the whole model, when they share none); None without modules."""
    mods = [m for m in entry.modules if isinstance(m, str)]
    if not mods:
        return None
    parts = [m.split(".") if m else [] for m in mods]
    common: list[str] = []
    for words in zip(*parts):
        if any(w != words[0] for w in words):
            break
        common.append(words[0])
    return ".".join(common)


def as_dict(entry: CompiledKernel) -> dict[str, Any]:
    return msgspec.structs.asdict(entry)
