"""How a rank reports a failure and how the launcher names it (profile and bench workers).

A failing worker writes ``rank<R>.error.txt`` (traceback, then a one-line summary as
the last line) into its run folder and exits 1. The launcher names the rank whose
file was written first — the root cause; its peers fail afterwards with connection
errors — and that file's last line.
"""

from __future__ import annotations

import re
import sys
import traceback
from pathlib import Path

_ERROR_FILE = re.compile(r"rank(\d+)\.error\.txt")


def error_filename(rank: int) -> str:
    return f"rank{rank}.error.txt"


def last_line(text: str) -> str:
    """The last non-blank line of ``text``, stripped."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""


def write_error_file(run_dir: str | Path | None, rank: int, exc: BaseException) -> None:
    """Write ``rank<R>.error.txt`` into ``run_dir`` (if given): the traceback, then a one-line summary."""
    if run_dir:
        try:
            Path(run_dir).mkdir(parents=True, exist_ok=True)
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            # Last line = a one-line summary, which the launcher reports.
            first = (str(exc).strip().splitlines() or [""])[0]
            text += f"{type(exc).__name__}: {first}\n"
            (Path(run_dir) / error_filename(rank)).write_text(text)
        except OSError:
            pass


def report_failure(run_dir: str | Path | None, rank: int, exc: BaseException) -> int:
    """Write ``rank<R>.error.txt`` into ``run_dir`` (if given), print the traceback, return exit code 1."""
    write_error_file(run_dir, rank, exc)
    traceback.print_exception(type(exc), exc, exc.__traceback__)
    sys.stderr.flush()
    return 1


def describe_failure(run_dir: Path, exc: BaseException) -> tuple[int | None, str]:
    """``(rank, one line)`` of a failed launch: the earliest error file, else the elastic agent's report."""
    written = sorted((p.stat().st_mtime_ns, int(m.group(1)), p) for p in run_dir.glob("rank*.error.txt")
                     if (m := _ERROR_FILE.fullmatch(p.name)))
    if written:
        _, rank, path = written[0]
        return rank, last_line(path.read_text(errors="replace"))
    failures = getattr(exc, "failures", {}) or {}
    if failures:
        rank, failure = min(failures.items(), key=lambda kv: getattr(kv[1], "timestamp", 0))
        msg = getattr(failure, "message", "") or ""
        if isinstance(msg, dict):
            msg = msg.get("message", "") or str(msg)
        return rank, last_line(str(msg)) or f"exit code {getattr(failure, 'exitcode', '?')}"
    return None, f"{type(exc).__name__}: {last_line(str(exc))}"
