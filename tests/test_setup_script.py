"""scripts/setup.sh changes nothing outside the project unless asked: system packages (the browser
for one test) only with ``--with-browser``.

The script runs against stubs: a fake ``.venv/bin/python`` (so nothing is installed), a fake
``apt-get`` that records its calls, ``id`` answering root, and a PATH without chromium.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the [test] extra installs tomli
    import tomli as tomllib

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"


def _stub(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(SETUP, tmp_path / "scripts" / "setup.sh")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    _stub(tmp_path / ".venv" / "bin" / "python", f'echo "python $*" >> "{tmp_path}/calls"')
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("dirname", "sed"):
        os.symlink(shutil.which(tool), bin_ / tool)
    _stub(bin_ / "apt-get", f'echo "apt-get $*" >> "{tmp_path}/calls"')
    _stub(bin_ / "id", "echo 0")
    return tmp_path


def _run(sandbox: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([shutil.which("bash"), str(sandbox / "scripts" / "setup.sh"), *args],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": str(sandbox / "bin"), "HOME": str(sandbox)})


def test_plain_setup_touches_no_system_package(sandbox: Path) -> None:
    r = _run(sandbox)
    assert r.returncode == 0, r.stderr
    calls = (sandbox / "calls").read_text()
    assert "apt-get" not in calls
    assert "-e .[test]" in calls                      # the project itself is installed into .venv
    assert "browser test will be skipped" in r.stderr and "--with-browser" in r.stderr


def test_with_browser_installs_chromium_as_asked(sandbox: Path) -> None:
    r = _run(sandbox, "--with-browser")
    assert r.returncode == 0, r.stderr
    calls = (sandbox / "calls").read_text()
    assert "apt-get update" in calls and "install -y -qq chromium chromium-driver" in calls


def test_unknown_option_is_refused(sandbox: Path) -> None:
    r = _run(sandbox, "--browser")
    assert r.returncode == 2 and "unknown option --browser" in r.stderr
    assert not (sandbox / "calls").exists()


def test_torch_comes_from_the_index_the_user_names(sandbox: Path) -> None:
    # a .venv without torch: the stub python fails `-c "import torch"` (and only that)
    _stub(sandbox / ".venv" / "bin" / "python",
          f'echo "python $*" >> "{sandbox}/calls"; [ "$*" = "-c import torch" ] && exit 1; exit 0')
    r = subprocess.run([shutil.which("bash"), str(sandbox / "scripts" / "setup.sh")], capture_output=True, text=True,
                       timeout=60, env={"PATH": str(sandbox / "bin"), "HOME": str(sandbox),
                                        "TRACEKIT_TORCH_INDEX": "https://download.pytorch.org/whl/cpu"})
    assert r.returncode == 0, r.stderr
    calls = (sandbox / "calls").read_text()
    assert "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in calls
    (sandbox / "calls").unlink()
    r = _run(sandbox)  # no index named: the configured one, and the message says what that can mean
    assert "CUDA build" in r.stderr and "TRACEKIT_TORCH_INDEX=https://download.pytorch.org/whl/cpu" in r.stderr
    assert "--index-url" not in (sandbox / "calls").read_text()


def test_the_configured_timeout_is_enforced(request: pytest.FixtureRequest) -> None:
    """pyproject's per-test ``timeout`` needs pytest-timeout: the ``[test]`` extra, which the script installs."""
    pyproject = tomllib.loads((SETUP.parents[1] / "pyproject.toml").read_text())
    assert any(r.startswith("pytest-timeout") for r in pyproject["project"]["optional-dependencies"]["test"])
    assert '-e ".[test]"' in SETUP.read_text()
    assert request.config.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed: bash scripts/setup.sh"
    assert float(request.config.getini("timeout")) == pyproject["tool"]["pytest"]["ini_options"]["timeout"] > 0
