"""Text that is safe to print on a terminal (no pandas: the CLI imports it on every call)."""

from __future__ import annotations

import re

#: characters that must not reach a terminal raw: C0 controls but newline and tab, DEL, C1
#: controls (ESC starts ANSI sequences, CSI is U+009B), and lone surrogates (the bytes of a
#: file name that is not valid UTF-8, as Python decodes it), and bidirectional overrides
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if 0xDC80 <= c <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def safe_text(text: str) -> str:
    """``text`` with terminal control characters and undecodable bytes escaped (``\\x1b``).

    Kernel and op names come from the trace: an ANSI escape in one must not recolour,
    clear or retitle the reader's terminal. Text output only; JSON and CSV keep names exact.
    """
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text
