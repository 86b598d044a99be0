"""``tracekit diff RUN_A RUN_B``: compare two runs side by side (library: :mod:`tracekit.compare.diff`)."""

from __future__ import annotations

import click

from tracekit.cli.common import cache_options, debug_option, emit, format_options, run_guarded, single_threaded_blas


@click.command()
@click.argument("run_a", type=click.Path(exists=True))
@click.argument("run_b", type=click.Path(exists=True))
@click.option("--by", type=click.Choice(["module", "op"]), default=None,
              help="Also compare the runs per module (modules table) or per op (ops table): time, kernels and "
                   "bytes per step side by side, the saving, B-slower rows first (docs/compiled.md).")
@format_options()
@cache_options
@debug_option
@run_guarded
def diff_command(run_a: str, run_b: str, by: str | None, fmt: str, output: str | None) -> None:
    """Compare two runs: step time, per-rank breakdown, buckets, compilation, findings (B − A).

    \b
    Example:
      tracekit diff runs/inductor_nosplit runs/inductor --format markdown
      tracekit diff runs/eager runs/inductor --by module
    """
    single_threaded_blas()
    from tracekit.compare.diff import diff_paths
    from tracekit.compare.render import diff_output
    from tracekit.report.output import render

    emit(render(diff_output(run_a, run_b, diff_paths(run_a, run_b, by)), fmt), output)
