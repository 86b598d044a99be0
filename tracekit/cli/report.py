"""``tracekit report RUN [RUN2] -o report.html``: the self-contained HTML report (library: :mod:`tracekit.report.html`)."""

from __future__ import annotations

import click

from tracekit.cli.common import (cache_options, comm_pattern_option, debug_option, emit, run_guarded,
                                 single_threaded_blas)


@click.command(context_settings={"max_content_width": 100})
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("--output", "-o", type=click.Path(dir_okay=False), default="report.html", show_default=True,
              help="The HTML file to write.")
@click.option("--step", type=int, default=None,
              help="ProfilerStep number the timeline shows (default: the step of median duration).")
@click.option("--label", "labels", multiple=True, help="Name of each run on the page (once per run; default: its path).")
@click.option("--skip-bad", is_flag=True, help="Skip unreadable rank files (listed in the report) instead of failing.")
@click.option("--plotly", type=click.Choice(["inline", "cdn"]), default="inline", show_default=True,
              help="inline: the page carries plotly.js (its lean basic bundle, ~1.2 MB) and opens offline; "
                   "cdn: a small page that loads plotly.js from plotly's CDN (needs the network).")
@comm_pattern_option
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Parse/analysis processes (as for analyze).")
@cache_options
@debug_option
@run_guarded
def report_command(runs: tuple[str, ...], output: str, step: int | None, labels: tuple[str, ...], skip_bad: bool,
                   plotly: str, comm_regex: str | None, workers: int | None) -> None:
    """Write one self-contained HTML report (works offline): run summary, findings linked to a
    per-rank timeline of one step (compute, communication, memory, idle, DDP buckets with their
    exposed part, compiled regions and graph breaks), per-bucket and per-rank bars, sortable tables.

    RUNS: one run folder (or trace file), or two to show them side by side.

    \b
    Examples:
      tracekit report runs/demo -o report.html
      tracekit report runs/cmp/inductor runs/cmp/inductor-no_optimization -o cmp.html
      tracekit report runs/demo --step 3 -o step3.html
      tracekit report runs/demo --plotly cdn -o small.html
    """
    if len(runs) > 2:
        raise click.UsageError(f"one or two runs, got {len(runs)}")
    if labels and len(labels) != len(runs):
        raise click.UsageError(f"--label given {len(labels)} time(s) for {len(runs)} run(s)")
    single_threaded_blas()
    from tracekit.report.html import report_paths

    page = report_paths([[r] for r in runs], labels=list(labels) or None, step=step, skip_bad=skip_bad,
                        comm_pattern=comm_regex, workers=workers, plotly=plotly)
    emit(page, output)
