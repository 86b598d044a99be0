"""Column definitions of the per-rank event table: the one place they are defined.

Every loaded rank has one event table with exactly :data:`EVENT_COLUMNS`: its columns as numpy
arrays (``RankTrace.column``, what ``tracekit analyze`` reads), or as the ``events`` DataFrame.
Times are integer nanoseconds on the trace's own clock (``ts`` in the Chrome
trace is microseconds with three decimals, i.e. exact nanoseconds; tracekit never
rounds them to microseconds). Missing integer ids are ``-1``.

Event kinds (column ``kind``, small ints so filters are vectorised), from the
trace's ``cat`` in every spelling torch.profiler/kineto has written since torch 1.8
(2021 TensorBoard-plugin traces: ``Kernel``, ``Memcpy``, ``Memset``, ``Runtime``,
``Operator``; ROCm traces use the CUDA spellings with HIP call names):

==================  =====================================================================
``KERNEL``          GPU kernel (``kernel``, ``Kernel``)
``MEMCPY``          GPU memcpy (``gpu_memcpy``, ``Memcpy``)
``MEMSET``          GPU memset (``gpu_memset``, ``Memset``)
``CPU_OP``          CPU operator (``cpu_op``, ``Operator``), incl. ``record_param_comms``
``LAUNCH``          runtime/driver call (``cuda_runtime``, ``cuda_driver``, ``Runtime``,
                    ``xpu_runtime``/``xpu_driver``, ``privateuse1_runtime``/``_driver``):
                    ``cudaLaunchKernel``, ``cuLaunchKernel(Ex)``, ``hipLaunchKernel``,
                    ``hipExtModuleLaunchKernel``, ``hipModuleLaunchKernel``, ``hipMemcpyAsync``...
``ANNOTATION``      CPU ``record_function`` range (``user_annotation``); a ``ProfilerStep#N``
                    written as an ``Operator``/``cpu_op`` (torch 1.8-1.9) is one too
``GPU_ANNOTATION``  GPU-side projection of an annotation (``gpu_user_annotation``,
                    ``gpu_user_Annotation``, ``User`` on a GPU stream in 2021 kineto)
==================  =====================================================================

The link from a launch to its CPU op is ``args["External id"]`` (``"external id"`` in
2021 traces: both are read).

Dropped at load time because no analysis needs them: ``python_function``,
flow events (``ph`` s/f), metadata (``ph == "M"``), instant events and
profiler-overhead ranges.
"""

from __future__ import annotations

KERNEL, MEMCPY, MEMSET, CPU_OP, LAUNCH, ANNOTATION, GPU_ANNOTATION = range(7)

#: trace ``cat`` -> kind code; categories not listed are dropped.
CATEGORY_KIND: dict[str, int] = {
    "kernel": KERNEL, "Kernel": KERNEL,
    "gpu_memcpy": MEMCPY, "Memcpy": MEMCPY,
    "gpu_memset": MEMSET, "Memset": MEMSET,
    "cpu_op": CPU_OP, "Operator": CPU_OP,
    "cuda_runtime": LAUNCH, "cuda_driver": LAUNCH, "Runtime": LAUNCH,
    "xpu_runtime": LAUNCH, "xpu_driver": LAUNCH, "privateuse1_runtime": LAUNCH, "privateuse1_driver": LAUNCH,
    "user_annotation": ANNOTATION,
    "gpu_user_annotation": GPU_ANNOTATION, "gpu_user_Annotation": GPU_ANNOTATION, "User": GPU_ANNOTATION,
}
#: the 2021 (torch 1.8-1.9) spellings, whose traces also spell the link ``"external id"``
LEGACY_CATEGORIES = frozenset({"Kernel", "Memcpy", "Memset", "Runtime", "Operator", "User"})
#: CPU ops with this name prefix are step annotations (torch 1.8-1.9 wrote ``ProfilerStep#N`` as an operator)
STEP_PREFIX = "ProfilerStep#"
KIND_NAMES = {v: k for k, v in {
    "kernel": KERNEL, "memcpy": MEMCPY, "memset": MEMSET, "cpu_op": CPU_OP,
    "launch": LAUNCH, "annotation": ANNOTATION, "gpu_annotation": GPU_ANNOTATION,
}.items()}
GPU_KINDS = (KERNEL, MEMCPY, MEMSET)

#: int64 columns (``-1`` = absent)
INT_COLUMNS = (
    "ts_ns",        # start, ns on the trace clock
    "dur_ns",       # duration, ns
    "end_ns",       # ts_ns + dur_ns
    "pid",          # process id (CPU) or device index (GPU); -1 when not an int
    "tid",          # thread id (CPU) or stream (GPU); -1 when not an int
    "stream",       # CUDA stream from args (GPU events)
    "correlation",  # CUPTI correlation id linking a launch to its GPU activity
    "external_id",  # profiler "External id" linking launches/kernels to CPU ops
    "in_nelems",    # collective input element count ("In msg nelems")
    "out_nelems",   # collective output element count ("Out msg nelems")
    "group_size",   # collective group size
    "seq",          # collective sequence number when the trace records one ("Seq")
    "peer",         # point-to-point peer, a global rank: "Dst Rank" of a send, "Src Rank" of a recv
)
#: pandas Categorical columns
CATEGORY_COLUMNS = (
    "name",
    "coll_name",    # "Collective name" (allreduce, allgather, ...)
    "pg_name",      # "Process Group Name"
    "pg_desc",      # "Process Group Description"
    "pg_ranks",     # "Process Group Ranks", as written ("[0, 1]")
    "dtype",        # collective dtype ("Float", "BFloat16", ...)
)
EVENT_COLUMNS = ("kind", *INT_COLUMNS, *CATEGORY_COLUMNS)

#: every tensor dtype a trace names, once: ``(torch name, bytes per element, kineto's spelling in collective args
#: (``dtype``), record_shapes' ``Input type`` spellings (C++ type names))``; the tables below derive from it
DTYPES: tuple[tuple[str, int, str, tuple[str, ...]], ...] = (
    ("float32", 4, "Float", ("float",)),
    ("float64", 8, "Double", ("double",)),
    ("float16", 2, "Half", ("c10::Half",)),
    ("bfloat16", 2, "BFloat16", ("c10::BFloat16",)),
    ("int32", 4, "Int", ("int",)),
    ("int64", 8, "Long", ("long int", "long")),
    ("int16", 2, "Short", ("short int", "short")),
    ("int8", 1, "Char", ("signed char",)),
    ("uint8", 1, "Byte", ("unsigned char",)),
    ("bool", 1, "Bool", ("bool",)),
    ("float8_e4m3fn", 1, "Float8_e4m3fn", ("c10::Float8_e4m3fn",)),
    ("float8_e5m2", 1, "Float8_e5m2", ("c10::Float8_e5m2",)),
    ("float8_e4m3fnuz", 1, "Float8_e4m3fnuz", ("c10::Float8_e4m3fnuz",)),
    ("float8_e5m2fnuz", 1, "Float8_e5m2fnuz", ("c10::Float8_e5m2fnuz",)),
    ("complex64", 8, "ComplexFloat", ("c10::complex<float>",)),
    ("complex128", 16, "ComplexDouble", ("c10::complex<double>",)),
)
#: bytes per element by the names collective args give a dtype: kineto's spelling, its lower case, torch's name
DTYPE_BYTES: dict[str, int] = {k: size for name, size, spelled, _ in DTYPES for k in (spelled, spelled.lower(), name)}
#: record_shapes' ``Input type`` spelling -> ``(torch name, bytes per element, kineto's collective spelling)``
SHAPE_DTYPES: dict[str, tuple[str, int, str]] = {
    cpp: (name, size, spelled) for name, size, spelled, cpps in DTYPES for cpp in cpps}


def name_mask(names, pattern: str, *, prefix: bool = False):  # noqa: ANN001, ANN201 - pandas Series -> ndarray
    """Boolean mask of ``names`` matching ``pattern`` (a regex, or a plain prefix when ``prefix``).

    On a Categorical column the test runs once per distinct name and is broadcast
    by the codes: a trace has millions of events but only thousands of names. (For a
    frame's column; the per-rank path uses ``RankTrace.name_hits``, without pandas.)
    """
    import numpy as np
    import pandas as pd

    def test(s: pd.Series) -> np.ndarray:
        s = s.astype(str)
        return (s.str.startswith(pattern) if prefix else s.str.contains(pattern, regex=True)).to_numpy(dtype=bool)

    if isinstance(names.dtype, pd.CategoricalDtype):
        hit = np.append(test(pd.Series(names.cat.categories)), False)  # code -1 (missing) -> False
        return hit[names.cat.codes.to_numpy()]
    return test(names)
