"""``tracekit diff RUN_A RUN_B``: compare two runs side by side (library: :mod:`tracekit.diff`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from tracekit.cli.common import debug_option, emit, format_options, run_guarded


def _load(run: str) -> tuple[Any, dict[str, Any] | None]:
    import tracekit
    from tracekit.analyses.explain import explain
    from tracekit.profile.manifest import read_manifest

    ts = tracekit.load(run)
    if ts.manifest is None:
        p = Path(run)
        ts.manifest = read_manifest(p if p.is_dir() else p.parent)
    res = tracekit.analyze(ts)
    if "findings" not in res.extra or "graph_breaks" not in res.extra:
        res.extra.update(explain(ts, res))
    return res, ts.manifest


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, pd.DataFrame):
        return json.loads(obj.replace({np.nan: None}).to_json(orient="records"))
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_jsonable(v) for v in obj]
    return obj


@click.command()
@click.argument("run_a", type=click.Path(exists=True))
@click.argument("run_b", type=click.Path(exists=True))
@format_options(("table", "markdown", "json"))
@debug_option
@run_guarded
def diff_command(run_a: str, run_b: str, fmt: str, output: str | None) -> None:
    """Compare two runs: step time, per-rank breakdown, buckets, compilation, findings (B − A).

    \b
    Example:
      tracekit diff runs/inductor_nosplit runs/inductor --format markdown
    """
    from tracekit.diff import diff_runs
    from tracekit.report.explain_render import render_diff

    a, ma = _load(run_a)
    b, mb = _load(run_b)
    d = diff_runs(a, b, ma, mb)
    if fmt == "json":
        text = json.dumps({"run_a": run_a, "run_b": run_b, **_jsonable(d)}, indent=1, default=str)
    else:
        text = f"A: {run_a}\nB: {run_b}\n\n" + render_diff(d, fmt)
    emit(text, output)
