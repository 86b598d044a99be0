"""A tiny builder of torch.profiler-style Chrome traces for hand-made test inputs.

Times are given in µs relative to ``t0_us`` and written with three decimals,
as kineto writes them. Events mirror the real traces in ``tests/data/reference``:

- CPU: ``user_annotation`` (``ProfilerStep#N``, ``DistributedDataParallel.forward``...),
  ``cpu_op`` (incl. ``record_param_comms`` with the collective args);
- launches: ``cudaLaunchKernel`` (``cuda_runtime``) and ``cuLaunchKernelEx``
  (``cuda_driver``, used by NCCL), linked to the GPU activity by ``correlation``;
- GPU: ``kernel``, ``gpu_memcpy``, ``gpu_memset`` on ``pid`` = device, ``tid`` = stream;
- noise the loader must drop: ``ph == "M"`` metadata, ``ac2g`` flow events and the
  profiler's ``Trace`` span (string pid).

Example::

    tb = TraceBuilder(rank=0, world_size=2)
    tb.step(1, 0, 100)
    tb.kernel("gemm", 10, 20, launch_at_us=5)
    tb.nccl_allreduce(20, 30, launch_at_us=8, nelems=1000)
    path = tb.write(tmp_path / "rank0.trace.json.gz")
"""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

#: NCCL kernel name per collective (fp32 sum, ring, LL protocol, as in the reference traces)
NCCL_KERNELS = {
    "allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    "allgather": "ncclDevKernel_AllGather_RING_LL",
    "reduce_scatter": "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL",
    "broadcast": "ncclDevKernel_Broadcast_RING_LL",
}
NCCL_KERNEL_SUFFIX = "(ncclDevKernelArgsStorage<4096ul>)"


def us(x: float) -> float:
    """A µs timestamp with kineto's three decimals."""
    return round(float(x), 3)


class TraceBuilder:
    """Accumulates the events of one rank's trace; see the module docstring."""

    def __init__(
        self,
        rank: int = 0,
        world_size: int = 2,
        *,
        backend: str = "nccl",
        t0_us: float = 0.0,
        pid: int = 1000,
        tid: int = 1000,
        device: int | None = None,
        distributed: bool = True,
        gpu: bool | None = None,
        pg_config: list[dict[str, Any]] | None = None,
        nccl_version: str = "2.28.9",
    ) -> None:
        self.rank, self.world_size, self.backend = rank, world_size, backend
        self.t0_us = t0_us
        self.pid, self.tid = pid, tid
        self.device = rank if device is None else device
        self.distributed = distributed
        self.gpu = (backend != "gloo") if gpu is None else gpu
        self.pg_config = pg_config if pg_config is not None else [{
            "pg_name": "0", "pg_desc": "default_pg",
            "backend_config": "cuda:nccl" if self.gpu else "cpu:gloo",
            "pg_size": world_size, "ranks": list(range(world_size)),
        }]
        self.nccl_version = nccl_version
        self.events: list[dict[str, Any]] = []
        self.extra_meta: dict[str, Any] = {}
        self._corr = itertools.count(1)
        self._ext = itertools.count(1)

    # -- low level ----------------------------------------------------------
    def _t(self, rel_us: float) -> float:
        return us(self.t0_us + rel_us)

    def raw(self, event: dict[str, Any]) -> dict[str, Any]:
        """Append an event verbatim (for malformed or unusual events)."""
        self.events.append(event)
        return event

    def _x(self, cat: str, name: str, start_us: float, dur_us: float, *, pid: Any, tid: Any,
           args: dict[str, Any] | None = None) -> dict[str, Any]:
        ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": self._t(start_us),
              "dur": us(dur_us) if dur_us == dur_us else dur_us}  # keep NaN as NaN
        if args:
            ev["args"] = args
        return self.raw(ev)

    def next_external_id(self) -> int:
        return next(self._ext)

    # -- CPU side -----------------------------------------------------------
    def annotation(self, name: str, start_us: float, dur_us: float, *, tid: int | None = None,
                   external_id: int | None = None) -> dict[str, Any]:
        """A ``user_annotation`` (``record_function``) range."""
        ext = self.next_external_id() if external_id is None else external_id
        return self._x("user_annotation", name, start_us, dur_us, pid=self.pid,
                       tid=self.tid if tid is None else tid, args={"External id": ext, "Record function id": 0})

    def step(self, n: int, start_us: float, end_us: float, *, tid: int | None = None) -> dict[str, Any]:
        """The CPU ``ProfilerStep#n`` annotation covering ``[start_us, end_us)``."""
        return self.annotation(f"ProfilerStep#{n}", start_us, end_us - start_us, tid=tid)

    def cpu_op(self, name: str, start_us: float, dur_us: float, *, tid: int | None = None,
               external_id: int | None = None, **args: Any) -> dict[str, Any]:
        """A ``cpu_op`` event; extra keyword args go into ``args`` verbatim."""
        ext = self.next_external_id() if external_id is None else external_id
        return self._x("cpu_op", name, start_us, dur_us, pid=self.pid, tid=self.tid if tid is None else tid,
                       args={"External id": ext, "Record function id": 0, **args})

    def shaped_op(self, name: str, start_us: float, dur_us: float, dims: list[Any], types: list[str],
                  concrete: list[str] | None = None, *, seq: int | None = None, fwd_tid: int | None = None,
                  tid: int | None = None, external_id: int | None = None) -> dict[str, Any]:
        """A ``cpu_op`` recorded with ``record_shapes``: ``Input Dims``, ``Input type``, ``Concrete Inputs``
        (default: "" per input), and the autograd ``Sequence number`` / ``Fwd thread id`` when given."""
        args: dict[str, Any] = {"Input Dims": dims, "Input type": types,
                                "Concrete Inputs": concrete if concrete is not None else [""] * len(dims),
                                "Input Strides": [[] for _ in dims]}
        if seq is not None:
            args["Sequence number"] = seq
            args["Fwd thread id"] = 0 if fwd_tid is None else fwd_tid
        return self.cpu_op(name, start_us, dur_us, tid=tid, external_id=external_id, **args)

    def launch(self, at_us: float, correlation: int, *, external_id: int | None = None,
               name: str = "cudaLaunchKernel", dur_us: float = 2.0, tid: int | None = None) -> dict[str, Any]:
        """A CUDA launch call (runtime, or driver for ``cu*`` names)."""
        cat = "cuda_driver" if name.startswith("cu") and not name.startswith("cuda") else "cuda_runtime"
        args = {"cbid": 211, "correlation": correlation}
        if external_id is not None:
            args["External id"] = external_id
        return self._x(cat, name, at_us, dur_us, pid=self.pid, tid=self.tid if tid is None else tid, args=args)

    # -- GPU side -----------------------------------------------------------
    def _gpu(self, cat: str, name: str, start_us: float, dur_us: float, *, stream: int,
             launch_at_us: float | None, correlation: int | None, external_id: int | None,
             pre_window: bool, launch_name: str, launch_tid: int | None, args: dict[str, Any]) -> dict[str, Any]:
        corr = next(self._corr) if correlation is None else correlation
        if not pre_window:
            at = start_us - 1.0 if launch_at_us is None else launch_at_us
            self.launch(at, corr, external_id=external_id, name=launch_name, tid=launch_tid)
            self.raw({"ph": "s", "id": corr, "pid": self.pid, "tid": self.tid, "ts": self._t(at),
                      "cat": "ac2g", "name": "ac2g"})
            self.raw({"ph": "f", "id": corr, "pid": self.device, "tid": stream, "ts": self._t(start_us),
                      "cat": "ac2g", "name": "ac2g", "bp": "e"})
        a: dict[str, Any] = {"device": self.device, "context": 1, "stream": stream, "correlation": corr}
        if external_id is not None:
            a["External id"] = external_id
        a.update(args)
        return self._x(cat, name, start_us, dur_us, pid=self.device, tid=stream, args=a)

    def kernel(self, name: str, start_us: float, dur_us: float, stream: int = 7, *,
               launch_at_us: float | None = None, correlation: int | None = None,
               external_id: int | None = None, pre_window: bool = False,
               launch_name: str = "cudaLaunchKernel", launch_tid: int | None = None, **args: Any) -> dict[str, Any]:
        """A GPU kernel plus its launch call at ``launch_at_us`` (default: 1 µs before it starts).

        ``pre_window=True`` omits the launch, as for kernels launched before the
        profiler window opened.
        """
        return self._gpu("kernel", name, start_us, dur_us, stream=stream, launch_at_us=launch_at_us,
                         correlation=correlation, external_id=external_id, pre_window=pre_window,
                         launch_name=launch_name, launch_tid=launch_tid, args=args)

    def memcpy(self, start_us: float, dur_us: float, stream: int = 7, *,
               name: str = "Memcpy HtoD (Pinned -> Device)", launch_at_us: float | None = None,
               pre_window: bool = False, nbytes: int = 4096) -> dict[str, Any]:
        return self._gpu("gpu_memcpy", name, start_us, dur_us, stream=stream, launch_at_us=launch_at_us,
                         correlation=None, external_id=None, pre_window=pre_window,
                         launch_name="cudaMemcpyAsync", launch_tid=None, args={"bytes": nbytes})

    def memset(self, start_us: float, dur_us: float, stream: int = 7, *, launch_at_us: float | None = None,
               pre_window: bool = False, nbytes: int = 128) -> dict[str, Any]:
        return self._gpu("gpu_memset", "Memset (Device)", start_us, dur_us, stream=stream,
                         launch_at_us=launch_at_us, correlation=None, external_id=None, pre_window=pre_window,
                         launch_name="cudaMemsetAsync", launch_tid=None, args={"bytes": nbytes})

    # -- collectives --------------------------------------------------------
    def collective(self, coll: str, start_us: float, dur_us: float, launch_at_us: float, nelems: int, *,
                   in_nelems: int | None = None, out_nelems: int | None = None, dtype: str = "Float",
                   pg: str = "0", pg_desc: str = "default_pg", group_size: int | None = None,
                   pg_ranks: list[int] | None = None, external_id: int | None = None, stream: int = 17,
                   kernel_args: bool = True, kernel_name: str | None = None, op_dur_us: float = 20.0,
                   pre_window: bool = False, with_kernel: bool | None = None, tid: int | None = None) -> int:
        """One collective: the ``record_param_comms`` op at ``launch_at_us``, a
        ``cuLaunchKernelEx`` 1 µs later and the NCCL kernel, all sharing one External id.

        - ``kernel_args=False``: the kernel carries no collective args (compiled runs).
        - ``pre_window=True``: only the kernel (with its args), no CPU op nor launch.
        - ``with_kernel=False`` (default on CPU-only builders): only the CPU op (gloo).

        Returns the External id.
        """
        ext = self.next_external_id() if external_id is None else external_id
        n = self.world_size if group_size is None else group_size
        ranks = list(range(n)) if pg_ranks is None else pg_ranks
        cargs = {
            "Collective name": coll, "In msg nelems": nelems if in_nelems is None else in_nelems,
            "Out msg nelems": nelems if out_nelems is None else out_nelems, "Group size": n, "dtype": dtype,
            "In split size": "[]", "Out split size": "[]", "Process Group Name": pg,
            "Process Group Description": pg_desc, "Process Group Ranks": str(ranks),
        }
        if not pre_window:
            self.cpu_op("record_param_comms", launch_at_us, op_dur_us, tid=tid, external_id=ext, Rank=self.rank,
                        **cargs)
        if with_kernel is False or (with_kernel is None and not self.gpu):
            return ext
        name = (kernel_name or NCCL_KERNELS.get(coll, "ncclDevKernel_Generic")) + (
            "" if kernel_name else NCCL_KERNEL_SUFFIX)
        self.kernel(name, start_us, dur_us, stream, launch_at_us=launch_at_us + 1.0, external_id=ext,
                    pre_window=pre_window, launch_name="cuLaunchKernelEx", launch_tid=tid,
                    **(cargs if kernel_args or pre_window else {}))
        return ext

    def nccl_allreduce(self, start_us: float, dur_us: float, launch_at_us: float, nelems: int,
                       dtype: str = "Float", pg: str = "0", **kw: Any) -> int:
        return self.collective("allreduce", start_us, dur_us, launch_at_us, nelems, dtype=dtype, pg=pg, **kw)

    # -- output -------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"schemaVersion": 1}
        if self.gpu:
            doc["deviceProperties"] = [{
                "id": self.device, "name": "NVIDIA H200", "totalGlobalMem": 150109880320,
                "computeMajor": 9, "computeMinor": 0, "numSms": 132,
            }]
        doc["trace_id"] = f"TRACEBUILDER{self.rank:04d}"
        if self.distributed:
            doc["distributedInfo"] = {
                "backend": self.backend, "rank": self.rank, "world_size": self.world_size,
                "pg_count": len(self.pg_config), "pg_config": self.pg_config, "nccl_version": self.nccl_version,
            }
        doc["displayTimeUnit"] = "ms"
        doc["baseTimeNanoseconds"] = 1790857026000000000
        doc.update(self.extra_meta)
        return doc

    def to_dict(self) -> dict[str, Any]:
        noise = [
            {"name": "process_name", "ph": "M", "ts": self._t(0), "pid": self.pid, "tid": 0,
             "args": {"name": "python3"}},
            {"ph": "X", "cat": "Trace", "ts": self._t(0), "dur": 1.0, "pid": "Spans", "tid": "PyTorch Profiler",
             "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
        ]
        return {**self.header(), "traceEvents": [*self.events, *noise]}

    def dumps(self, compact: bool = False) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":") if compact else None)

    def write(self, path: str | Path, gz: bool | None = None, compact: bool = False) -> Path:
        """Write the trace; gzip when ``gz`` (default: when the name ends with ``.gz``)."""
        path = Path(path)
        data = self.dumps(compact).encode()
        if gz is None:
            gz = path.name.endswith(".gz")
        path.write_bytes(gzip.compress(data) if gz else data)
        return path


def write_skewed_ranks(folder: Path, n: int) -> Path:
    """``n`` rank files in ``folder``, one step [0, 100] µs each: a gemm, then an allreduce whose kernel
    starts on rank r r µs after rank 0's (and lasts 0.5 µs less per rank), so rank 0 waits longest."""
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(n):
        tb = TraceBuilder(rank=r, world_size=n)
        tb.step(1, 0, 100)
        tb.kernel("gemm", 10, 20, launch_at_us=5)
        tb.nccl_allreduce(40 + r, 20 - r * 0.5, launch_at_us=30, nelems=1000)
        tb.write(folder / f"rank{r}.trace.json")
    return folder
