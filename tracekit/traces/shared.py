"""Hand a parse worker's decoded columns to the parent through shared memory.

Pickling a rank's columns through the pool's pipe copies them three times (into
the pickle, through the pipe, out of the pickle) and page-faults every copy:
about 0.1 s of CPU per 70 MB trace. Instead the parent opens one anonymous
memory file (``memfd``) per trace before the workers fork; a worker writes the
large arrays of :class:`~tracekit.traces.decode.Columns` into the one it
inherited, and only a small :class:`SharedColumns` (the layout) goes through the
pipe. The parent maps the file copy-on-write and wraps the arrays without
copying. A memfd has no name in any file system, so nothing is left behind
whatever happens to either process.

Where ``memfd_create`` is missing (not Linux) or fails, :func:`open_buffers`
returns ``None`` and the columns are pickled as before. numpy only: workers
must not import pandas.

A shared trace holds file descriptors: its buffer until the parent has its
result, then the map's own duplicate for as long as its columns live. Many
small rank files would run out of them (600 files under the common limit of
1024 did), and pickling small columns costs little, so only the traces
:func:`shareable` picks get a buffer: those of at least :data:`SHARE_MIN_BYTES`,
the largest first, at most a quarter of the process's open-file limit.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

import numpy as np

from tracekit.traces.decode import Columns

#: offsets of the arrays in the buffer are multiples of this (cache-line aligned)
_ALIGN = 64
#: traces smaller than this are pickled back (sharing saves ~1.5 ms of CPU per MB of trace)
SHARE_MIN_BYTES = 1 << 20
#: when the open-file limit cannot be read, at most this many traces are shared
_DEFAULT_FD_BUDGET = 64


@dataclass
class SharedColumns:
    """:class:`Columns` whose ``dense`` arrays and ``name_codes`` live in buffer ``fd``.

    ``layout``: ``(key, dtype, length, offset)`` per array (``key`` ``None`` is
    ``name_codes``); ``size``: bytes written.
    """

    cols: Columns
    layout: list[tuple[str | None, str, int, int]]
    size: int


def open_buffers(n: int) -> list[int] | None:
    """``n`` fresh memory files (their fds), or None where shared buffers are unavailable."""
    create = getattr(os, "memfd_create", None)
    if create is None:
        return None
    fds: list[int] = []
    try:
        for i in range(n):
            fds.append(create(f"tracekit-columns-{i}", getattr(os, "MFD_CLOEXEC", 0)))
    except OSError:
        close_buffers(fds)
        return None
    return fds


def shareable(sizes: list[int]) -> list[bool]:
    """Which of the traces of these file sizes get a shared buffer (module doc): at least
    :data:`SHARE_MIN_BYTES`, the largest first, as many as :func:`fd_budget` allows."""
    out = [False] * len(sizes)
    big = sorted((i for i, n in enumerate(sizes) if n >= SHARE_MIN_BYTES), key=lambda i: -sizes[i])
    for i in big[:fd_budget()]:
        out[i] = True
    return out


def fd_budget() -> int:
    """How many traces may be shared at once: a quarter of the soft open-file limit (each holds up to two
    descriptors, and the rest of the process needs its own)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no resource module (Windows): no memfd there either
        return _DEFAULT_FD_BUDGET
    if soft == resource.RLIM_INFINITY:
        return 1 << 16
    return max(0, soft // 4)


def open_buffers_for(share_it: list[bool]) -> list[int | None] | None:
    """A fresh memory file for each trace marked True, None for the others; None when none is marked or
    shared buffers are unavailable."""
    n = sum(share_it)
    fds = open_buffers(n) if n else None
    if fds is None:
        return None
    it = iter(fds)
    return [next(it) if s else None for s in share_it]


def close_buffers(fds: list[int | None] | None) -> None:
    for fd in fds or ():
        if fd is None:
            continue
        try:
            os.close(fd)
        except OSError:
            pass


def share(cols: Columns, fd: int) -> SharedColumns | Columns:
    """In a worker: write the large arrays of ``cols`` into buffer ``fd``.

    Returns ``cols`` unchanged if the write fails (e.g. out of memory for
    shared pages): the parent then gets them pickled.
    """
    arrays: list[tuple[str | None, np.ndarray]] = [*cols.dense.items(), (None, cols.name_codes)]
    if not any(a.nbytes for _, a in arrays):
        return cols  # nothing kept: nothing worth sharing (and an empty file cannot be mapped)
    layout: list[tuple[str | None, str, int, int]] = []
    offset = 0
    try:
        with open(fd, "wb", closefd=False) as fh:
            for key, arr in arrays:
                arr = np.ascontiguousarray(arr)
                pad = -offset % _ALIGN
                fh.write(b"\0" * pad)
                offset += pad
                fh.write(memoryview(arr).cast("B"))
                layout.append((key, arr.dtype.str, len(arr), offset))
                offset += arr.nbytes
    except OSError:
        return cols
    light = Columns(n=cols.n, dense={}, name_codes=np.empty(0, np.int32), names=cols.names,
                    sparse_idx=cols.sparse_idx, sparse=cols.sparse, op_idx=cols.op_idx, op_args=cols.op_args)
    return SharedColumns(cols=light, layout=layout, size=offset)


def attach(item: SharedColumns | Columns, fd: int | None) -> Columns:
    """In the parent: the full :class:`Columns` of a worker result, mapped from buffer ``fd``.

    The mapping is private copy-on-write, so the arrays are writable and writes
    never reach the buffer. Plain :class:`Columns` (the pickled fallback) pass through.
    """
    if not isinstance(item, SharedColumns):
        return item
    if fd is None:
        raise ValueError("shared columns without a buffer")
    try:
        mm: mmap.mmap | bytearray = mmap.mmap(fd, item.size, access=mmap.ACCESS_COPY)  # keeps its own dup of fd
    except OSError:  # no descriptor or address space left for a map: read the buffer instead (one copy)
        mm = bytearray(item.size)
        if os.preadv(fd, [mm], 0) != item.size:
            raise
    cols = item.cols
    for key, dtype, n, offset in item.layout:
        arr = np.frombuffer(mm, dtype=np.dtype(dtype), count=n, offset=offset)
        if key is None:
            cols.name_codes = arr
        else:
            cols.dense[key] = arr
    return cols
