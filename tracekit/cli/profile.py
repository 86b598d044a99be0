"""``tracekit profile`` (placeholder until the profile helper lands it)."""

from __future__ import annotations

import click


@click.command()
def profile_command() -> None:
    """Run a model on N ranks under torch.profiler (not yet implemented)."""
    raise click.ClickException("tracekit profile is not implemented yet")
