"""``tracekit bench diff A.json B.json`` (PyTorch's ``benchmarks/distributed/ddp/diff.py``).

Metadata side by side, then per model and point: p75 and p95 sec/iter and ex/s of A
(baseline) and B (test), with the % change ``-100 * (B - A) / A`` of sec/iter
(positive = B is faster). Points are matched by model, batch size, DDP or not, and
world size; either file may be tracekit's or the original script's.
"""

from __future__ import annotations

import json
from typing import Any

from tabulate import tabulate

from tracekit.bench.schema import load_document
from tracekit.compare.core import speedup_pct
from tracekit.profile.harness import percentile

DIFF_PERCENTILES = (75, 95)
_SKIP_META = {"tracekit_schema", "hosts", "topology", "command_line", "created_utc"}


def _flat_meta(meta: dict[str, Any]) -> dict[str, str]:
    out = {}
    for k, v in meta.items():
        if k in _SKIP_META:
            continue
        if isinstance(v, dict):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = json.dumps(v2) if isinstance(v2, (dict, list)) else str(v2)
        else:
            out[k] = json.dumps(v) if isinstance(v, list) else str(v)
    if meta.get("hosts") is not None:
        out["hosts"] = ",".join(h.get("hostname", "?") for h in meta["hosts"])
    if "topology" in meta:
        out["topology"] = "(none)" if not meta["topology"] else f"({len(str(meta['topology']).splitlines())} lines)"
    return out


def diff_documents(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Structured diff of two :func:`load_document` results."""
    ma, mb = _flat_meta(a["meta"]), _flat_meta(b["meta"])
    meta = [{"key": k, "a": ma.get(k, "-"), "b": mb.get(k, "-"), "same": ma.get(k) == mb.get(k)}
            for k in sorted(set(ma) | set(mb))]
    if a["meta"].get("topology") and b["meta"].get("topology"):
        meta.append({"key": "topology text", "a": "", "b": "",
                     "same": a["meta"]["topology"] == b["meta"]["topology"]})
    models = []
    index_b = {(m["model"], m["batch_size"]): m for m in b["models"]}
    for m in a["models"]:
        other = index_b.get((m["model"], m["batch_size"]))
        if other is None:
            models.append({"model": m["model"], "batch_size": m["batch_size"], "rows": [], "missing": "B"})
            continue
        pts_b = {(p["ddp"], p["world_size"]): p for p in other["points"]}
        rows = []
        for p in m["points"]:
            q = pts_b.get((p["ddp"], p["world_size"]))
            if q is None:
                continue
            row: dict[str, Any] = {"label": p["label"], "ddp": p["ddp"], "world_size": p["world_size"],
                                   "error_a": p["error"], "error_b": q["error"]}
            for pc in DIFF_PERCENTILES:
                va = percentile(p["measurements"], pc) if p["measurements"] else None
                vb = percentile(q["measurements"], pc) if q["measurements"] else None
                bs = m["batch_size"]
                row[f"p{pc}"] = {
                    "a_sec": va, "b_sec": vb,
                    "a_ex_per_sec": bs / va if va else None, "b_ex_per_sec": bs / vb if vb else None,
                    "change_pct": speedup_pct(va, vb) if (va and vb) else None,
                }
            rows.append(row)
        models.append({"model": m["model"], "batch_size": m["batch_size"], "rows": rows, "missing": None})
    for m in b["models"]:
        if not any(x["model"] == m["model"] and x["batch_size"] == m["batch_size"] for x in a["models"]):
            models.append({"model": m["model"], "batch_size": m["batch_size"], "rows": [], "missing": "A"})
    return {"a": {"path": a["path"], "format": a["format"]}, "b": {"path": b["path"], "format": b["format"]},
            "meta": meta, "models": models}


def diff_rows(d: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per model and matched point (``--format csv``): per percentile A and B sec/iter and ex/s and the
    % change (positive = B is faster)."""
    rows = []
    for m in d["models"]:
        for r in m["rows"]:
            row: dict[str, Any] = {"model": m["model"], "batch_size": m["batch_size"], "point": r["label"],
                                   "ddp": r["ddp"], "world_size": r["world_size"], "error_a": r["error_a"],
                                   "error_b": r["error_b"]}
            for pc in DIFF_PERCENTILES:
                row |= {f"p{pc}_{k}": v for k, v in r[f"p{pc}"].items()}
            rows.append(row)
    return rows


def diff_files(path_a: str, path_b: str) -> dict[str, Any]:
    return diff_documents(load_document(path_a), load_document(path_b))


def _num(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def render_diff(d: dict[str, Any], fmt: str = "simple") -> str:
    out = [f"A (baseline): {d['a']['path']} [{d['a']['format']} format]",
           f"B (test):     {d['b']['path']} [{d['b']['format']} format]", ""]
    meta_rows = [[r["key"], _clip(r["a"]), _clip(r["b"]), "" if r["same"] else "*"] for r in d["meta"]]
    out.append(tabulate(meta_rows, headers=["", "A", "B", "differs"], tablefmt=fmt, disable_numparse=True))
    out.append("")
    for m in d["models"]:
        out.append(f"Benchmark: {m['model']} with batch size {m['batch_size']}")
        if m["missing"]:
            out.append(f"  (only in {'A' if m['missing'] == 'B' else 'B'})")
            out.append("")
            continue
        head = ["point"]
        for pc in DIFF_PERCENTILES:
            head += [f"p{pc} A s/iter", f"p{pc} B s/iter", f"p{pc} A ex/s", f"p{pc} B ex/s", f"p{pc} change"]
        rows = []
        for r in m["rows"]:
            row = [r["label"]]
            for pc in DIFF_PERCENTILES:
                c = r[f"p{pc}"]
                row += [_num(c["a_sec"], ".4f") if not r["error_a"] else "FAILED",
                        _num(c["b_sec"], ".4f") if not r["error_b"] else "FAILED",
                        _num(c["a_ex_per_sec"], ".1f"), _num(c["b_ex_per_sec"], ".1f"),
                        "-" if c["change_pct"] is None else f"{c['change_pct']:+.1f}%"]
            rows.append(row)
        out.append(tabulate(rows, headers=head, tablefmt=fmt, disable_numparse=True))
        out.append("")
    out.append("change: -100 * (B - A) / A of sec/iter; positive = B is faster")
    return "\n".join(out) + "\n"


def _clip(s: str, n: int = 40) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
