"""Keep kineto's trace-start/stop markers off the user's terminal, and nothing else.

Every ``torch.profiler`` start and stop makes kineto (built without glog) print a line such as
``USDT:<date> <time> <pid>:<tid> SyncActivityProfilerHandler.cpp:52] profiler_start`` on the
process's stderr (file descriptor 2, from C++), at every severity ``KINETO_LOG_LEVEL`` allows except
those that also hide kineto's errors. :func:`drop_kineto_markers` sends fd 2 to a temporary file
around the profiler calls that emit them and copies back every line except those markers, so a
warning or error printed at the same moment still reaches stderr, in order.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

#: kineto's marker lines (``USDT_EMIT_START_TRACE`` / ``USDT_EMIT_STOP_TRACE`` in libkineto's Logger.h)
MARKER = re.compile(rb"^USDT:[^\]]*\] profiler_(?:start|stop)\r?$")


def drop_markers(data: bytes) -> bytes:
    """``data`` (captured stderr) without kineto's ``profiler_start``/``profiler_stop`` lines."""
    return b"".join(line for line in data.splitlines(keepends=True) if not MARKER.match(line.rstrip(b"\n")))


@contextmanager
def drop_kineto_markers() -> Iterator[None]:
    """Run the body with fd 2 captured; on exit write the captured bytes back minus kineto's markers.

    ``TRACEKIT_KINETO_MARKERS=1`` turns the filter off (everything goes straight to stderr).
    """
    if os.environ.get("TRACEKIT_KINETO_MARKERS") == "1":
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as buf:
        os.dup2(buf.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            buf.seek(0)
            kept = drop_markers(buf.read())
            if kept:
                os.write(2, kept)
