"""``tracekit analyze`` (being written)."""

from __future__ import annotations

import click


@click.command()
@click.argument("paths", nargs=-1)
def analyze_command(paths: tuple[str, ...]) -> None:
    """Analyze per-rank traces."""
    raise click.ClickException("not implemented yet")
