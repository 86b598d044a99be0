"""How repeatable is the profiler-cost calibration (tracekit.profile.calibrate) on this machine?

Runs :func:`calibrate` ``--repeat`` times in one process with the default profiler settings
(CPU + CUDA activities on a GPU machine) and prints each result and the spread, so the note
on a what-if prediction can say how much of its error the calibration's noise explains.

Example (device machine)::

    python benchmarks/calibration_noise.py --repeat 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import torch

    from tracekit.profile.calibrate import calibrate
    from tracekit.profile.harness import profiler_activities

    device = "cuda" if torch.cuda.is_available() else "cpu"
    acts = profiler_activities("cpu,cuda", device)
    rows = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = calibrate(device, acts)
        r["seconds"] = time.perf_counter() - t0
        rows.append(r)
        print(json.dumps(r), flush=True)
    for key in ("cpu_op_ns", "runtime_ns"):
        vals = [r[key] for r in rows if r[key] is not None]
        if len(vals) > 1:
            print(f"{key}: median {statistics.median(vals):.0f}, min {min(vals):.0f}, max {max(vals):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
