"""``python -m tracekit.replay.changes --write docs/whatif.md``: rewrite the page's table of scenario options from
the declarations (without ``--write``: print the table)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tracekit.replay.changes import options_table, update


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--write", type=Path, metavar="PAGE", help="rewrite the table in PAGE (docs/whatif.md)")
    args = ap.parse_args(argv)
    if args.write is None:
        print(options_table())
        return 0
    args.write.write_text(update(args.write.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
