"""``tracekit diff RUN_A RUN_B``: compare two runs side by side (library: :mod:`tracekit.compare.diff`)."""

from __future__ import annotations

import click

from tracekit.cli.common import debug_option, emit, format_options, run_guarded, single_threaded_blas


@click.command()
@click.argument("run_a", type=click.Path(exists=True))
@click.argument("run_b", type=click.Path(exists=True))
@format_options(("table", "markdown", "json"))
@debug_option
@run_guarded
def diff_command(run_a: str, run_b: str, fmt: str, output: str | None) -> None:
    """Compare two runs: step time, per-rank breakdown, buckets, compilation, findings (B − A).

    \b
    Example:
      tracekit diff runs/inductor_nosplit runs/inductor --format markdown
    """
    single_threaded_blas()
    import msgspec

    from tracekit.compare.diff import diff_paths
    from tracekit.compare.render import render_diff
    from tracekit.report.render import jsonable

    d = diff_paths(run_a, run_b)
    if fmt == "json":
        doc = jsonable({"run_a": run_a, "run_b": run_b, **d})
        text = msgspec.json.format(msgspec.json.encode(doc).decode(), indent=1)
    else:
        text = f"A: {run_a}\nB: {run_b}\n\n" + render_diff(d, fmt)
    emit(text, output)
