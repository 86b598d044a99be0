"""``tracekit profile --torchviz``: the autograd graph of one training step, drawn with torchviz.

As PyTorch's own ``benchmarks/dynamo/distributed.py --torchviz`` does: torchviz's
``make_dot(loss, params=dict(model.named_parameters()), show_attrs=True, show_saved=True)``
on the loss of a step, before its backward runs (saved tensors are freed by the backward).
Rank 0 writes the graph as ``autograd.dot`` (graphviz source) in the run folder and, when
graphviz's ``dot`` program is installed, renders it to ``autograd.svg``. A missing ``dot`` (or
a render that fails) leaves the ``.dot`` file and a note with the install hint, never a
failed run.

The step drawn is one extra step after the profiler window, run on every rank (DDP's
backward needs every rank), so drawing costs no timed or profiled step. With a compiled
model the autograd graph holds one ``CompiledFunctionBackward`` node per compiled
subgraph (one per DDPOptimizer bucket): what autograd really runs.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tracekit.errors import ConfigError

DOT_FILE = "autograd.dot"
SVG_FILE = "autograd.svg"
INSTALL_TORCHVIZ = "pip install 'tracekit[viz]' (torchviz and the graphviz Python package)"
INSTALL_DOT = ("graphviz's `dot` program is not installed: apt-get install graphviz (Debian/Ubuntu), "
               "dnf install graphviz, brew install graphviz or conda install graphviz; then "
               f"`dot -Tsvg {DOT_FILE} -o {SVG_FILE}` in the run folder draws it")
#: seconds ``dot`` may take (a large model's graph can take long to lay out)
RENDER_TIMEOUT_S = 300


def check_available() -> None:
    """Raise ConfigError (before any rank starts) when torchviz cannot be imported."""
    if importlib.util.find_spec("torchviz") is None:
        raise ConfigError(f"--torchviz needs torchviz: {INSTALL_TORCHVIZ}")


def dump_autograd_graph(loss: Any, model: Any, out_dir: Path) -> dict[str, Any]:
    """Write ``autograd.dot`` (and ``autograd.svg`` when ``dot`` is installed) for ``loss``'s graph.

    Returns the manifest entry ``{"dot", "svg", "nodes", "note"}`` (files relative to
    ``out_dir``; ``svg`` None with the reason in ``note`` when it was not drawn).
    """
    from torchviz import make_dot

    dot = make_dot(loss, params=dict(model.named_parameters()), show_attrs=True, show_saved=True)
    source = dot.source
    (out_dir / DOT_FILE).write_text(source, encoding="utf-8")
    entry: dict[str, Any] = {"dot": DOT_FILE, "svg": None,
                             "nodes": sum(1 for line in dot.body if "[label=" in line and "->" not in line),
                             "note": None}
    exe = shutil.which("dot")
    if exe is None:
        entry["note"] = INSTALL_DOT
        return entry
    try:
        p = subprocess.run([exe, "-Tsvg", DOT_FILE, "-o", SVG_FILE], cwd=out_dir, capture_output=True, text=True,
                           timeout=RENDER_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        entry["note"] = f"dot could not draw {DOT_FILE}: {e}"
        return entry
    if p.returncode != 0 or not (out_dir / SVG_FILE).is_file():
        entry["note"] = f"dot exited {p.returncode}: {p.stderr.strip()[-300:]}"
        return entry
    entry["svg"] = SVG_FILE
    return entry
