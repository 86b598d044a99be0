"""``tracekit analyze``: load per-rank traces, run the analyses, render a report."""

from __future__ import annotations

import click

from tracekit.cli.common import (cache_options, comm_pattern_option, debug_option, emit, finish, format_options,
                                 run_guarded, single_threaded_blas)


@click.command(context_settings={"max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@format_options()
@click.option("--per-step", is_flag=True, help="Add the per-step breakdown table.")
@click.option("--table", "table", default=None, metavar="NAME",
              help="Output only this table, in full (any format; --format csv writes 'ranks' without it). "
                   "Tables: see docs/reference/tables.md; a wrong name lists them.")
@click.option("--skip-bad", is_flag=True, help="Skip unreadable rank files (listed in the report) instead of failing.")
@comm_pattern_option
@click.option("--align/--no-align", "align", default=None,
              help="Force / disable cross-rank clock alignment (default: align when the manifest "
                   "shows more than one host).")
@click.option("--hta", is_flag=True, help="Add HTA's overlap and temporal breakdown per rank (needs holistictraceanalysis).")
@click.option("--peaks", "peaks_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Device peaks (JSON: dense TFLOP/s per dtype and TB/s) for the ops table's roofline, tried "
                   "before the built-in table (schema: docs/ops.md).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Processes for parsing and for the per-rank analyses (default: one per rank, at most one per "
                   "CPU this process may use (taskset, cpuset, Slurm), 1 for small inputs).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the self-contained HTML report (as `tracekit report`) to FILE.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where each rank is decoded and reduced to its tables: this host's processes, or a "
                   "dask.distributed cluster (needs tracekit[dask]; the paths must be readable by its workers).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="With --engine dask: the scheduler to use (tcp://host:8786); default: a local cluster of "
                   "--workers processes.")
@click.option("--progress/--no-progress", "progress", default=None,
              help="Progress bars on stderr for long loads (default: on when stderr is a terminal).")
@click.option("--timings", is_flag=True, help="Print the wall time of each phase (load, analyze, render) on stderr.")
@click.option("--whatif", "whatif", is_flag=True,
              help="Also replay the traces (as `tracekit whatif --advice`): findings that advise a change quote the "
                   "predicted saving of the change and are ranked by it, profiler_distortion the predicted "
                   "unprofiled step, each with the replay's measured error (seconds per 100 MB of traces); with "
                   "--html the page gets a what-if section.")
@cache_options
@debug_option
@run_guarded
def analyze_command(paths: tuple[str, ...], fmt: str, output: str | None, per_step: bool, table: str | None,
                    skip_bad: bool, comm_regex: str | None, align: bool | None, hta: bool, peaks_path: str | None,
                    workers: int | None, html_path: str | None, engine: str, scheduler: str | None,
                    progress: bool | None, timings: bool, whatif: bool) -> None:
    """Analyze per-rank torch.profiler traces: compute vs communication, overlap,
    exposed communication, idle time, collectives, DDP buckets and cross-rank waits.

    PATHS is a run folder (searched recursively for *.json / *.json.gz) or trace files.

    \b
    Examples:
      tracekit analyze runs/demo
      tracekit analyze runs/demo --per-step --format markdown -o report.md
      tracekit analyze rank0.json.gz rank1.json.gz --format json
      tracekit analyze runs/demo --format csv --table collectives
      tracekit analyze runs/demo --table findings
      tracekit analyze runs/demo --table ops --peaks my_gpu.json
      tracekit analyze runs/demo --html report.html
      tracekit analyze runs/demo --whatif --html report.html
      tracekit analyze /shared/run --engine dask --scheduler tcp://head:8786
    """
    single_threaded_blas()
    from tracekit.analyses.options import AnalyzeOptions
    from tracekit.runner.options import RunOptions
    from tracekit.runner.pipeline import PhaseTimer, analyze_paths, load_and_analyze

    clock = PhaseTimer()
    peaks = None
    if peaks_path:
        from tracekit.analyses.peaks import load_peaks

        peaks = load_peaks(peaks_path)
    options = RunOptions(AnalyzeOptions(comm_pattern=comm_regex, align={None: "auto", True: "on", False: "off"}[align],
                                        hta=hta, peaks=peaks),
                         skip_bad=skip_bad, workers=workers, engine=engine, scheduler=scheduler, progress=progress,
                         keep_events=whatif,  # --html decodes the ranks it draws; the replay needs every event
                         table_names=(table,) if table else (), preload=("tracekit.report.render",))
    if whatif or html_path:  # these read the traces too
        traces, res = load_and_analyze(list(paths), options, clock)
    else:
        traces, res = None, analyze_paths(list(paths), options, clock)
    replay = None
    if whatif:
        from tracekit.replay.api import advise

        replay = advise(traces, res, comm_pattern=comm_regex)
        clock.lap("whatif")
    from tracekit.report.render import render

    emit(render(res, fmt, per_step=per_step, table=table), output)
    clock.lap("render")
    if html_path:
        from tracekit.report.html import HTMLRenderer

        emit(HTMLRenderer(traces, label=" ".join(paths), table=table, whatif=replay).render(res), html_path)
        clock.lap("html")
    if timings:
        click.echo(clock.report(), err=True)
    finish()
