"""``tracekit bench``: PyTorch's distributed benchmarks rebuilt on tracekit's profiling core.

* :mod:`tracekit.bench.ddp` -- the DDP scaling sweep (``benchmarks/distributed/ddp/benchmark.py``).
* :mod:`tracekit.bench.schema` -- its JSON (a superset of the original format; reads both).
* ``tracekit bench diff`` (two sweep JSON files, ``diff.py``) lives with the other comparisons: :mod:`tracekit.compare.bench`.
* :mod:`tracekit.bench.rpc` -- the hybrid parameter-server benchmark (``benchmark_ddp_rpc.py``).

Importing this package does not import torch.
"""
