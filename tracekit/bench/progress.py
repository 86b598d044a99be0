"""A small progress display on stderr: one in-place line on a TTY, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``start(label)`` then ``done(summary)`` per item; ``[i/N]`` numbering."""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.index = 0
        self.label = ""
        self._t0 = 0.0

    def start(self, label: str) -> None:
        self.index += 1
        self.label = label
        self._t0 = time.monotonic()
        if not self.enabled:
            return
        line = f"[{self.index}/{self.total}] {label} ..."
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self, summary: str) -> None:
        if not self.enabled:
            return
        took = time.monotonic() - self._t0
        line = f"[{self.index}/{self.total}] {self.label}: {summary} ({took:.1f}s)"
        self.stream.write(("\r\033[K" if self.tty else "") + line + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        if self.enabled:
            self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
            self.stream.flush()
