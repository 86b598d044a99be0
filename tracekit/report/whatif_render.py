"""Render a :class:`tracekit.replay.api.WhatifResult`: text/markdown tables, JSON, CSV.

JSON is :meth:`WhatifResult.to_dict` (keys ``baseline``, ``scenarios``, ``profiler_cost``, ``ranks``,
``steps``, ``scenario_ranks``, ``notes``), so ``tracekit.whatif(path).to_dict()`` is what ``--format json`` prints.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from tracekit.report import output
from tracekit.report.fmt import tabulate
from tracekit.report.output import Output, tablefmt
from tracekit.report.render import FIRST_RANKS_SHOWN, TEXT_MAX_RANKS
from tracekit.replay import trust
from tracekit.replay.api import WhatifResult

_BASELINE_ROWS = (
    ("profiled window (trace)", "profiled_step_us"),
    ("replayed window (self-check)", "replayed_step_us"),
    ("predicted, profiler cost removed", "predicted_step_us"),
    ("measured without the profiler (run.json)", "measured_unprofiled_step_us"),
    ("profiler warm-up, CUPTI only (run.json)", "cupti_step_us"),
)


def _ms(us: Any) -> str:
    return "-" if us is None or (isinstance(us, float) and not math.isfinite(us)) else f"{us / 1000:.2f} ms"


def _ms_column(us: pd.Series) -> list[str]:
    """A column of µs as bare ms figures ("-" where missing): the unit is in the header."""
    return [_ms(v).removesuffix(" ms") for v in us]


def _pct(p: Any) -> str:
    return "" if p is None or (isinstance(p, float) and not math.isfinite(p)) else f"{p:+.1f} %"


def trust_lines(b: dict[str, Any]) -> list[str]:
    """How far to trust the predicted step: its regime's benchmark error (tracekit.replay.trust)."""
    if b.get("self_check_failed"):
        return ["how far to trust the prediction: not at all: the replay does not reproduce the profiled window "
                "(self-check failed, see the note)", ""]
    reg, idle = b.get("regime"), b.get("predicted_gpu_idle_pct")
    if b.get("rank_regimes"):  # ranks of different kinds: each kind's figures, for its ranks
        parts = [f"{_ranks_text(r['ranks'])} a {trust.label(r['name'])} (GPU idle {r['predicted_gpu_idle_pct']:.1f} % "
                 f"of the predicted step): on {r['runs']} benchmark runs of that kind the predicted step was off by a "
                 f"median of {r['error_pct_median']:.1f} %, at most {r['error_pct_max']:.1f} %"
                 f"{trust.lean_clause(r.get('multi_rank'))}" for r in b["rank_regimes"]]
        return ["how far to trust the prediction, by rank (the predicted step is the slowest rank's, a "
                f"{trust.label(reg['name'])}): " + "; ".join(parts) + " (docs/whatif.md)", ""]
    if not reg or idle is None:
        return []
    lean = trust.lean_clause(reg.get("multi_rank"))
    return [f"how far to trust the prediction: a {trust.label(reg['name'])} (GPU idle {idle:.1f} % of the "
            f"predicted step); on "
            f"{reg['runs']} benchmark runs of that kind the predicted step was off by a median of "
            f"{reg['error_pct_median']:.1f} %, at most {reg['error_pct_max']:.1f} %{lean} (docs/whatif.md)", ""]


def _ranks_text(ranks: list[int]) -> str:
    """``rank 3`` / ``ranks 0-2, 5``."""
    runs: list[str] = []
    for r in sorted(ranks):
        if runs and runs[-1].split("-")[-1] == str(r - 1):
            runs[-1] = f"{runs[-1].split('-')[0]}-{r}"
        else:
            runs.append(str(r))
    return f"rank{'s' if len(ranks) > 1 else ''} {', '.join(runs)}"


def _truth_note(b: dict[str, Any]) -> str:
    """How steady the measured step is: its spread, and its drift from the last warm-up steps."""
    parts = []
    if b.get("measured_spread_pct") is not None:
        parts.append(f"its own p90/p50 spread: {b['measured_spread_pct']:.1f} %")
    if b.get("measured_drift_pct") is not None:
        parts.append(f"moved {b['measured_drift_pct']:+.1f} % from the last warm-up steps")
    return "; ".join(parts)


BASELINE_HEADERS = ("step (slowest rank, mean)", "time", "error")


def baseline_rows(b: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The baseline as rows (what, time, its error or how steady it is): the text report's and the HTML's."""
    extra = {"replayed_step_us": _pct(b.get("replay_error_pct")) + " vs window" if b.get("replay_error_pct") is not None
             else "", "predicted_step_us": (_pct(b.get("error_pct")) + " vs measured") if b.get("error_pct") is not None
             else "no measurement to check it against",
             "profiled_step_us": (_pct(b.get("window_vs_measured_pct")) + " vs measured")
             if b.get("window_vs_measured_pct") is not None else "",
             "measured_unprofiled_step_us": _truth_note(b),
             "cupti_step_us": "the undisturbed step is at most this, within the host's noise" + (
                 f"; the prediction is {_pct(b.get('predicted_vs_cupti_pct'))} above it"
                 if (b.get("predicted_vs_cupti_pct") or 0) > 0 else "")}
    return [(label, _ms(b.get(key)), extra.get(key, "")) for label, key in _BASELINE_ROWS
            if key != "cupti_step_us" or b.get(key) is not None]


def _baseline_lines(r: WhatifResult, tablefmt: str) -> str:
    return tabulate(baseline_rows(r.baseline), headers=BASELINE_HEADERS, tablefmt=tablefmt)


def _arrow(a: Any, b: Any, unit: str = "ms") -> str:
    def one(v: Any) -> str:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "-"
        return f"{v / 1000:.2f}" if unit == "ms" else f"{v:.0f}"
    return f"{one(a)} -> {one(b)}"


#: the per-rank table's short name of each regime (tracekit.replay.trust)
_BOUND_SHORT = {"gpu-bound": "GPU", "cpu-bound": "CPU", "gpu-bound-once-shed": "GPU once shed"}


def _rank_rows(ranks: pd.DataFrame) -> pd.DataFrame:
    """The per-rank table for reading: window -> predicted pairs, ms (overlap in %)."""
    return pd.DataFrame({
        "rank": ranks["rank"].astype(int).astype(str),
        "window ms": _ms_column(ranks["window_step_us"]),
        "replayed ms": _ms_column(ranks["replayed_step_us"]),
        "predicted ms": _ms_column(ranks["predicted_step_us"]),
        "measured ms": _ms_column(ranks["measured_unprofiled_step_us"]),
        "error": [_pct(v) for v in ranks["error_pct"]],
        "bound": [_BOUND_SHORT.get(v, "-") for v in ranks["bound"]] if "bound" in ranks else "-",
        "GPU idle ms": [_arrow(a, b) for a, b in zip(ranks["window_idle_us"], ranks["predicted_idle_us"])],
        "exposed comm ms": [_arrow(a, b) for a, b in zip(ranks["window_exposed_comm_us"],
                                                          ranks["predicted_exposed_comm_us"])],
        "overlap %": [_arrow(a, b, "pct") for a, b in zip(ranks["window_overlap_pct"], ranks["predicted_overlap_pct"])],
        "wait ms": [_arrow(a, b) for a, b in zip(ranks["window_wait_us"], ranks["predicted_wait_us"])],
    })


def shown_rank_rows(ranks: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """The per-rank rows the text shows and the note saying so: every rank up to
    :data:`~tracekit.report.render.TEXT_MAX_RANKS`; above, the first
    :data:`~tracekit.report.render.FIRST_RANKS_SHOWN` and as many again of the ranks with the longest predicted
    step (the slowest rank sets the job's step), as the analysis report cuts its tables."""
    if len(ranks) <= TEXT_MAX_RANKS or "rank" not in ranks:
        return ranks, None
    first = ranks["rank"].head(FIRST_RANKS_SHOWN)
    slow = ranks.sort_values(["predicted_step_us", "rank"], ascending=[False, True], kind="stable",
                             na_position="last")["rank"].head(TEXT_MAX_RANKS - FIRST_RANKS_SHOWN)
    keep = ranks["rank"].isin(set(first) | set(slow))
    return ranks[keep], (f"rows of {int(keep.sum())} of {len(ranks)} ranks shown (the first {FIRST_RANKS_SHOWN} and "
                         f"the {TEXT_MAX_RANKS - FIRST_RANKS_SHOWN} with the longest predicted step); every rank: "
                         "--format json / csv")


def _delta_ms(us: Any) -> str:
    return "-" if us is None or (isinstance(us, float) and not math.isfinite(us)) else f"{us / 1000:+.2f}"


def scenario_table(scenarios: list[dict[str, Any]]) -> pd.DataFrame:
    """The ``scenarios`` rows flat (``changes`` as its name), as CSV writes them."""
    return pd.DataFrame([{k: v for k, v in s.items() if k != "changes"} for s in scenarios])


def _scenario_rows(scenarios: list[dict[str, Any]]) -> pd.DataFrame:
    """One line per scenario for reading: predicted step and what moved, ms."""
    return pd.DataFrame({
        "scenario": [s["name"] for s in scenarios],
        "predicted ms": [_ms(s["predicted_step_us"]).removesuffix(" ms") for s in scenarios],
        "delta ms": [_delta_ms(s["delta_us"]) for s in scenarios],
        "delta": [_pct(s["delta_pct"]) for s in scenarios],
        "compute ms": [_delta_ms(s["delta_compute_us"]) for s in scenarios],
        "exposed comm ms": [_delta_ms(s["delta_exposed_comm_us"]) for s in scenarios],
        "GPU idle ms": [_delta_ms(s["delta_idle_us"]) for s in scenarios],
        "wait ms": [_delta_ms(s["delta_wait_us"]) for s in scenarios],
    })


def _advice_lines(found: list[dict[str, Any]]) -> list[str]:
    if not found:
        return ["(no finding)"]
    lines = []
    for i, f in enumerate(found, 1):
        w = f["evidence"].get("whatif") or {}
        who = "all ranks" if f.get("rank") is None else f"rank {f['rank']}"
        if "predicted_saving_us" in w:
            quote = f"{w['scenario']}: saves {_ms(w['predicted_saving_us'])} per step ({_pct(w['predicted_saving_pct'])})"
        elif f["code"] == "profiler_distortion" and w:
            quote = f"predicted unprofiled step {_ms(w.get('predicted_step_us'))}"
        else:
            quote = "no scenario predicts it"
        lines.append(f"{i}. {f['code']} ({who}; {quote})\n   {f['message']}")
    return lines


#: width at which the long ``setting`` texts wrap in the check and ranking tables
SETTING_WIDTH = 70


def _wrapped(style: str, widths: list[int | None]) -> list[int | None] | None:
    """Column widths to wrap at in a plain-text table; none in Markdown, whose rows cannot span lines."""
    return widths if style == "simple" else None


def _pts(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def _check_lines(checks: list[dict[str, Any]], style: str) -> list[str]:
    """One row per check (the reasons, ``why``, are in the JSON and docs/whatif.md: one paragraph each)."""
    if not checks:
        return ["(no check recorded)"]
    rows = [{"change": c["change"].replace("_", "-"), "where it was made for real": c["setting"],
             "verdict": c["verdict"], "runs": c["runs"] or "-",
             "median pts": _pts(c["delta_error_pp_median"]), "max pts": _pts(c["delta_error_pp_max"])}
            for c in checks]
    return [tabulate(rows, headers="keys", tablefmt=style, disable_numparse=True,
                     maxcolwidths=_wrapped(style, [None, SETTING_WIDTH, None, None, None, None])),
            "why each verdict: scenario_checks[].why in --format json, and docs/whatif.md"]


def _ranking_lines(rankings: list[dict[str, Any]], style: str) -> list[str]:
    """One row per paired setting (which pairs were missed, and why: ``misses`` in the JSON)."""
    rows = [{"paired timings": k["setting"], "ranked as measured": f"{k['ranked']} of {k['pairs']} pairs"}
            for k in rankings]
    out = [tabulate(rows, headers="keys", tablefmt=style, disable_numparse=True,
                    maxcolwidths=_wrapped(style, [SETTING_WIDTH + 20, None]))]
    if any(k["ranked"] != k["pairs"] for k in rankings):
        out.append("the pairs not ranked as measured, and why: scenario_ranking[].misses in --format json")
    return out


def cost_line(pc: dict[str, Any]) -> str:
    """The profiler cost taken out per event: the calibrated figures and the factor on them."""
    k = pc.get("scale", 1.0)
    factor = (f" x {k:g} (an event of a real step costs the profiler about {k:g}x the calibration step's: "
              f"docs/whatif.md)") if k != 1.0 else ""
    q = pc.get("cut_quantile")
    bound = (f"; a cut sheds at most the {100 * q:.0f}th percentile of its thread's work-segment lengths"
             if q is not None else "")
    return (f"profiler cost taken out: {pc['cpu_op_ns']:.0f} ns per CPU operator, {pc['runtime_ns']:.0f} ns per "
            f"runtime call ({pc['source']}){factor}{bound}")


def _check_summary(checks: list[dict[str, Any]]) -> list[str]:
    """One line per change: on how many settings and runs it was checked and how far off its predicted change was
    (the whole table: ``--evidence``)."""
    out = []
    for change in dict.fromkeys(c["change"] for c in checks):
        rows = [c for c in checks if c["change"] == change]
        done = [c for c in rows if c["verdict"] == "checked" and c["runs"]]
        if not done:
            out.append(f"  {change.replace('_', '-')}: not checked against the same change made for real")
            continue
        med = [c["delta_error_pp_median"] for c in done if c["delta_error_pp_median"] is not None]
        top = [c["delta_error_pp_max"] for c in done if c["delta_error_pp_max"] is not None]
        if med and top and len(med) == 1:
            spread = f": median error {med[0]:.1f} points of the step, at most {max(top):.1f}"
        elif med and top:
            spread = (f": median error {min(med):.1f}-{max(med):.1f} points of the step per setting, at most "
                      f"{max(top):.1f}")
        else:
            spread = ""
        where = "1 setting" if len(done) == 1 else f"{len(done)} settings"
        out.append(f"  {change.replace('_', '-')}: checked on {where}, {sum(c['runs'] for c in done)} runs{spread}")
    return out


def _ranking_summary(rankings: list[dict[str, Any]]) -> str:
    """How often the predictions ranked variants as measured, over every setting, in one line."""
    ranked, pairs = sum(k["ranked"] for k in rankings), sum(k["pairs"] for k in rankings)
    return (f"  ranked as measured: {ranked} of {pairs} pairs of variants, over {len(rankings)} settings"
            if pairs else "  (no ranking recorded)")


def _evidence_lines(r: WhatifResult, style: str, evidence: bool) -> list[str]:
    """How far the scenarios' changes were checked: one line per change and one for the rankings by default,
    the tables with every setting under ``--evidence``."""
    if not evidence:
        return ["", "How far these changes were checked (the same change made for real; error: |predicted - "
                    "measured change|, points of the baseline step; every setting: --evidence, docs/whatif-evidence.md)",
                *_check_summary(r.scenario_checks), _ranking_summary(r.scenario_ranking)]
    return ["", "How far these changes were checked (the same change made for real; delta error: |predicted "
                "- measured change|, points of the baseline step)", *_check_lines(r.scenario_checks, style),
            "", "How often the predictions ranked variants as measured (pairs of variants of one baseline, "
                "the baseline among them, whose paired timings differ beyond their quartiles over rounds; "
                "ranked: the predicted changes differ the same way)", *_ranking_lines(r.scenario_ranking, style)]


def _merged_notes(notes: list[str]) -> list[str]:
    """The notes, those that differ only in their scenario prefix (``bucket-cap-mb=1: run.json has no ...``)
    said once for all their scenarios (``bucket-cap-mb=1, 5, 25: run.json has no ...``)."""
    groups: dict[str, list[str]] = {}
    for n in notes:
        head, sep, rest = n.partition(": ")
        key = rest if sep and "=" in head and " " not in head else n
        groups.setdefault(key, []).append(head if key == rest else "")
    out = []
    for key, heads in groups.items():
        if heads[0] == "":
            out.append(key)
            continue
        option = heads[0].split("=", 1)[0]
        values = [h.split("=", 1)[1] if h.startswith(option + "=") else h for h in heads]
        out.append(f"{option}={', '.join(values)}: {key}" if len(heads) > 1 else f"{heads[0]}: {key}")
    return out


def render_text(r: WhatifResult, fmt: str = "table", evidence: bool = False) -> str:
    """The baseline, the profiler cost used, then the per-rank table (window vs predicted); with scenarios, their
    table and a summary of how far their changes were checked (``evidence``: every setting's rows)."""
    style = tablefmt(fmt)
    pc = r.profiler_cost
    parts = [f"Baseline over {r.baseline.get('steps', 0)} profiled steps", _baseline_lines(r, style), "",
             *trust_lines(r.baseline),
             cost_line(pc), "",
             "Per rank (per step, means over steps; window -> predicted)"]
    ranks, cut_note = shown_rank_rows(r.ranks)
    parts.append(tabulate(_rank_rows(ranks), headers="keys", tablefmt=style, showindex=False,
                          disable_numparse=True))
    parts += [f"note: {cut_note}"] if cut_note else []
    if r.scenarios:
        parts += ["", "Scenarios (predicted step, slowest rank; changes per rank and step vs the baseline "
                      "prediction)", tabulate(_scenario_rows(r.scenarios), headers="keys", tablefmt=style,
                                             showindex=False, disable_numparse=True)]
    if r.scenarios:
        parts += _evidence_lines(r, style, evidence)
    if r.advice is not None:
        parts += ["", "Advice (analyze's findings; the replay's predicted saving per step where a scenario carries "
                      "them out)", *_advice_lines(r.advice)]
    parts += [f"note: {n}" for n in _merged_notes(r.notes)]
    return "\n".join(parts)


def render(r: WhatifResult, fmt: str, evidence: bool = False) -> str:
    """``fmt``: one of :data:`~tracekit.report.output.FORMATS` (csv: the scenarios when any were asked, else the
    per-rank table). The HTML page is :func:`tracekit.report.whatif_html.render_html`."""
    return output.render(Output(text=lambda f: render_text(r, f, evidence), document=r.to_dict,
                                frame=lambda: scenario_table(r.scenarios) if r.scenarios else r.ranks), fmt)
