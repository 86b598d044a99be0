"""Shared test fixtures (keep small)."""

from __future__ import annotations

import os
import socket

import pytest

# The test suite never reads or writes the user's cache (tracekit.traces.cache): off for every test and every
# command it runs in a subprocess, unless TRACEKIT_TEST_CACHE names a folder to run the suite through (to check
# that a cached run gives the same results). Tests of the cache itself use the ``cache_dir`` fixture.
os.environ["TRACEKIT_CACHE"] = os.environ.get("TRACEKIT_TEST_CACHE") or "off"
os.environ.pop("TRACEKIT_CACHE_MAX_BYTES", None)


@pytest.fixture
def free_port() -> int:
    """A TCP port that was free a moment ago (never a fixed port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):  # noqa: ANN001, ANN201
    """A fresh, empty cache for this test (``tmp_path/cache``), on for it and the commands it runs."""
    from tracekit.traces import cache

    d = tmp_path / "cache"
    monkeypatch.setenv("TRACEKIT_CACHE", str(d))
    monkeypatch.delenv("TRACEKIT_CACHE_MAX_BYTES", raising=False)
    monkeypatch.setattr(cache, "COLUMNS_MIN_BYTES", 0)  # the tests' small traces get columns entries too
    cache.configure()  # forget what an earlier test turned off
    yield d
    cache.configure()
