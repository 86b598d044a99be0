"""``tracekit profile``: run a model on N ranks under DDP/FSDP, optionally compiled, and profile it.

Importing this package does not import torch; the heavy modules load on use.

* :class:`tracekit.profile.config.ProfileConfig` -- validated options.
* :func:`tracekit.profile.launcher.run_profile` -- launch ranks (or run as one), return the manifest.
* :func:`tracekit.traces.manifest.read_manifest` -- read ``run.json`` (no torch needed; the run.json
  format lives on the trace side, :mod:`tracekit.traces.manifest`, and is re-exported here).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tracekit.profile.config import ProfileConfig

if TYPE_CHECKING:
    from tracekit.traces.manifest import Manifest

__all__ = ["ProfileConfig", "read_manifest", "run_profile"]


def run_profile(config: ProfileConfig, **kwargs: Any) -> dict[str, Any] | None:
    """See :func:`tracekit.profile.launcher.run_profile`."""
    from tracekit.profile.launcher import run_profile as _run

    return _run(config, **kwargs)


def read_manifest(run_dir: str | os.PathLike[str]) -> Manifest | None:
    """See :func:`tracekit.traces.manifest.read_manifest` (imported on use: ``tracekit profile`` starts
    without the trace side)."""
    from tracekit.traces.manifest import read_manifest as _read

    return _read(run_dir)
