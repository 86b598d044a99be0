"""What ``tracekit profile`` does with a run folder that already holds a run.

A run folder is one run: ``rank<R>.trace.json.gz`` per rank and ``run.json`` (written last, only
when every rank succeeded). Profiling into a folder that holds a finished run would silently replace
part of it, and a smaller world size would leave the old run's higher ranks beside the new traces,
where ``tracekit analyze`` would read them as one run. So :func:`prepare_out_dir`

- refuses a folder with a ``run.json`` (``ConfigError``, exit 2) unless ``force``;
- otherwise removes the earlier run's files first (a failed run's traces and ``rank<R>.error.txt``,
  or, with ``force``, the finished run's), and says so. Anything else in the folder is left alone.
"""

from __future__ import annotations

from pathlib import Path

from tracekit.errors import ConfigError

#: the files a run consists of (what is removed before a new run)
RUN_FILES = ("run.json", "rank*.trace.json.gz", "rank*.error.txt")


def existing_run_files(out_dir: str | Path) -> list[Path]:
    """The files of an earlier run in ``out_dir`` (none when it does not exist)."""
    d = Path(out_dir)
    if not d.is_dir():
        return []
    return sorted({p for pattern in RUN_FILES for p in d.glob(pattern) if p.is_file()})


def holds_finished_run(out_dir: str | Path) -> bool:
    """Whether ``out_dir`` holds a finished run (its ``run.json``)."""
    return (Path(out_dir) / "run.json").is_file()


def prepare_out_dir(out_dir: str | Path, *, force: bool) -> list[Path]:
    """Make ``out_dir`` ready for a new run; return the earlier run's files that were removed.

    Raises :class:`ConfigError` when it holds a finished run and ``force`` is false.
    """
    old = existing_run_files(out_dir)
    if holds_finished_run(out_dir) and not force:
        traces = sum(p.name.endswith(".trace.json.gz") for p in old)
        raise ConfigError(f"{out_dir} already holds a run (run.json, {traces} rank trace(s)): pass --force to "
                          f"replace it, or choose another --out")
    for p in old:
        p.unlink()
    return old
