"""A package tracekit needs that the environment lacks (a partial install, ``python -m tracekit`` from a
checkout) is a one-line error naming it, exit 2, not a traceback; ``--debug`` shows the traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REF = Path(__file__).parents[1] / "data" / "reference" / "eager"
ROOT = Path(__file__).resolve().parents[2]


def _report_without_plotly(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    code = ("import sys; sys.modules['plotly'] = None; sys.modules['plotly.graph_objects'] = None; "
            "from tracekit.cli import entry; sys.argv = ['tracekit', *sys.argv[1:]]; entry()")
    return subprocess.run([sys.executable, "-c", code, "report", str(REF), "-o", str(tmp_path / "r.html"), *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_a_missing_package_is_one_line_exit_2(tmp_path: Path) -> None:
    p = _report_without_plotly(tmp_path)
    assert p.returncode == 2, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in p.stderr
    assert errors[0].startswith("error: tracekit report needs the Python package 'plotly'")
    assert not (tmp_path / "r.html").exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    p = _report_without_plotly(tmp_path, "--debug")
    assert p.returncode == 1 and "Traceback" in p.stderr and "ModuleNotFoundError" in p.stderr
