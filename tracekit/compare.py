"""``tracekit profile --compare``: profile several configurations, then compare them in one table.

A variant is ``eager`` or ``BACKEND[:OPTIMIZE_DDP]`` (``inductor``,
``inductor:no_optimization``, ``aot_eager:python_reducer``). Each variant is
profiled with otherwise identical options into ``<out>/<variant>``; the
comparison reads each folder back with ``tracekit analyze``'s library call.

Comparison columns (one row per variant):

- ``step_p50_ms`` / ``step_p95_ms``: unprofiled step time from the manifest
  (each step as long as its slowest rank); ``vs_first_pct``: p50 change against
  the first variant (negative = faster).
- ``overlap_pct``: mean over ranks of the per-rank ``overlap_pct``.
- ``exposed_comm_ms``: mean over ranks of ``exposed_comm_us`` per profiled step.
- ``graph_breaks``: real graph breaks in the model (rank 0, from the manifest);
  ``ddp_splits``: intended DDPOptimizer splits.
- ``findings``: the finding codes ``tracekit analyze`` reports.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pandas as pd

from tracekit.errors import ConfigError

_BACKENDS = ("eager", "aot_eager", "inductor")
_MODES = ("ddp_optimizer", "no_optimization", "python_reducer", "python_reducer_without_compiled_forward")


def parse_variants(spec: str) -> list[tuple[str, dict[str, Any]]]:
    """``"eager,inductor,inductor:no_optimization"`` -> ``[(label, config overrides), ...]``."""
    out: list[tuple[str, dict[str, Any]]] = []
    for raw in (s.strip() for s in spec.split(",")):
        if not raw:
            continue
        backend, _, mode = raw.partition(":")
        if raw == "eager":
            over: dict[str, Any] = {"dynamo": "none", "optimize_ddp": None}
        elif backend in _BACKENDS and (not mode or mode in _MODES):
            over = {"dynamo": backend, "optimize_ddp": mode or None}
        else:
            raise ConfigError(f"--compare: unknown variant {raw!r}; use eager or BACKEND[:MODE] with BACKEND in "
                              f"{', '.join(_BACKENDS)} and MODE in {', '.join(_MODES)}")
        label = re.sub(r"[^A-Za-z0-9_.-]+", "-", raw)
        if any(label == l for l, _ in out):
            raise ConfigError(f"--compare: variant {raw!r} given twice")
        out.append((label, over))
    if len(out) < 2:
        raise ConfigError("--compare needs at least two variants, e.g. eager,inductor,inductor:no_optimization")
    return out


def variant_configs(config: Any, spec: str, out_root: str | Path) -> list[tuple[str, Any]]:
    """One validated ProfileConfig per variant, each writing to ``out_root/<label>``."""
    return [(label, dataclasses.replace(config, out_dir=str(Path(out_root) / label), **over))
            for label, over in parse_variants(spec)]


def compare_runs(run_dirs: dict[str, str | Path]) -> pd.DataFrame:
    """Analyze each run folder and build the comparison table (see module doc)."""
    from tracekit.analyses.pipeline import analyze_paths

    rows = []
    for label, d in run_dirs.items():
        res = analyze_paths([str(d)])
        man = res.meta.get("manifest") or {}
        spi = ((man.get("timings") or {}).get("overall") or {}).get("sec_per_iter") or {}
        comp = ((man.get("compile") or {}).get("per_rank") or [{}])[0] or {}
        r = res.ranks
        steps = r["steps"].where(r["steps"] > 0)
        rows.append({
            "variant": label,
            "step_p50_ms": spi.get("p50", float("nan")) * 1e3 if spi.get("p50") is not None else float("nan"),
            "step_p95_ms": spi.get("p95", float("nan")) * 1e3 if spi.get("p95") is not None else float("nan"),
            "overlap_pct": float(r["overlap_pct"].mean()),
            "exposed_comm_ms": float((r["exposed_comm_us"] / steps).mean() / 1e3),
            "graph_breaks": (comp.get("graph_breaks") or {}).get("model") if comp.get("enabled") else None,
            "ddp_splits": (comp.get("ddp_optimizer") or {}).get("intended_splits") if comp.get("enabled") else None,
            "findings": ", ".join(sorted(set(res.findings["code"]))) or "-",
        })
    df = pd.DataFrame(rows).astype({"graph_breaks": "Int64", "ddp_splits": "Int64"})
    base = df["step_p50_ms"].iloc[0] if len(df) else float("nan")
    df.insert(3, "vs_first_pct", 100.0 * (df["step_p50_ms"] - base) / base)
    return df
