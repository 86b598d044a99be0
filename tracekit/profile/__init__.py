"""``tracekit profile``: run a model on N ranks under DDP/FSDP, optionally compiled, and profile it.

Importing this package does not import torch; the heavy modules load on use.

* :class:`tracekit.profile.config.ProfileConfig` -- validated options.
* :func:`tracekit.profile.launcher.run_profile` -- launch ranks (or run as one), return the manifest.
* :func:`tracekit.profile.manifest.read_manifest` -- read ``run.json`` (no torch needed).
"""

from __future__ import annotations

from typing import Any

from tracekit.profile.config import ProfileConfig
from tracekit.profile.manifest import read_manifest

__all__ = ["ProfileConfig", "read_manifest", "run_profile"]


def run_profile(config: ProfileConfig, **kwargs: Any) -> dict[str, Any] | None:
    """See :func:`tracekit.profile.launcher.run_profile`."""
    from tracekit.profile.launcher import run_profile as _run

    return _run(config, **kwargs)
