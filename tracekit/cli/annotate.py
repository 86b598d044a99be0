"""``tracekit annotate RUN -o DIR``: rank traces with tracekit's findings and bucket spans as extra tracks
(library: :mod:`tracekit.report.annotate`)."""

from __future__ import annotations

import click

from tracekit.cli.common import cache_options, comm_pattern_option, debug_option, run_guarded, single_threaded_blas


@click.command(context_settings={"max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Folder for the annotated copies (same file names as the inputs; never the input folder).")
@click.option("--skip-bad", is_flag=True, help="Skip unreadable rank files (not copied) instead of failing.")
@comm_pattern_option
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Parse/analysis processes (as for analyze).")
@cache_options
@debug_option
@run_guarded
def annotate_command(paths: tuple[str, ...], out_dir: str, skip_bad: bool, comm_regex: str | None,
                     workers: int | None) -> None:
    """Copy each rank's trace with tracekit's findings (instant events) and DDP bucket spans
    (gradient-ready -> allreduce end, exposed parts nested) added as their own tracks, in a
    process named "tracekit (rank R)". Open the copies in https://ui.perfetto.dev or chrome://tracing.

    PATHS is a run folder (or trace files), as for analyze.

    \b
    Example:
      tracekit annotate runs/demo -o runs/demo-annotated
    """
    single_threaded_blas()
    from tracekit.report.annotate import annotate_paths

    for p in annotate_paths(list(paths), out_dir, skip_bad=skip_bad, comm_pattern=comm_regex, workers=workers):
        click.echo(f"wrote {p}", err=True)
    click.echo("open them in Perfetto UI (https://ui.perfetto.dev, 'Open trace file') or chrome://tracing ('Load')",
               err=True)
