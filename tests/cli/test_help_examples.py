"""Every command's ``--help`` shows at least one example of its use (the brief's CLI rule)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from tracekit.cli import main


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every visible command and subcommand (the top group imports its commands lazily: asked by name)."""
    ctx = click.Context(group)
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        path = (*prefix, name)
        out.append(path)
        if isinstance(cmd, click.Group):
            out += _commands(cmd, path)
    return out


@pytest.mark.parametrize("path", _commands(main), ids=" ".join)
def test_every_command_help_has_an_example(path: tuple[str, ...]) -> None:
    res = CliRunner().invoke(main, [*path, "--help"])
    assert res.exit_code == 0, res.output
    assert "Example" in res.output and f"tracekit {path[0]}" in res.output, res.output
