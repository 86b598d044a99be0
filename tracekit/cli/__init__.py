"""The ``tracekit`` command line: thin wrappers over the library.

Each command parses options, calls one library function and renders the result.
Library errors (:class:`tracekit.errors.TracekitError`) become one-line messages
and exit codes in :func:`tracekit.cli.common.run_guarded`.
"""

from __future__ import annotations

import gc
import importlib

import click

from tracekit.cli.common import enable_fast_exit


class LazyGroup(click.Group):
    """A group whose subcommands are imported when used (click's documented pattern):
    ``tracekit analyze`` starts its parse workers without first importing the
    profile and bench commands."""

    def __init__(self, *args, lazy: dict[str, str], **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.lazy = lazy  # name -> "module:attribute"

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`SUMMARIES`, whole (click would cut each docstring at 45
        characters, mid-word) and without importing the commands."""
        rows = [(name, SUMMARIES.get(name) or self.get_command(ctx, name).get_short_help_str(200))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, attr = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        if name not in SHORT_LIVED:
            gc.enable()  # profile and bench run training loops: keep the cycle collector
        return super().get_command(ctx, name)


#: one line per command for ``tracekit --help`` (README.md and docs/index.md list the same)
SUMMARIES = {
    "profile": "run a model on N ranks (DDP, replicate, FSDP; eager or torch.compile) under torch.profiler",
    "analyze": "per-rank traces -> compute vs communication, overlap, buckets, waits, findings",
    "diff": "two runs side by side, with deltas",
    "report": "one self-contained HTML report: findings linked to a per-rank timeline",
    "annotate": "copies of the traces with findings and buckets as tracks, for Perfetto",
    "bench": "DDP scaling sweep, its JSON diff, and the DDP+RPC parameter-server benchmark",
    "whatif": "replay the traces: predict the step the profiler did not disturb, with its measured error",
    "diagnose": "a failed run: which rank stopped first, where, and who waited for it",
    "cache": "the cache of decoded traces and tables the commands share: info, clear",
}

#: commands that read traces and exit: run without the cyclic garbage collector (see :func:`entry`)
SHORT_LIVED = frozenset({"analyze", "diff", "report", "annotate", "whatif", "diagnose"})


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # click.version_option would need the version at import; it is looked up only when asked for
    if value and not ctx.resilient_parsing:
        from tracekit.version import version

        click.echo(f"tracekit, version {version()}")
        ctx.exit()


@click.group(cls=LazyGroup, lazy={"analyze": "tracekit.cli.analyze:analyze_command",
                                  "profile": "tracekit.cli.profile:profile_command",
                                  "diff": "tracekit.cli.diff:diff_command",
                                  "report": "tracekit.cli.report:report_command",
                                  "annotate": "tracekit.cli.annotate:annotate_command",
                                  "bench": "tracekit.cli.bench:bench_group",
                                  "whatif": "tracekit.cli.whatif:whatif_command",
                                  "diagnose": "tracekit.cli.diagnose:diagnose_command",
                                  "cache": "tracekit.cli.cache:cache_group"},
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
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
