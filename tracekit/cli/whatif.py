"""``tracekit whatif RUN``: replay the profiled window, predict the undisturbed step and what a change
would buy (library: :func:`tracekit.replay.api.whatif`)."""

from __future__ import annotations

from typing import Any

import click

from tracekit.cli.common import cache_options, comm_pattern_option, debug_option, emit, format_options, run_guarded, \
    single_threaded_blas
from tracekit.replay.changes import OPTIONS
from tracekit.replay.family import Option


def _option(o: Option):  # noqa: ANN202 - a click decorator
    """The CLI option of scenario option ``o`` (:mod:`tracekit.replay.changes`: declared once there)."""
    if o.kind is bool:
        return click.option(o.flag, o.name, is_flag=True, help=o.help)
    kind = click.Choice(list(o.choices)) if o.choices else o.kind
    return click.option(o.flag, o.name, type=kind, default=None, metavar=o.metavar, help=o.help)


def _scenario_options(f):  # noqa: ANN001, ANN202 - a click decorator
    opts = [
        *(_option(o) for o in OPTIONS.values()),
        click.option("--sweep", multiple=True, metavar="OPTION=V1,V2",
                     help="One scenario per value, e.g. bucket-cap-mb=1,5,25,100 (repeatable: every combination)."),
        click.option("--advice", is_flag=True, help="Also list analyze's findings; those that advise a change quote "
                     "the predicted saving of the best scenario making it, and rank by it."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@click.command(context_settings={"max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@_scenario_options
@format_options()
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the HTML page: scenario bars and one step of the window next to the prediction.")
@click.option("--profiler-probe", default=None, metavar="LABEL",
              help="Subtract this calibration probe's cost per event (run.json profiler_cost.probes: eager, or "
                   "the compile backend of a compiled CUDA run) instead of the run's own figure.")
@click.option("--evidence", is_flag=True,
              help="With scenarios: list every setting on which their changes were checked against the same change "
                   "made for real, and every ranking of variants (default: one line per change).")
@comm_pattern_option
@cache_options
@debug_option
@run_guarded
def whatif_command(paths: tuple[str, ...], fmt: str, output: str | None, comm_regex: str | None,
                   sweep: tuple[str, ...], advice: bool, html_path: str | None, profiler_probe: str | None,
                   evidence: bool, **changes: Any) -> None:
    """Predict the step the profiler did not disturb, and what a change would buy: replay every rank's
    CPU threads, GPU streams and collectives from the traces, with the profiler's own cost per event
    taken out, then edit the replay for each scenario and replay it again.

    Without scenario options: the profiled window, its replay (the self-check), the predicted step and,
    where run.json has it, the step measured without the profiler with the prediction's error; then per
    rank the window's and the prediction's idle, exposed communication, overlap and wait. Scenario
    options combine into one scenario; --sweep gives one per value. A scenario that cannot apply to the
    run is named in a note with the reason (exit 2 when none can).

    \b
    Examples:
      tracekit whatif runs/demo
      tracekit whatif runs/demo --sweep bucket-cap-mb=1,5,25,100
      tracekit whatif runs/demo --sweep bucket-cap-mb=1,5,25,100 --evidence
      tracekit whatif runs/demo --bandwidth-x 2 --world-size 4 --format json -o whatif.json
      tracekit whatif runs/one-gpu --world-size 8 --busbw-gbps 45
      tracekit whatif runs/compiled --no-graph-breaks
      tracekit whatif runs/compiled --cuda-graphs
      tracekit whatif runs/compiled-ddp --optimize-ddp ddp_optimizer
      tracekit whatif runs/demo --advice
      tracekit whatif runs/demo --sweep bucket-cap-mb=1,25,100 --html whatif.html
      tracekit whatif runs/compiled --profiler-probe eager
    """
    single_threaded_blas()
    from tracekit.replay.api import whatif
    from tracekit.report.whatif_render import render, render_text

    result = whatif(list(paths) if len(paths) > 1 else paths[0], comm_pattern=comm_regex, sweep=sweep,
                    advice=advice, profiler_probe=profiler_probe, **changes)
    emit(render(result, fmt, evidence), output)
    if html_path:
        from tracekit.report.whatif_html import render_html

        emit(render_html(result, render_text(result, "table")), html_path)
