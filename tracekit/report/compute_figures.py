"""The two charts of the report's "Inside the compute" section, from the ``ops`` and ``modules`` tables.

- Roofline (:func:`roofline_figure`): log-log, x = arithmetic intensity (FLOP/byte), y = achieved TFLOP/s, one
  point per op of the shown rank (the ``ops`` rows of one op and dtype summed over modules: ``flops`` and
  ``bytes`` summed, achieved = flops / time), sized by its time per step; one roof per peak that judges a
  plotted point, ``min(peak TFLOP/s, intensity × bandwidth)``, with the peaks the analysis used
  (``meta["peaks"]``, :func:`tracekit.analyses.ops.device_peaks`; which peak judges an op:
  :func:`tracekit.analyses.peaks.peak_key`, e.g. a bf16 GEMM the bf16 tensor peak, a bf16 elementwise op the
  FP32 one). No roof where the rank has no peaks (an unknown GPU, a CPU run): the points alone, and a note.
- Module tree (:func:`module_tree_figure`): an icicle drawn with bars (plotly's lean bundle has no treemap):
  one row per depth, each module a bar as long as its ``us_per_step`` inside its parent's bar, children in
  table order; the part of a parent not covered by its children is its own time.

Both are built for one rank (the first shown); without the table the chart is absent and
:func:`compute_notes` says why in one line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from tracekit.analyses.peaks import peak_key

DTYPE_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def _num(s: Any) -> pd.Series:
    return pd.to_numeric(s, errors="coerce")


def roofline_points(ops: pd.DataFrame, rank: int) -> pd.DataFrame:
    """Per (op, dtype) of ``rank`` with FLOPs and bytes: ``op, dtype, category, us_per_step, flops_per_step,
    bytes_per_step, intensity, tflops`` (sums over modules; achieved = flops / time)."""
    d = ops[ops["rank"] == rank].copy()
    for c in ("us_per_step", "flops_per_step", "bytes_per_step"):
        d[c] = _num(d[c])
    d["dtype"] = d["dtype"].fillna("?")
    g = d.groupby(["op", "dtype"], sort=False).agg(category=("category", "first"), us_per_step=("us_per_step", "sum"),
                                                   flops_per_step=("flops_per_step", lambda s: s.sum(min_count=1)),
                                                   bytes_per_step=("bytes_per_step", lambda s: s.sum(min_count=1)))
    g = g.reset_index()
    g = g[(g["flops_per_step"] > 0) & (g["bytes_per_step"] > 0) & (g["us_per_step"] > 0)].copy()
    g["intensity"] = g["flops_per_step"] / g["bytes_per_step"]
    g["tflops"] = g["flops_per_step"] / (g["us_per_step"] * 1e6)
    return g.reset_index(drop=True)


def roofs(pts: pd.DataFrame, device: dict[str, Any] | None) -> tuple[dict[str, float], float | None]:
    """``({peak key: TFLOP/s}, memory bandwidth TB/s)`` of the peaks that judge the points ``pts``
    (:func:`roofline_points`) on ``device`` (an entry of ``meta["peaks"]``); ``({}, None)`` without one."""
    if not device:
        return {}, None
    tflops = device.get("tflops") or {}
    used = {}
    for cat, dt in zip(pts["category"].tolist(), pts["dtype"].tolist()):
        tf32 = device.get("tf32_conv", True) if cat == "conv" else device.get("tf32")  # (torch's defaults)
        key = peak_key(str(cat), None if dt == "?" else str(dt), bool(tf32))
        if key is not None and tflops.get(key):
            used[key] = float(tflops[key])
    return used, float(device["tbps"]) if device.get("tbps") else None


def _device(peaks: Any, rank: int) -> dict[str, Any] | None:
    """Rank ``rank``'s entry of ``meta["peaks"]`` (keyed by rank; by its text where the meta was read back from
    JSON)."""
    if not peaks:
        return None
    return peaks.get(rank) or peaks.get(str(rank))


def roofline_figure(ops: pd.DataFrame | None, rank: int, label: Any = str, peaks: Any = None) -> go.Figure | None:
    """The roofline of ``rank`` (module doc); None without points. ``label``: escapes op names for plotly;
    ``peaks``: the result's ``meta["peaks"]``."""
    if ops is None or len(ops) == 0:
        return None
    pts = roofline_points(ops, rank)
    if pts.empty:
        return None
    roof, bw = roofs(pts, _device(peaks, rank))
    fig = go.Figure()
    size = 8 + 32 * np.sqrt(pts["us_per_step"] / pts["us_per_step"].max())
    dtypes = list(dict.fromkeys([*pts["dtype"], *roof]))  # (a roof's colour follows the dtypes')
    color = {dt: DTYPE_COLORS[i % len(DTYPE_COLORS)] for i, dt in enumerate(dtypes)}
    for dt, g in pts.groupby("dtype", sort=False):
        fig.add_trace(go.Scatter(
            x=g["intensity"], y=g["tflops"], mode="markers", name=f"ops, {dt}",
            marker={"size": size[g.index], "color": color[dt], "opacity": 0.7, "line": {"width": 0.5}},
            text=[label(o) for o in g["op"]], customdata=np.stack([g["us_per_step"], g["category"].fillna("")], axis=1),
            hovertemplate="%{text}<br>%{customdata[1]}: %{customdata[0]:.1f} µs per step<br>"
                          "%{x:.3g} FLOP/byte, %{y:.3g} TFLOP/s<extra>" + str(dt) + "</extra>"))
    lo = min(float(pts["intensity"].min()) / 4, 0.01)
    hi = max(float(pts["intensity"].max()) * 4, 1e4)
    xs = np.logspace(math.log10(lo), math.log10(hi), 200)
    for dt, peak in roof.items():
        ys = np.minimum(peak, xs * bw) if bw else np.full_like(xs, peak)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"roof, {dt} peak ({peak:.4g} TFLOP/s"
                                 + (f", {bw:.3g} TB/s)" if bw else ")"), line={"color": color[dt], "dash": "dash"},
                                 hoverinfo="skip"))
    fig.update_layout(height=460, margin={"l": 70, "r": 20, "t": 30, "b": 50},
                      xaxis={"type": "log", "exponentformat": "power",  # (10^-4, not plotly's "100µ")
                             "title": "arithmetic intensity (FLOP per byte; bytes: inputs + outputs once, a lower "
                                      "bound)"},
                      yaxis={"type": "log", "title": "achieved TFLOP/s", "exponentformat": "power"},
                      legend={"orientation": "h", "y": -0.2})
    return fig


def icicle_layout(mods: pd.DataFrame) -> pd.DataFrame:
    """``module, depth, start_us, us_per_step``: each module's bar inside its parent's (module doc); rows whose
    parent is missing start at 0 under the root."""
    d = mods[["module", "parent", "us_per_step"]].copy()
    d["us_per_step"] = _num(d["us_per_step"]).fillna(0.0)
    kids: dict[Any, list[int]] = {}
    for i, p in enumerate(d["parent"]):
        kids.setdefault(None if p is None or (isinstance(p, float) and math.isnan(p)) else p, []).append(i)
    names, us = list(d["module"]), list(d["us_per_step"])
    start, depth = [0.0] * len(d), [0] * len(d)
    seen: set[int] = set()

    def place(i: int, x0: float, lev: int) -> None:
        seen.add(i)
        start[i], depth[i] = x0, lev
        x = x0
        for k in kids.get(names[i], []):
            if k not in seen and names[k] != names[i]:
                place(k, x, lev + 1)
                x += us[k]

    x = 0.0
    for r in kids.get(None, []) + [i for i, p in enumerate(d["parent"]) if p is not None and p not in set(names)]:
        if r not in seen:
            place(r, x, 0)
            x += us[r]
    out = pd.DataFrame({"module": names, "depth": depth, "start_us": start, "us_per_step": us})
    return out.iloc[sorted(seen)].reset_index(drop=True)


def module_tree_figure(mods: pd.DataFrame | None, rank: int, label: Any = str) -> go.Figure | None:
    """The module icicle of ``rank`` (module doc); None without modules."""
    if mods is None or len(mods) == 0:
        return None
    m = mods[mods["rank"] == rank]
    if m.empty or not (m["module"] == "").any():  # no module ranges: only (outside modules), no tree
        return None
    lay = icicle_layout(m)
    total = float(lay.loc[lay["depth"] == 0, "us_per_step"].sum()) or 1.0
    palette = ("#0072B2", "#56B4E9", "#009E73", "#E69F00", "#CC79A7", "#D55E00")
    fig = go.Figure(go.Bar(
        y=lay["depth"], x=lay["us_per_step"], base=lay["start_us"], orientation="h",
        marker={"color": [palette[d % len(palette)] for d in lay["depth"]], "line": {"color": "white", "width": 1}},
        text=[label(n if n else "(step)") for n in lay["module"]], textposition="inside", insidetextanchor="middle",
        customdata=100.0 * lay["us_per_step"] / total,
        hovertemplate="%{text}: %{x:.1f} µs per step (%{customdata:.1f} % of the root)<extra></extra>",
        showlegend=False))
    fig.update_layout(height=120 + 36 * (int(lay["depth"].max()) + 1), bargap=0.05,
                      margin={"l": 60, "r": 20, "t": 30, "b": 50},
                      xaxis_title="µs per step (a bar holds its children; what they leave is the module's own time)",
                      yaxis={"title": "depth", "autorange": "reversed", "dtick": 1})
    return fig


def compute_notes(tables: dict[str, Any], rank: int | None, peaks: Any = None) -> list[str]:
    """One line per chart that is absent, saying why (``peaks``: the result's ``meta["peaks"]``)."""
    notes = []
    ops, mods = tables.get("ops"), tables.get("modules")
    pts = roofline_points(ops, rank) if ops is not None and rank is not None else None
    if ops is None:
        notes.append("no roofline: this analysis has no `ops` table")
    elif pts is not None and pts.empty:
        notes.append("no roofline: no op has both FLOPs and bytes (profile with --record-shapes)")
    elif pts is not None and _device(peaks, rank) is None:
        notes.append("roofline without roofs: the device's peaks are unknown (points only; --peaks FILE gives them)")
    elif pts is not None and not roofs(pts, _device(peaks, rank))[0]:
        notes.append("roofline without roofs: no plotted op's dtype has a peak on this device (points only)")
    if mods is None:
        notes.append("no module tree: this analysis has no `modules` table")
    elif rank is not None and (len(mods) == 0 or not ((mods["rank"] == rank) & (mods["module"] == "")).any()):
        notes.append("no module tree: the trace names no module")
    return notes
