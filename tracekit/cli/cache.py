"""``tracekit cache info|clear``: where the cache of decoded traces and tables is, what it holds, and emptying it
(library: :mod:`tracekit.traces.cache`)."""

from __future__ import annotations

import json
import os

import click

from tracekit.cli.common import debug_option, run_guarded
from tracekit.traces import cache


def _where(f):  # noqa: ANN001, ANN202 - a click decorator
    return click.option("--cache-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
                        help="The cache to show or empty (default $TRACEKIT_CACHE, else $XDG_CACHE_HOME/tracekit "
                             "or ~/.cache/tracekit).")(f)


@click.group(context_settings={"max_content_width": 100})
def cache_group() -> None:
    """The cache of decoded traces and computed tables that analyze, whatif, report, diff and annotate share
    (a second look at the same traces reads it instead of decoding them again).

    \b
    Examples:
      tracekit cache info
      tracekit cache clear
      TRACEKIT_CACHE=off tracekit analyze runs/demo     # (or --no-cache) without it
    """


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


@cache_group.command("info")
@_where
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@debug_option
@run_guarded
def info_command(cache_dir: str | None, fmt: str) -> None:
    """Where the cache is, whether it is on, its size cap, and its entries and bytes per kind.

    \b
    Examples:
      tracekit cache info
      tracekit cache info --format json --cache-dir /scratch/tk-cache
    """
    if cache_dir is not None:
        cache.configure(cache_dir=cache_dir)
    got = cache.info()
    if fmt == "json":
        click.echo(json.dumps(got, indent=2))
        return
    where = got["location"] or f"none: the cache is off (${cache.ENV_DIR}={os.environ.get(cache.ENV_DIR)})"
    lines = [f"location: {where}",
             f"entries:  {got['entries']}",
             f"bytes:    {got['bytes']} ({_bytes(got['bytes'])})",
             f"cap:      {got['max_bytes']} ({_bytes(got['max_bytes'])}; least recently used entries go beyond it)"]
    lines += [f"  {kind}: {k['entries']} entries, {_bytes(k['bytes'])}" for kind, k in got["kinds"].items()]
    click.echo("\n".join(lines))


@cache_group.command("clear")
@_where
@debug_option
@run_guarded
def clear_command(cache_dir: str | None) -> None:
    """Remove every entry of the cache.

    \b
    Example:
      tracekit cache clear --cache-dir /scratch/tk-cache
    """
    if cache_dir is not None:
        cache.configure(cache_dir=cache_dir)
    where = cache.info()["location"]
    if where is None:
        click.echo(f"the cache is off (${cache.ENV_DIR}={os.environ.get(cache.ENV_DIR)}): nothing to clear")
        return
    n, size = cache.clear()
    click.echo(f"removed {n} entr{'y' if n == 1 else 'ies'} ({_bytes(size)}) from {where}")
