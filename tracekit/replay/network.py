"""Network scenarios on the replay graph: a faster network, more or fewer ranks, a compressing comm hook.

**Model.** A collective's transfer time (:func:`tracekit.replay.simulate.matched_collectives`: its
end minus the latest start across ranks, waiting excluded) is ``t = alpha + bytes * ns_per_byte``,
with ``alpha`` and ``ns_per_byte`` fitted (least squares, :func:`fit`) to the run's own matched
collectives: bytes from the trace (NCCL records them) or, for DDP's bucket allreduces of a CPU/gloo
run, from run.json's bucket layout. A scenario multiplies the bandwidth term of every collective,
measured time kept: ``t' = a + (t - a) * f`` with ``a = min(alpha, t)``, where ``f`` is

- ``1 / K`` for ``bandwidth_x = K`` (K times the bandwidth, same latency);
- ``B / X`` for ``busbw_gbps = X``: the network's allreduce bus bandwidth (nccl-tests' busbw, GB/s), with
  ``B = ring(n0) / ns_per_byte`` the run's own, fitted;
- ``ring(n) / ring(n0)`` for ``world_size = n`` (recorded ``n0`` ranks), ``ring(n) = 2(n-1)/n``:
  a ring allreduce moves ``2(n-1)/n`` times the message per rank (reduce-scatter and all-gather
  move half of that: the ratio is the same). Assumed: each rank keeps its per-rank compute and
  batch; the new ranks are as fast and as well connected as the recorded ones (same bus
  bandwidth, same latency, no stragglers added); ``n = 1`` removes the collectives (no peer);
- ``1/2`` for ``comm_hook = bf16|fp16`` on fp32 allreduces (DDP's compress hooks halve the
  bytes); the hook's compress/decompress kernels are not modelled (elementwise casts of the
  bucket: small next to the transfer on NCCL, not measured here).

The factors of several options multiply.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tracekit.errors import ScenarioError
from tracekit.replay import ddp
from tracekit.replay.graph import Graph

FP32 = ("float", "float32", "torch.float32")


def ring(n: int) -> float:
    """Bytes a ring allreduce moves per rank, as a multiple of the message (0 for one rank)."""
    return 2.0 * (n - 1) / n


@dataclass(frozen=True)
class AlphaBeta:
    """``t = alpha_ns + bytes * ns_per_byte`` fitted to ``points`` collectives (module doc)."""

    alpha_ns: float
    ns_per_byte: float
    points: int
    note: str | None = None

    def transfer_ns(self, nbytes: float) -> float:
        return self.alpha_ns + nbytes * self.ns_per_byte


def fit(nbytes: np.ndarray, transfer_ns: np.ndarray) -> AlphaBeta:
    """Least-squares alpha-beta over collectives with known bytes; with one message size the latency
    cannot be separated: alpha 0, the whole transfer counts as bandwidth (said in ``note``)."""
    ok = np.isfinite(nbytes) & (nbytes > 0) & np.isfinite(transfer_ns)
    x, y = nbytes[ok].astype(float), transfer_ns[ok].astype(float)
    if not x.size:
        return AlphaBeta(0.0, float("nan"), 0, "no collective with a known size")
    if x.max() > 1.2 * x.min() and x.size >= 2:
        slope, alpha = np.polyfit(x, y, 1)
        if slope > 0:
            return AlphaBeta(float(np.clip(alpha, 0.0, y.min())), float(slope), int(x.size))
    return AlphaBeta(0.0, float(np.median(y / x)), int(x.size),
                     "one message size: the latency term cannot be separated, all of the transfer is scaled")


def hook_factor(comm_hook: str | None, backend: str | None, applied_hook: str | None) -> float:
    """The bytes factor of ``comm_hook`` on fp32 allreduces; :class:`ScenarioError` where it cannot apply."""
    if comm_hook is None:
        return 1.0
    if (backend or "").lower() == "gloo":
        raise ScenarioError(f"--comm-hook {comm_hook}: the run uses gloo, which has no bf16/fp16 allreduce to "
                            "compress into (DDP's compress hooks are for NCCL)")
    if applied_hook not in (None, "none"):
        raise ScenarioError(f"--comm-hook {comm_hook}: the run already uses the {applied_hook} hook")
    return 0.5


def world_factor(world_size: int | None, recorded: int) -> float:
    if world_size is None:
        return 1.0
    if recorded < 2:
        raise ScenarioError(f"--world-size {world_size}: the run has {recorded} rank, no collective to scale "
                            "from (profile at least 2 ranks)")
    return ring(world_size) / ring(recorded)


def scale(g: Graph, nodes: np.ndarray, factors: np.ndarray, alpha_ns: float, *, drop: bool = False) -> None:
    """Scale the bandwidth term of each collective node's transfer by its factor (module doc), in place
    (``g`` is a scenario's copy). ``drop``: the collectives vanish (one rank: no peer)."""
    for node, f in zip(nodes.tolist(), factors.tolist()):
        if drop:
            g.clear_transfer(node)
            continue
        t = g.dur[node]
        a = min(alpha_ns, t)
        g.set_transfer(node, int(round(a + (t - a) * f)))


def collective_bytes(colls: pd.DataFrame, layout: ddp.Layout | None) -> np.ndarray:
    """Bytes per row of ``colls`` (matched collectives): the trace's, else (gloo) the DDP bucket's size from
    run.json's ``layout``."""
    if not len(colls):
        return np.zeros(0)
    b = colls["bytes"].to_numpy(dtype=float).copy()
    if layout is not None and not np.isfinite(b).all():
        rows = ddp.bucket_rows(colls, len(layout.sizes))
        sizes = np.asarray(layout.sizes, dtype=float)[rows["bucket"].to_numpy(dtype=int)]
        idx = rows.index.to_numpy()
        b[idx] = np.where(np.isfinite(b[idx]), b[idx], sizes)
    return b
