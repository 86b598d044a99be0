"""The documentation site builds with ``mkdocs build --strict``: a broken link, a missing anchor or a page
missing from the nav's targets fails the suite. Skipped, saying why, when MkDocs is not installed
(``pip install -e '.[test]'`` installs it)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
missing = [m for m in NEEDED if importlib.util.find_spec(m.split(".")[0]) is None
           or (m == "mkdocstrings_handlers.python" and importlib.util.find_spec("mkdocstrings_handlers") is None)]
pytestmark = pytest.mark.skipif(bool(missing), reason=f"docs build needs {', '.join(missing)} "
                                                      "(pip install -e '.[test]')")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(site)], capture_output=True, text=True, timeout=120, cwd=config.parent, env=env)


def test_site_builds_strict(tmp_path: Path) -> None:
    r = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert r.returncode == 0, r.stdout + r.stderr
    site = tmp_path / "site"
    assert (site / "reference" / "tables" / "index.html").is_file()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="tracekit.analyze"' in api and "Every table" in api  # mkdocstrings rendered the docstring
    assert (site / "img" / "step_timeline.svg").is_file() and (site / "report_inductor_graph_break.png").is_file()
    assert (site / "gpu_results" / "diff.txt").is_file()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    idx = tmp_path / "docs" / "index.md"
    idx.write_text(idx.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8")
    r = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert r.returncode != 0 and "no-such-page.md" in r.stdout + r.stderr


def test_readme_links_point_at_existing_files() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert targets, "the README links into the docs"
    for t in targets:
        assert (ROOT / t).exists(), f"README.md links to {t}, which does not exist"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert len(blocks) >= 2 and "pytest" in blocks[1], "README's second command runs the tests"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert blocks[1].strip() in [line.strip() for line in ci]
