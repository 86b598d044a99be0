"""``tracekit whatif RUN``: replay the profiled window, predict the undisturbed step and what a change
would buy (library: :func:`tracekit.replay.api.whatif`)."""

from __future__ import annotations

import click

from tracekit.cli.common import cache_options, comm_pattern_option, debug_option, emit, format_options, run_guarded, \
    single_threaded_blas


def _scenario_options(f):  # noqa: ANN001, ANN202 - a click decorator
    opts = [
        click.option("--bucket-cap-mb", type=float, default=None, metavar="MB",
                     help="DDP's gradients regrouped into buckets of this cap (DDP's rule, run.json's layout)."),
        click.option("--first-bucket-cap-mb", type=float, default=None, metavar="MB",
                     help="... with this cap for the first bucket (DDP's bucket_cap_mb_list[0])."),
        click.option("--no-graph-breaks", is_flag=True, help="Remove the CPU work between compiled graphs at "
                     "each graph break (the GPU idle it causes follows)."),
        click.option("--comm-hook", type=click.Choice(["bf16", "fp16"]), default=None,
                     help="DDP compress hook: fp32 allreduces move half the bytes (NCCL runs only)."),
        click.option("--bandwidth-x", type=float, default=None, metavar="K",
                     help="K times the network bandwidth (alpha-beta model fitted to the run's collectives)."),
        click.option("--busbw-gbps", type=float, default=None, metavar="GBPS",
                     help="The network's allreduce bus bandwidth (nccl-tests' busbw, GB/s) instead of the run's fitted "
                     "one; from a 1-rank run, instead of the NVLink default."),
        click.option("--world-size", type=int, default=None, metavar="N",
                     help="N ranks: ring factor 2(N-1)/N on the bandwidth term, same per-rank compute; from a "
                     "1-rank NCCL run, DDP's allreduce calls get kernels of the NVLink default (or --busbw-gbps)."),
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
                   bucket_cap_mb: float | None, first_bucket_cap_mb: float | None, no_graph_breaks: bool,
                   comm_hook: str | None, bandwidth_x: float | None, busbw_gbps: float | None, world_size: int | None,
                   sweep: tuple[str, ...], advice: bool, html_path: str | None, profiler_probe: str | None,
                   evidence: bool) -> None:
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
      tracekit whatif runs/demo --advice
      tracekit whatif runs/demo --sweep bucket-cap-mb=1,25,100 --html whatif.html
      tracekit whatif runs/compiled --profiler-probe eager
    """
    single_threaded_blas()
    from tracekit.replay.api import whatif
    from tracekit.report.whatif_render import render, render_text

    result = whatif(list(paths) if len(paths) > 1 else paths[0], comm_pattern=comm_regex,
                    bucket_cap_mb=bucket_cap_mb, first_bucket_cap_mb=first_bucket_cap_mb,
                    no_graph_breaks=no_graph_breaks, comm_hook=comm_hook, bandwidth_x=bandwidth_x,
                    world_size=world_size, busbw_gbps=busbw_gbps, sweep=sweep, advice=advice,
                    profiler_probe=profiler_probe)
    emit(render(result, fmt, evidence), output)
    if html_path:
        from tracekit.report.whatif_html import render_html

        emit(render_html(result, render_text(result, "table")), html_path)
