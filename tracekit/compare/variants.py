"""``tracekit profile --compare``: profile several configurations, then compare them in one table.

A variant is ``[PARALLEL:]BACKEND[:OPTIMIZE_DDP[:FUSION]]``: ``eager``, ``inductor``,
``inductor:no_optimization``, ``inductor:python_reducer:coalesced``,
``replicate:inductor:python_reducer`` (PARALLEL ``ddp`` | ``replicate`` | ``fsdp``, default the
base options'; FUSION = ``--inductor-ddp-fusion``). Each variant is
profiled with otherwise identical options into ``<out>/<variant>``; the
comparison reads each folder back with ``tracekit analyze``'s library call.

Comparison columns (one row per variant):

- ``step_p50_ms`` / ``step_p95_ms``: unprofiled step time from the manifest
  (each step as long as its slowest rank); ``vs_first_pct``: p50 change against
  the first variant (negative = faster).
- ``overlap_pct``: mean over ranks of the per-rank ``overlap_pct``.
- ``exposed_comm_ms``: mean over ranks of ``exposed_comm_us`` per profiled step.
- ``graph_breaks``: real graph breaks in the model (rank 0, from the manifest);
  ``ddp_splits``: intended DDPOptimizer splits; ``inductor_buckets``: allreduce buckets
  inductor's DDP fusion made in the compiled-autograd backward (``counters["inductor"]["ddp_buckets"]``);
  ``buckets_per_step``: gradient-bucket allreduces per profiled step in the traces (mean over ranks).
- ``findings``: the finding codes ``tracekit analyze`` reports.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from tracekit.compare.core import change_pct
from tracekit.errors import ConfigError
from tracekit.profile.config import ProfileConfig, default_out_dir
from tracekit.traces.manifest import CompileFacts

_BACKENDS = ("eager", "aot_eager", "inductor")
_PARALLEL = ("ddp", "replicate", "fsdp")
_MODES = ("ddp_optimizer", "no_optimization", "python_reducer", "python_reducer_without_compiled_forward")
_FUSIONS = ("concat", "coalesced", "none")
_SYNTAX = ("[PARALLEL:]BACKEND[:MODE[:FUSION]] with PARALLEL in " + ", ".join(_PARALLEL) + "; BACKEND in "
           + ", ".join(_BACKENDS) + "; MODE in " + ", ".join(_MODES) + "; FUSION in " + ", ".join(_FUSIONS))


def _overrides(raw: str) -> dict[str, Any]:
    """Config overrides of one variant (see :data:`_SYNTAX`); ConfigError when it does not parse."""
    parts = raw.split(":")
    over: dict[str, Any] = {}
    if parts[0] in _PARALLEL:
        over["parallel"] = parts.pop(0)
        parts = parts or ["eager"]
    if not parts or parts[0] not in _BACKENDS or len(parts) > 3:
        raise ConfigError(f"--compare: unknown variant {raw!r}; use {_SYNTAX}")
    backend, mode, fusion = parts[0], parts[1] if len(parts) > 1 else None, parts[2] if len(parts) > 2 else None
    if (mode is not None and mode not in _MODES) or (fusion is not None and fusion not in _FUSIONS):
        raise ConfigError(f"--compare: unknown variant {raw!r}; use {_SYNTAX}")
    if backend == "eager" and mode is not None:
        raise ConfigError(f"--compare: {raw!r}: eager takes no optimize_ddp mode")
    over.update(dynamo="none" if backend == "eager" else backend, optimize_ddp=mode)
    if fusion is not None:
        over["inductor_ddp_fusion"] = fusion
        if fusion == "none":
            over["inductor_ddp_bucket_mb"] = None
    elif backend != "inductor" or not (mode or "").startswith("python_reducer"):
        # the base options' fusion applies only where inductor compiles a python-reducer backward
        over.update(inductor_ddp_fusion=None, inductor_ddp_bucket_mb=None)
    return over


def parse_variants(spec: str) -> list[tuple[str, dict[str, Any]]]:
    """``"eager,inductor,replicate:inductor:python_reducer"`` -> ``[(label, config overrides), ...]``."""
    out: list[tuple[str, dict[str, Any]]] = []
    for raw in (s.strip() for s in spec.split(",")):
        if not raw:
            continue
        over = _overrides(raw)
        label = re.sub(r"[^A-Za-z0-9_.-]+", "-", raw)
        if any(label == l for l, _ in out):
            raise ConfigError(f"--compare: variant {raw!r} given twice")
        out.append((label, over))
    if len(out) < 2:
        raise ConfigError("--compare needs at least two variants, e.g. eager,inductor,inductor:no_optimization")
    return out


def variant_configs(options: dict[str, Any], spec: str, out_root: str | Path | None = None) -> list[tuple[str, Any]]:
    """One validated ProfileConfig per variant (``options`` = the other ``ProfileConfig`` fields), each
    writing to ``out_root/<label>`` (default ``traces/<time>-<model>-compare``).

    The base options are validated only together with each variant's overrides (a base
    ``--inductor-ddp-fusion`` is valid for the python-reducer variants only).
    """
    variants = parse_variants(spec)
    if out_root is None:
        neutral = {**options, "dynamo": "none", "optimize_ddp": None, "inductor_ddp_fusion": None,
                   "inductor_ddp_bucket_mb": None, "parallel": "ddp", "tp": 1}
        out_root = default_out_dir(ProfileConfig(**neutral)).replace("-ddp-eager", "-compare")
    return [(label, ProfileConfig(**{**options, **over, "out_dir": str(Path(out_root) / label)}))
            for label, over in variants]


def compare_runs(run_dirs: dict[str, str | Path]) -> pd.DataFrame:
    """Analyze each run folder and build the comparison table (see module doc)."""
    from tracekit.runner.pipeline import analyze_paths

    rows = []
    for label, d in run_dirs.items():
        res = analyze_paths([str(d)])
        man = res.meta.get("manifest")
        p50, p95 = (man.step_time_s("p50"), man.step_time_s("p95")) if man else (None, None)
        comp = (man.first_compile_facts() if man else None) or CompileFacts()
        r = res.ranks
        steps = r["steps"].where(r["steps"] > 0)
        rows.append({
            "variant": label,
            "step_p50_ms": p50 * 1e3 if p50 is not None else float("nan"),
            "step_p95_ms": p95 * 1e3 if p95 is not None else float("nan"),
            "overlap_pct": float(r["overlap_pct"].mean()),
            "exposed_comm_ms": float((r["exposed_comm_total_us"] / steps).mean() / 1e3),
            "graph_breaks": comp.graph_breaks.model if comp.enabled and comp.graph_breaks else None,
            "ddp_splits": comp.ddp_optimizer.intended_splits if comp.enabled and comp.ddp_optimizer else None,
            "inductor_buckets": comp.inductor_ddp_buckets if comp.enabled else None,
            "buckets_per_step": (len(res.buckets) / max(int(steps.sum()), 1)) if len(res.buckets) else 0.0,
            "findings": ", ".join(sorted(set(res.findings["code"]))) or "-",
        })
    df = pd.DataFrame(rows).astype({"graph_breaks": "Int64", "ddp_splits": "Int64", "inductor_buckets": "Int64"})
    base = df["step_p50_ms"].iloc[0] if len(df) else float("nan")
    df.insert(3, "vs_first_pct", change_pct(base, df["step_p50_ms"]))
    return df
