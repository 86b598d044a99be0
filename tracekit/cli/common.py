"""Shared CLI plumbing: error handling and option decorators used by several commands."""

from __future__ import annotations

import functools
import logging
import os
import shlex
import shutil
import sys
import warnings
from collections.abc import Callable
from typing import Any

import click

from tracekit.errors import OutputError, TracekitError
from tracekit.report.output import FORMATS
from tracekit.report.safe import safe_text



def debug_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--debug``: show full tracebacks instead of one-line errors."""
    return click.option("--debug", is_flag=True, help="Show tracebacks for errors.")(f)


def _join_comm_patterns(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    from tracekit.analyses.comm_kernels import join_patterns

    return join_patterns(value)


def comm_pattern_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--comm-kernel REGEX`` (repeatable; aliases ``--comm-pattern``, ``--comm-regex``), passed as
    ``comm_regex``, one regex (several joined as alternatives) or None: one definition for analyze,
    report and annotate."""
    return click.option(
        "--comm-kernel", "--comm-pattern", "--comm-regex", "comm_regex", multiple=True, metavar="REGEX",
        callback=_join_comm_patterns,
        help="Also count kernels whose name matches REGEX as communication (repeatable; the last row of the "
             "rule table, rule user_pattern; see table comm_rules). --comm-pattern and --comm-regex are aliases.",
    )(f)


def format_options(formats: tuple[str, ...] = FORMATS) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--format`` (passed as ``fmt``; the output path's formats, :data:`tracekit.report.output.FORMATS`, the
    same for every command, ``md`` accepted for ``markdown``) and ``--output`` as one decorator, with
    ``--markdown`` kept as a deprecated, hidden alias of ``--format markdown``."""

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def wrapper(*args: Any, markdown: bool = False, **kwargs: Any) -> Any:
            if markdown:
                click.echo("warning: --markdown is deprecated; use --format markdown", err=True)
                kwargs["fmt"] = "markdown"
            if kwargs.get("fmt") == "md":  # the short name the issues and most tools use
                kwargs["fmt"] = "markdown"
            return f(*args, **kwargs)

        wrapper = click.option("--markdown", is_flag=True, hidden=True,
                               help="Deprecated alias of --format markdown.")(wrapper)
        wrapper = click.option(
            "--output", "-o", type=click.Path(dir_okay=False), default=None,
            help="Write the report to this file instead of stdout.",
        )(wrapper)
        return click.option(
            "--format", "fmt", type=click.Choice((*formats, "md") if "markdown" in formats else formats),
            default="table", show_default=True, help="Output format (md: markdown).",
        )(wrapper)

    return deco


def cache_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--cache-dir DIR``, ``--no-cache`` and ``--cache-max-bytes N``: where the cache of decoded traces and
    computed tables lives (:mod:`tracekit.traces.cache`), applied before the command runs (through the
    environment, so its workers follow). One definition for every command that reads traces."""

    @functools.wraps(f)
    def wrapper(*args: Any, cache_dir: str | None = None, no_cache: bool = False,
                cache_max_bytes: int | None = None, **kwargs: Any) -> Any:
        from tracekit.traces import cache

        if no_cache or cache_dir is not None or cache_max_bytes is not None:
            cache.configure(cache_dir=cache_dir, enabled=not no_cache, max_bytes=cache_max_bytes)
        return f(*args, **kwargs)

    wrapper = click.option("--cache-max-bytes", type=click.IntRange(min=0), default=None, metavar="N",
                           help="Size cap of the cache; the least recently used entries go beyond it (default "
                                "$TRACEKIT_CACHE_MAX_BYTES, else 2 GiB).")(wrapper)
    wrapper = click.option("--no-cache", is_flag=True,
                           help="Neither read nor write the cache (same as TRACEKIT_CACHE=off).")(wrapper)
    return click.option("--cache-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
                        help="Cache of decoded traces and computed tables (default $TRACEKIT_CACHE, else "
                             "$XDG_CACHE_HOME/tracekit or ~/.cache/tracekit; see tracekit cache).")(wrapper)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    click.echo(safe_text(f"warning: {message}"), err=True)


def run_guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a command body; turn TracekitError into ``error: ...`` and its exit code.

    With ``--debug`` (passed as a keyword) the traceback is shown instead.
    Library warnings are printed as one ``warning: ...`` line each on stderr.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, debug: bool = False, **kwargs: Any) -> Any:
        logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s")
        old = warnings.showwarning
        warnings.showwarning = _show_warning
        try:
            return fn(*args, **kwargs)
        except TracekitError as e:
            if debug:
                raise
            click.echo(safe_text(f"error: {e}"), err=True)
            sys.exit(e.exit_code)
        except ModuleNotFoundError as e:
            # a package tracekit needs that this environment lacks (a partial install, `python -m tracekit`
            # from a checkout): one line naming it; a module of tracekit's own missing is a bug, shown as one
            if debug or not e.name or e.name.split(".")[0] == "tracekit":
                raise
            click.echo(safe_text(f"error: {missing_package_message(e.name, ctx_name())}"), err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            sys.exit(130)
        finally:
            warnings.showwarning = old

    return wrapper


def invoked_as(argv0: str | None = None, executable: str | None = None) -> str:
    """The command that runs tracekit the way it was run now, for a ``next:`` line that works as printed:
    ``tracekit`` when that name on PATH is the program that ran, else the path it was run by
    (``.venv/bin/tracekit``); ``python -m tracekit`` (the interpreter's path when its name on PATH is
    another) when run as a module."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = sys.executable if executable is None else executable

    def on_path(path: str) -> bool:
        found = shutil.which(os.path.basename(path))
        return found is not None and os.path.realpath(found) == os.path.realpath(path)

    if os.path.basename(argv0) in ("__main__.py", "-m", "-c") or not argv0:
        py = os.path.basename(executable) if on_path(executable) else executable
        return f"{shlex.quote(py)} -m tracekit"
    if on_path(argv0) and os.path.basename(argv0) == "tracekit":
        return "tracekit"
    return shlex.quote(argv0)


def ctx_name() -> str:
    """``tracekit report`` etc.: the command being run (``tracekit`` outside a click context)."""
    ctx = click.get_current_context(silent=True)
    return ctx.command_path if ctx is not None else "tracekit"


def missing_package_message(module: str, command: str) -> str:
    """The one-line error for a package this environment lacks (``module``: the import that failed)."""
    top = module.split(".")[0]
    return (f"{command} needs the Python package '{top}', which is not installed in this environment "
            f"({sys.executable}): install tracekit with its dependencies (pip install -e . in the checkout, "
            f"or pip install {top})")


def emit(text: str, output: str | None) -> None:
    """Write ``text`` to ``output`` (a file path) or stdout.

    A file that cannot be written (missing directory, full disk, no permission) raises
    :class:`OutputError` naming it: one ``error:`` line, exit 2.
    """
    if output:
        try:
            with open(output, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(text if text.endswith("\n") else text + "\n")
        except OSError as e:
            raise OutputError(f"{output}: cannot write the report ({e.strerror or e})") from None
        click.echo(safe_text(f"wrote {output}"), err=True)
    else:
        click.echo(text)


_fast_exit = False


def enable_fast_exit() -> None:
    """Let read-only commands end with :func:`finish` (the console script turns this on; tests do not)."""
    global _fast_exit
    _fast_exit = True


def finish() -> None:
    """End a read-only command now, skipping interpreter teardown.

    Freeing a few hundred MB of DataFrames and pandas' module state at exit
    takes 0.1-0.2 s that nobody needs once the report is written. Only active
    under the console script, after every output has been flushed; worker
    processes are already gone (the loader shuts its pool down).
    """
    if not _fast_exit:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # e.g. stdout piped into `head`
        os._exit(1)
    os._exit(0)


def single_threaded_blas() -> None:
    """Ask numpy's OpenBLAS for one thread, if numpy is not imported yet.

    The analysis never multiplies matrices, but OpenBLAS starts a thread per
    CPU at import (~15 ms on the critical path before the parse workers fork)
    and every fork has to wind that pool down. A value the user set wins.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
