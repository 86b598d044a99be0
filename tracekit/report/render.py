"""Renderers of an :class:`~tracekit.analyses.registry.AnalysisResult`: text, markdown, JSON and CSV.

Every renderer renders every registered table (:mod:`tracekit.analyses.registry`),
pyinstrument-style: ``Renderer(...).render(result) -> str``. ``table`` (the CLI's
``--table NAME``) picks one table:

- :class:`TextRenderer` (``table`` / ``markdown``): the run summary, then each
  table's text section (its ``view``) in report order; with ``table`` that table
  in full.
- :class:`JSONRenderer`: ``{"meta": ..., name: [row, ...], ...}`` for every table
  of the result (NaN -> null); with ``table`` only ``meta`` and that table.
- :class:`CSVRenderer`: one table (default ``ranks``); cells holding dicts or
  lists (``findings.evidence``) are written as JSON.

Tables arrive as :data:`~tracekit.traces.cols.Cols` (numpy columns) or as DataFrames (the HTML report's and
other commands' callers); every helper reads them with :func:`~tracekit.traces.cols.as_cols` and never imports
pandas.

:func:`render` sends them through the one output path (:mod:`tracekit.report.output`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from typing import Any

import msgspec
import numpy as np

from tracekit.analyses import registry
from tracekit.analyses.registry import AnalysisResult, View, ViewOptions
from tracekit.errors import ConfigError
from tracekit.jsonable import jsonable, records  # noqa: F401 - re-exported: the renderers' JSON helpers
from tracekit.report import output
from tracekit.report.output import FORMATS, Output  # noqa: F401 - FORMATS: the choices, re-exported
from tracekit.traces.manifest import GraphBreaks, Manifest
from tracekit.report.safe import safe_text
from tracekit.report.fmt import table as fmt_table, tabulate
from tracekit.traces import cols as C



def step_ranges(steps: list[int]) -> str:
    """``[2, 3, 4, 7, 9, 10]`` -> ``"2-4, 7, 9-10 (6 steps)"``: long runs stay one line."""
    if not steps:
        return ""
    steps = sorted(set(steps))
    runs: list[str] = []
    lo = prev = steps[0]
    for s in [*steps[1:], None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        runs.append(str(lo) if lo == prev else f"{lo}-{prev}")
        if s is not None:
            lo = prev = s
    return f"{', '.join(runs)} ({len(steps)} step{'s' if len(steps) != 1 else ''})"


def summary_rows(res: AnalysisResult) -> list[tuple[str, Any]]:
    """Key facts of the run for the summary section."""
    m = res.meta
    rows: list[tuple[str, Any]] = [
        ("ranks", f"{len(m['ranks'])} of world size {m['world_size']}"
         + (f" (missing {rank_ranges(m['missing_ranks'])}: cross-rank waits, skews and stragglers are partial)"
            if m.get("missing_ranks") else "")),
        ("backend", m.get("backend")),
        ("nccl", m.get("nccl_version")),
        ("gpus", ", ".join(m.get("gpus") or [])),
        ("profiled steps", step_ranges(m.get("steps") or []) or "none found"),
        ("profiler distortion", distortion_text(m.get("profiler_distortion"))),
        ("pre-window kernels", m.get("pre_window_kernels") if m.get("device_metrics") else None),
        ("clock offsets (us)", {k: round(v, 1) for k, v in m["clock_offsets_us"].items()} if m.get("clock_aligned")
         else None),
        ("skipped files", skipped_text(m.get("skipped_files") or [])),
    ]
    man = m.get("manifest")
    rows += manifest_rows(man) if man is not None else []
    return rows


def rank_ranges(ranks: list[int]) -> str:
    """``[2-127]`` for a long list of ranks (:func:`tracekit.traces.loader.rank_ranges`)."""
    from tracekit.traces.loader import rank_ranges as ranges

    return ranges(sorted(int(r) for r in ranks))


def skipped_text(skipped: list[dict[str, str]]) -> str:
    """The summary's ``skipped files`` line: each file while they are few, else the count, the first
    few and the problems counted (the full list stays in ``meta.skipped_files``)."""
    from tracekit.traces.loader import SKIPPED_SHOWN, skipped_summary

    if len(skipped) <= SKIPPED_SHOWN:
        return "; ".join(f"{s['path']}: {s['problem']}" for s in skipped)
    return skipped_summary([(s["path"], s["problem"]) for s in skipped]).removeprefix("skipped ")


def distortion_text(d: Any) -> str | None:
    """The run summary's ``profiler distortion`` line from ``meta["profiler_distortion"]``."""
    if not isinstance(d, dict) or d.get("ratio") is None:
        return None
    verdict = (f" -- doubtful: {d['doubt']}" if d.get("doubtful") else
               f" -- distorted (> {d['threshold']}): see the finding profiler_distortion" if d.get("distorted")
               else "")
    return (f"{d['ratio']:.2f}x: profiled step {d['profiled_step_us'] / 1000:.2f} ms vs unprofiled "
            f"{d['unprofiled_step_us'] / 1000:.2f} ms (from {d['source']}){verdict}")


#: run.json config keys that only some workloads read (by ``run.model_kind``)
_SHAPE_KEYS = {"toy": ("width", "depth"), "transformer": ("width", "depth", "seq_len", "heads"), "hf": ("seq_len",)}
_DDP_KEYS = ("bucket_cap_mb", "comm_hook", "static_graph", "gradient_as_bucket_view")


def _model_kind(model: Any) -> str | None:
    """The workload kind from the model name when run.json does not say (None: cannot tell)."""
    if model in ("toy", "transformer"):
        return str(model)
    if isinstance(model, str) and model.startswith("hf:"):
        return "hf"
    return "factory" if isinstance(model, str) and ":" in model else None


def config_line(cfg: dict[str, Any], model_kind: Any = None) -> str:
    """``key=value`` for the options that affected the run: the model's shape options only for the
    workloads that read them (toy: width, depth; transformer: + seq_len, heads; Hugging Face: seq_len;
    none for torchvision, factories or an unknown kind), DDP knobs only under DDP/replicate, the
    DDP mode only when compiling; unset or default-off values are left out."""
    kind = model_kind if isinstance(model_kind, str) else _model_kind(cfg.get("model"))
    keys = ["model", "parallel", "dynamo", "optimize_ddp_resolved", "amp", "batch_size", "device",
            *_SHAPE_KEYS.get(kind or "", ())]
    if cfg.get("parallel") in ("ddp", "replicate"):
        keys += _DDP_KEYS
    keys += [k for k in ("grad_accum", "tp") if isinstance(cfg.get(k), int) and cfg[k] > 1]
    if cfg.get("parallel") == "fsdp":
        keys.append("activation_checkpointing")
    return ", ".join(f"{k}={cfg[k]}" for k in keys if cfg.get(k) not in (None, "", "none", False))


def manifest_rows(man: Manifest) -> list[tuple[str, Any]]:
    """Config, unprofiled step-time percentiles and compile facts from a ``run.json``."""
    rows: list[tuple[str, Any]] = []
    cfg = man.config
    if cfg:
        rows.append(("config", config_line(cfg, man.run.model_kind if man.run else None)))
    overall = man.timings.overall if man.timings else None
    spi = overall.sec_per_iter if overall else None
    if spi:
        rows.append(("unprofiled step (all ranks)", ", ".join(
            f"{k} {v * 1000:.2f} ms" for k, v in msgspec.structs.asdict(spi).items() if v is not None)))
    eps = overall.examples_per_sec.p50 if overall and overall.examples_per_sec else None
    if eps is not None:
        rows.append(("examples/s (p50)", f"{eps:,.0f}"))
    c = man.first_compile_facts()
    if c is not None and c.enabled:
        gb = c.graph_breaks or GraphBreaks()
        facts = [f"graphs={_known(c.graph_count)}", f"graph breaks={_known(gb.total)} (model {_known(gb.model)})",
                 f"DDPOptimizer splits={_known(c.ddp_optimizer.intended_splits if c.ddp_optimizer else None)}",
                 f"recompiles={_known(c.recompiles.count if c.recompiles else None)}",
                 f"skipped frames={len(c.skipped_frames or [])}",
                 f"compile time={_seconds(c.compile_time_s)}"]
        rows.append((f"compile (rank {c.rank or 0})", ", ".join(facts)))
    rows += compiled_autograd_rows(man)
    return rows


def _known(v: Any) -> Any:
    """A recorded fact as is; a missing one as ``not recorded`` (never ``None``)."""
    return "not recorded" if v is None else v


def _seconds(v: Any) -> str:
    """A duration in seconds for a reader: ``29.1 s`` (3 significant digits below 100 s), ``not recorded``."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return "not recorded"
    return f"{v:.3g} s" if v < 100 else f"{v:.0f} s"


def compiled_autograd_rows(man: Manifest) -> list[tuple[str, Any]]:
    """One summary line per compiled-autograd capture (python-reducer runs): graphs, allreduces before
    inductor's fusion, buckets after it, and a fullgraph failure with its retry."""
    ca = man.buckets.compiled_autograd if man.buckets else None
    rows: list[tuple[str, Any]] = []
    for g in ca.graphs if ca else []:
        # a retried capture in an older run.json recorded 0 graphs and allreduces (the retry reused the
        # first attempt's graph, which had been counted and then reset): unknown, not zero
        lost = g.fullgraph is False and not g.dynamo_graphs
        facts = [f"{g.nodes} nodes", "dynamo graphs and allreduces before inductor's fusion not recorded" if lost
                 else f"{g.dynamo_graphs} dynamo graph(s), {g.allreduce_calls} allreduces before inductor's fusion"]
        if man.buckets and man.buckets.inductor_ddp_buckets is not None:
            facts.append(f"{man.buckets.inductor_ddp_buckets} buckets after it")
        if g.fullgraph is False:
            masked = f" (reported as: {g.fullgraph_failed_masked_by})" if g.fullgraph_failed_masked_by else ""
            facts.append(f"fullgraph failed on the first call: {g.fullgraph_failed}{masked}; "
                         "retried without fullgraph")
        rows.append((f"compiled autograd (capture {g.graph})", ", ".join(facts)))
    return rows


def to_json_dict(res: AnalysisResult, table: str | None = None) -> dict[str, Any]:
    """The JSON document: ``meta`` and every table of ``res`` as a list of rows (only ``table`` if given)."""
    names = [table] if table else list(res.columns)
    return {"meta": jsonable(res.meta), **{n: records(res.columns[n]) for n in names}}


# -- renderers -----------------------------------------------------------------------------------


class Renderer:
    """Turns an :class:`AnalysisResult` into text. ``table``: render only that table (a registered name)."""

    #: file extension of this format's output
    extension = "txt"

    def __init__(self, table: str | None = None) -> None:
        self.table = table

    def render(self, res: AnalysisResult) -> str:
        raise NotImplementedError

    def _pick(self, res: AnalysisResult) -> Any:
        """The table the renderer writes (``--table``, default ``ranks``), as the result holds it."""
        name = self.table or "ranks"
        if name not in res.columns:
            registry.check_names([name], registry.AnalyzeOptions())  # unknown, or which option enables it
            raise ConfigError(f"--table {name!r}: not in this result (tables: {', '.join(res.columns)})")
        return res.columns[name]


class JSONRenderer(Renderer):
    extension = "json"

    def document(self, res: AnalysisResult) -> dict[str, Any]:
        """:func:`to_json_dict` of ``res`` (``--table`` checked first)."""
        if self.table:
            self._pick(res)
        return to_json_dict(res, self.table)

    def render(self, res: AnalysisResult) -> str:
        return output.render(analysis_output(res, table=self.table), "json")


class CSVRenderer(Renderer):
    extension = "csv"

    def render(self, res: AnalysisResult) -> str:
        t = C.as_cols(self._pick(res))
        for c, a in t.items():  # dicts/lists (findings.evidence) as JSON, not Python reprs
            if a.dtype.kind == "O":
                t[c] = C.obj([_json_cell(v) for v in a.tolist()])
        return output.csv_text(t)


def _json_cell(v: Any) -> Any:
    return msgspec.json.encode(jsonable(v)).decode() if isinstance(v, (dict, list)) else v


class TextRenderer(Renderer):
    """The human report (``markdown=True``: GitHub markdown)."""

    def __init__(self, table: str | None = None, *, markdown: bool = False, per_step: bool = False) -> None:
        super().__init__(table)
        self.opts = ViewOptions(fmt="markdown" if markdown else "table", per_step=per_step)
        self.extension = "md" if markdown else "txt"

    def render(self, res: AnalysisResult) -> str:
        """The report; names from the traces have their control characters escaped (:func:`safe_text`)."""
        return safe_text(self._render(res))

    def _render(self, res: AnalysisResult) -> str:
        md = self.opts.fmt == "markdown"
        if self.table:
            df = self._pick(res)
            return self._section(View(registry.tables()[self.table].title, df)).rstrip() + "\n"
        out = ["# tracekit analysis\n"] if md else []
        if res.meta.get("failure"):  # a failed run: who stopped first comes before anything else
            from tracekit.report.failure import failure_views

            out += [self._section(v) for v in failure_views(res.meta["failure"])]
        out.append(self._section(View("Run summary", [_kv(summary_rows(res), md)])))
        out += [f"note: {n}\n" for n in res.meta.get("notes") or []]
        for s in report_sections(res, replace(self.opts, meta=res.meta)):
            out += [self._section(v) for v in (s.view, s.spread) if v is not None]
        return "\n".join(out).rstrip() + "\n"

    def _section(self, v: View) -> str:
        head = f"## {v.title}\n" if self.opts.fmt == "markdown" else f"{v.title}\n{'=' * len(v.title)}"
        body = "\n".join(v.body) if isinstance(v.body, list) else fmt_table(v.body, self.opts.fmt)
        note = f"\nnote: {v.note}\n" if v.note else ""
        return f"{head}\n{body}\n{note}"


#: above this many ranks the text report shows the rows of :func:`shown_ranks` only
TEXT_MAX_RANKS = 32
#: of which the first ranks always shown (the rest: ranks the findings name)
FIRST_RANKS_SHOWN = 16
#: how the reports name that choice
SHOWN_RANKS_RULE = f"the first {FIRST_RANKS_SHOWN} and those the findings name"


def shown_ranks(res: AnalysisResult) -> list[int] | None:
    """The ranks whose rows the text report shows: all (None) up to :data:`TEXT_MAX_RANKS` ranks; else
    the first :data:`FIRST_RANKS_SHOWN` ranks and, up to :data:`TEXT_MAX_RANKS` in all, those that findings
    name (stragglers, waiting or idle ranks; a finding on every rank names its costliest)."""
    ranks = sorted(int(r) for r in res.meta.get("ranks") or [])
    if len(ranks) <= TEXT_MAX_RANKS:
        return None
    f = C.as_cols(res.columns.get("findings"))
    rank = f.get("rank")
    named = [int(r) for r in dict.fromkeys(rank[~C.isna(rank)].tolist())] if rank is not None else []
    if "evidence" in f:  # a finding on every rank is drawn on its costliest rank
        named += [int(e["worst_rank"]) for e in f["evidence"] if isinstance(e, dict) and e.get("worst_rank") is not None]
    first = ranks[:FIRST_RANKS_SHOWN]
    rest = list(dict.fromkeys(r for r in named if r not in first and r in ranks))
    return sorted({*first, *rest[:TEXT_MAX_RANKS - FIRST_RANKS_SHOWN]})


@dataclass(frozen=True)
class Section:
    """One table's part of a report: ``view``, its section as the report shows it (None: the table has no
    section), and ``spread``, the spread over every rank when ``view`` was cut to :func:`shown_ranks`."""

    name: str
    view: View | None
    spread: View | None = None


def report_sections(res: AnalysisResult, opts: ViewOptions) -> list[Section]:
    """Every table of ``res`` in report order, with its section as every report shows it (the text report and
    the HTML page alike): above :data:`TEXT_MAX_RANKS` ranks cut to :func:`shown_ranks` with a note saying so
    and a spread section over every rank; columns empty in every row left out of a run without device
    metrics."""
    shown = shown_ranks(res)
    out = []
    for name in res.columns:
        t = registry.tables()[name]
        view = t.view(res.columns, opts) if t.view else None
        if view is not None and res.meta.get("device_metrics") is False:
            view = without_empty_columns(view)
        if view is None:
            out.append(Section(name, None))
            continue
        out.append(Section(name, only_ranks(view, shown, name), spread_view(view) if shown is not None else None))
    return out


def _table_body(view: View) -> C.Cols | None:
    """``view``'s table as :data:`~tracekit.traces.cols.Cols` (None: prose lines, or a table without rows)."""
    if isinstance(view.body, list):
        return None
    body = C.as_cols(view.body)
    return body if len(body) and C.nrows(body) else None


def _with_note(note: str | None, said: str) -> str:
    return f"{note}; {said}" if note else said


def without_empty_columns(view: View) -> View:
    """``view`` without the columns that hold no value in any row (a CPU-only run's device metrics),
    with a note naming them; JSON and CSV keep every column."""
    body = _table_body(view)
    if body is None:
        return view
    empty = [c for c, a in body.items() if (C.isna(a) | (a == "" if a.dtype.kind == "O" else False)).all()]
    if not empty:
        return view
    said = f"empty in every row, not shown (--format json / csv keep them): {', '.join(empty)}"
    return View(view.title, {c: a for c, a in body.items() if c not in empty}, note=_with_note(view.note, said))


def _isin(a: np.ndarray, values: list[int]) -> np.ndarray:
    """``Series.isin(values)``: numpy's for numbers, by hashing for objects (ints and None: no ordering)."""
    if a.dtype.kind != "O":
        return np.isin(a, values)
    wanted = set(values)
    return np.fromiter((v in wanted for v in a.tolist()), dtype=bool, count=len(a))


def _distinct(a: np.ndarray) -> int:
    """Distinct present values of a column (``Series.nunique()``)."""
    return len(set(a[~C.isna(a)].tolist()))


def only_ranks(view: View, shown: list[int] | None, name: str) -> View:
    """``view`` with the rows of ``shown`` ranks only, and a note saying so (None: unchanged)."""
    body = _table_body(view) if shown is not None else None
    if body is None or "rank" not in body:
        return view
    keep = _isin(body["rank"], shown)
    if keep.all():
        return view
    n_all, n_kept = _distinct(body["rank"]), _distinct(body["rank"][keep])
    said = (f"rows of {n_kept} of {n_all} ranks shown ({SHOWN_RANKS_RULE}); "
            f"every row: --table {name}, or --format json / csv")
    return View(view.title, C.take(body, keep), note=_with_note(view.note, said))


def _numeric(a: np.ndarray) -> bool:
    """A number column (``pd.api.types.is_numeric_dtype``: ints, floats and flags)."""
    return a.dtype.kind in "biufc"


def spread_view(view: View) -> View | None:
    """For a section with one row per rank: each numeric column's min, median and max over every rank,
    with the ranks where the extremes are (what a report cut to :func:`shown_ranks` would otherwise hide).
    None for other sections."""
    body = _table_body(view)
    if body is None or "rank" not in body:
        return None
    rank = body["rank"]
    if _distinct(rank) + bool(C.isna(rank).any()) < len(rank):  # a rank in several rows
        return None
    keys = [a for c, a in body.items() if c != "rank" and not _numeric(a)]
    if any(_distinct(a) + bool(C.isna(a).any()) > 1 for a in keys):  # rows of different things: no common spread
        return None
    rows = []
    for c, col in body.items():
        if c == "rank" or col.dtype.kind == "b" or not _numeric(col):
            continue
        x = col.astype(float)
        ok = ~np.isnan(x)
        if not ok.any():
            continue
        r, v = rank[ok], x[ok]
        rows.append({"column": c, "min": v.min(), "median": float(np.median(v)), "max": v.max(),
                     "rank_of_min": int(r[v.argmin()]), "rank_of_max": int(r[v.argmax()])})
    if not rows:
        return None
    return View(f"{view.title}: spread over all {len(rank)} ranks",
                {k: C.column([r[k] for r in rows]) for k in rows[0]})


def _kv(rows: list[tuple[str, Any]], markdown: bool) -> str:
    rows = [(k, v) for k, v in rows if v not in (None, "", [], {})]
    return tabulate(rows, headers=["", ""] if markdown else (), tablefmt="github" if markdown else "plain")


def analysis_output(res: AnalysisResult, *, table: str | None = None, per_step: bool = False) -> Output:
    """``res`` for the output path (:mod:`tracekit.report.output`): the text report, the JSON document
    (:func:`to_json_dict`, indent 2) and the CSV table (``table``, default ``ranks``)."""
    return Output(text=lambda fmt: TextRenderer(table, markdown=fmt == "markdown", per_step=per_step).render(res),
                  document=lambda: JSONRenderer(table).document(res), csv=lambda: CSVRenderer(table).render(res),
                  json_indent=2)


def render(res: AnalysisResult, fmt: str = "table", per_step: bool = False, table: str | None = None) -> str:
    """``res`` in ``fmt`` (table | markdown | json | csv); ``table`` picks one table (CSV default: ranks)."""
    return output.render(analysis_output(res, table=table, per_step=per_step), fmt)
