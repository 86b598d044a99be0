"""The ``tracekit`` command line: thin wrappers over the library.

Each command parses options, calls one library function and renders the result.
Library errors (:class:`tracekit.errors.TracekitError`) become one-line messages
and exit codes in :func:`tracekit.cli.common.run_guarded`.
"""

from __future__ import annotations

import click

from tracekit import __version__
from tracekit.cli.analyze import analyze_command
from tracekit.cli.common import enable_fast_exit
from tracekit.cli.bench import bench_group
from tracekit.cli.diff import diff_command
from tracekit.cli.profile import profile_command


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="tracekit")
def main() -> None:
    """Profile distributed PyTorch training and explain where the step time goes.

    \b
    Example:
      tracekit profile --nproc 2 --out runs/eager
      tracekit analyze runs/eager
    """


main.add_command(analyze_command, "analyze")
main.add_command(profile_command, "profile")
main.add_command(diff_command, "diff")
main.add_command(bench_group, "bench")


def entry() -> None:
    """The ``tracekit`` console script (and ``python -m tracekit``)."""
    enable_fast_exit()
    main(prog_name="tracekit")
