"""``tracekit bench``: PyTorch's distributed benchmarks rebuilt on tracekit's profiling core.

* :mod:`tracekit.bench.ddp` -- the DDP scaling sweep (``benchmarks/distributed/ddp/benchmark.py``).
* :mod:`tracekit.bench.schema` -- its JSON (a superset of the original format; reads both).
* :mod:`tracekit.bench.diffing` -- compare two sweep JSON files (``diff.py``).
* :mod:`tracekit.bench.rpc` -- the hybrid parameter-server benchmark (``benchmark_ddp_rpc.py``).

Importing this package does not import torch.
"""
