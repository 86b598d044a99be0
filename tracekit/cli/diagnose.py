"""``tracekit diagnose RUN_DIR``: which rank stopped first (library: :func:`tracekit.profile.failed_run.diagnose_folder`)."""

from __future__ import annotations

import click

from tracekit.cli.common import debug_option, emit, format_options, run_guarded


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--world-size", type=click.IntRange(min=1), default=None,
              help="Ranks in the run (default: run.json's, else the highest rank that left a file + 1).")
@format_options(("table", "markdown", "json"))
@debug_option
@run_guarded
def diagnose_command(run_dir: str, world_size: int | None, fmt: str, output: str | None) -> None:
    """Name the rank that stopped first in a failed profile run, where, and who waited for it.

    For runs started by torchrun or srun (`tracekit profile` as each rank, with --out on a shared
    file system): reads the ranks' progress, error, stack and flight-recorder files. A run our own
    launcher started already has this in run.json (status failed); it is shown as recorded.

    \b
    Example:
      torchrun --nproc-per-node 8 -m tracekit profile --out /shared/run1 ...
      tracekit diagnose /shared/run1
    """
    from tracekit.json_writer import dumps
    from tracekit.profile.failed_run import diagnose_folder

    failure = diagnose_folder(run_dir, world_size)
    if fmt == "json":
        emit(dumps(failure), output)
        return
    from tracekit.report.failure import failure_views
    from tracekit.report.fmt import table

    out = []
    for v in failure_views(failure):
        body = "\n".join(v.body) if isinstance(v.body, list) else table(v.body, fmt)
        note = f"\nnote: {v.note}" if v.note else ""
        out.append(f"{v.title}\n{'=' * len(v.title)}\n{body}{note}\n" if fmt == "table"
                   else f"## {v.title}\n\n{body}{note}\n")
    emit("\n".join(out), output)
