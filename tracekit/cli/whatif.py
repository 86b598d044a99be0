"""``tracekit whatif RUN``: replay the profiled window and predict the undisturbed step
(library: :func:`tracekit.replay.api.whatif`)."""

from __future__ import annotations

import click

from tracekit.cli.common import comm_pattern_option, debug_option, emit, format_options, run_guarded, \
    single_threaded_blas


@click.command(context_settings={"max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@format_options()
@comm_pattern_option
@debug_option
@run_guarded
def whatif_command(paths: tuple[str, ...], fmt: str, output: str | None, comm_regex: str | None) -> None:
    """Predict the step the profiler did not disturb: replay every rank's CPU threads, GPU streams
    and collectives from the traces, with the profiler's own cost per event taken out.

    Prints the profiled window, its replay (the self-check), the predicted step and, where run.json
    has it, the step measured without the profiler with the prediction's error; then per rank the
    window's and the prediction's idle, exposed communication, overlap and wait.

    \b
    Examples:
      tracekit whatif runs/demo
      tracekit whatif runs/demo --format json -o whatif.json
    """
    single_threaded_blas()
    from tracekit.replay.api import whatif
    from tracekit.report.whatif_render import render

    emit(render(whatif(list(paths) if len(paths) > 1 else paths[0], comm_pattern=comm_regex), fmt), output)
