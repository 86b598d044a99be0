"""The ``tracekit`` command line: thin wrappers over the library.

Each command parses options, calls one library function and renders the result.
Library errors (:class:`tracekit.errors.TracekitError`) become one-line messages
and exit codes in :func:`tracekit.cli.common.run_guarded`.
"""

from __future__ import annotations

import gc
import importlib

import click

from tracekit import __version__
from tracekit.cli.common import enable_fast_exit


class LazyGroup(click.Group):
    """A group whose subcommands are imported when used (click's documented pattern):
    ``tracekit analyze`` starts its parse workers without first importing the
    profile and bench commands."""

    def __init__(self, *args, lazy: dict[str, str], **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.lazy = lazy  # name -> "module:attribute"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, attr = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        if name not in SHORT_LIVED:
            gc.enable()  # profile and bench run training loops: keep the cycle collector
        return super().get_command(ctx, name)


#: commands that read traces and exit: run without the cyclic garbage collector (see :func:`entry`)
SHORT_LIVED = frozenset({"analyze", "diff", "report", "annotate", "diagnose"})


@click.group(cls=LazyGroup, lazy={"analyze": "tracekit.cli.analyze:analyze_command",
                                  "profile": "tracekit.cli.profile:profile_command",
                                  "diff": "tracekit.cli.diff:diff_command",
                                  "report": "tracekit.cli.report:report_command",
                                  "annotate": "tracekit.cli.annotate:annotate_command",
                                  "bench": "tracekit.cli.bench:bench_group",
                                  "diagnose": "tracekit.cli.diagnose:diagnose_command"},
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="tracekit")
def main() -> None:
    """Profile distributed PyTorch training and explain where the step time goes.

    \b
    Example:
      tracekit profile --nproc 2 --out runs/eager
      tracekit analyze runs/eager
    """


def entry() -> None:
    """The ``tracekit`` console script (and ``python -m tracekit``).

    The cyclic garbage collector is off for the short-lived read-only commands
    (:data:`SHORT_LIVED`): their data are numpy arrays and GC-free msgspec structs
    that reference counting frees, and the collector's passes over the ~100k
    objects that importing pandas creates cost 20-30 ms of a 0.3 s run on a
    small trace. ``profile`` and ``bench`` turn it back on when they load.
    """
    gc.disable()
    enable_fast_exit()
    main(prog_name="tracekit")
