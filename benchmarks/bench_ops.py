#!/usr/bin/env python
"""Check the ``ops`` and ``modules`` tables on real single-GPU runs (needs CUDA, torchvision, transformers).

For each model of :mod:`benchmarks.ops_models` (a Hugging Face GPT-2 in bf16, a ViT in bf16, a torchvision
ResNet-18 in fp32), eager and ``--dynamo inductor``:

1. ``tracekit profile --nproc 1 --record-shapes`` it (a few steps);
2. ``tracekit.analyze`` the run and take, per step: the ``ops`` GEMM + convolution FLOPs, the attention FLOPs,
   the largest ``pct_of_roofline``, the modules' self times against the ops' total and the mean step's GPU busy
   time (table ``steps``);
3. count the FLOPs of one training step (forward + backward) of the same model and batch with
   ``torch.utils.flop_counter.FlopCounterMode``, on the GPU, split into GEMM + convolution and attention;
4. compute the attention FLOPs from the formula (docs/ops.md): layers · (1 + 2.5) · 4·B·H·S²·D, halved when
   the trace's attention calls say ``is_causal`` (a compiled GPT-2 passes an explicit mask instead: its kernel
   computes every score, so the full count is the truth there).

Checks: GEMM + conv within 3 % of FlopCounterMode, attention within 5 % of the formula, no op above 100 % of its
roofline, the modules' self time within 1 % of the ops' time (the ops' time against the GPU busy time is
reported: it exceeds it where GPU activities overlap). Results: one JSON document (``--json``).

Usage: ``python benchmarks/bench_ops.py --json out.json [--only gpt2,vit] [--modes eager,inductor]``; after a
change to the models, ``python benchmarks/bench_ops.py --json benchmarks/results/bench_ops_h100.json --remeasure
sample_traces/examples/h100_ops`` recomputes our side of the committed results from the committed runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

#: model -> (amp, batch size)
RUNS = {"gpt2": ("bf16", 8), "vit": ("bf16", 32), "resnet": ("none", 32), "tiny": ("none", 4)}
GEMM_OPS = ("mm", "addmm", "bmm", "baddbmm", "convolution", "convolution_backward", "_scaled_mm")
ATTENTION_OPS = ("_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                 "_scaled_dot_product_cudnn_attention", "_flash_attention_forward", "_efficient_attention_forward")


def flop_counter(model_name: str, amp: str, batch: int, device: str) -> dict[str, float]:
    """FlopCounterMode over one forward + backward of the model on the GPU: GEMM+conv and attention FLOPs."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from benchmarks import ops_models
    from tracekit.profile.models import output_to_loss

    model, batch_fn = getattr(ops_models, model_name)()
    model = model.to(device).train()
    x = batch_fn(batch, torch.device(device))
    ctx = torch.autocast(device, dtype=torch.bfloat16) if amp == "bf16" else torch.autocast(device, enabled=False)
    with FlopCounterMode(display=False) as fc:
        with ctx:
            out = model(**x) if isinstance(x, dict) else model(x)
        output_to_loss(out).backward()
    gemm = attn = 0.0
    for op, n in fc.get_flop_counts().get("Global", {}).items():
        name = str(op).split(".")[1] if "." in str(op) else str(op)
        if name.removesuffix("_backward") in GEMM_OPS or name in GEMM_OPS:
            gemm += n
        elif any(name.startswith(a) for a in ATTENTION_OPS):
            attn += n
    return {"gemm_conv_flops": gemm, "attention_flops_counter": attn}


def attention_formula(model_name: str, batch: int, causal: bool) -> float:
    from benchmarks.ops_models import SHAPES

    s = SHAPES[model_name]
    if not s.get("layers"):
        return 0.0
    fwd = 4.0 * batch * s["heads"] * s["seq"] ** 2 * s["head_dim"]
    total = s["layers"] * fwd * (1 + 2.5)
    return total / 2 if causal else total


def trace_causal(run: Path) -> bool:
    """Do the run's forward SDPA calls say ``is_causal`` (their Concrete Inputs, at op_models' index)?"""
    import gzip

    from tracekit.analyses.op_models import _SDPA

    path = next(run.glob("rank0.trace.json*"))
    doc = json.loads((gzip.open if path.suffix == ".gz" else open)(path, "rb").read())
    for e in doc.get("traceEvents", []):
        hit = _SDPA.get(e.get("name", ""))
        if hit and not hit[2]:
            conc = e.get("args", {}).get("Concrete Inputs") or []
            return len(conc) > hit[1] and conc[hit[1]] == "True"
    return False


def profile(model_name: str, mode: str, amp: str, batch: int, out: Path, device: str) -> float:
    cmd = [sys.executable, "-m", "tracekit", "profile", "--nproc", "1", "--device", device, "--record-shapes",
           "--model", f"benchmarks.ops_models:{model_name}", "--batch-size", str(batch), "--amp", amp,
           "--warmup", "2", "--steps", "2", "--profile-wait", "0", "--profile-warmup", "1", "--profile-steps", "2",
           "--no-calibrate-profiler", "--no-bucket-timing", "--out", str(out), "--force"]
    if mode == "inductor":
        cmd += ["--dynamo", "inductor"]
    t0 = time.perf_counter()
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))  # keeps carried wheels
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=path))
    if r.returncode:
        raise RuntimeError(f"profile {model_name} {mode} failed: {r.stderr[-3000:]}")
    return time.perf_counter() - t0


def measure(run: Path) -> dict[str, Any]:
    import tracekit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tracekit.analyze(run)
    ops, mods, steps = res.tables["ops"], res.tables["modules"], res.tables["steps"]
    cat = ops.groupby("category")["flops_per_step"].sum(min_count=1)
    top = ops.sort_values("pct_of_roofline", ascending=False).head(3)
    busy = float(steps["busy_us"].mean())
    return {
        "ops_rows": len(ops), "gemm_conv_flops": float(cat.get("gemm", 0) or 0) + float(cat.get("conv", 0) or 0),
        "attention_flops": float(cat.get("attention", 0) or 0),
        "max_pct_of_roofline": float(ops["pct_of_roofline"].max()),
        "top_roofline": top[["op", "category", "dtype", "bound", "pct_of_roofline"]].to_dict("records"),
        "ops_us_per_step": float(ops["us_per_step"].sum()),
        "modules_self_us_per_step": float(mods["self_us_per_step"].sum()),
        "busy_us_per_step": busy,
        "flops_sources": ops["flops_source"].value_counts(dropna=False).to_dict(),
        "top_ops": ops.head(8)[["op", "category", "us_per_step", "achieved_tflops", "pct_of_roofline"]]
        .to_dict("records"),
        "notes": [n for n in res.meta.get("notes", []) if n.startswith("ops:")],
        "findings": [f for f in res.tables["findings"]["code"]],
    }


def check(row: dict[str, Any]) -> dict[str, Any]:
    def rel(a: float, b: float) -> float | None:
        """|a - b| / b; None where b is 0 or unknown (a CPU run has no GPU busy time)."""
        return None if not b or b != b else abs(a - b) / b

    out = {
        "gemm_conv_vs_flop_counter": rel(row["gemm_conv_flops"], row["gemm_conv_flops_counter"]),
        "attention_vs_formula": rel(row["attention_flops"], row["attention_formula"]),
        "ops_vs_busy": rel(row["ops_us_per_step"], row["busy_us_per_step"]),
        "modules_vs_ops": rel(row["modules_self_us_per_step"], row["ops_us_per_step"]),
    }
    # ops_vs_busy is reported, not judged: the ops' time sums each GPU activity's duration, the busy time is their
    # union, so the two part where activities overlap (cuDNN's kernels on one stream, docs/ops.md)
    out["pass"] = bool((out["gemm_conv_vs_flop_counter"] or 0) <= 0.03
                       and (out["attention_vs_formula"] is None or out["attention_vs_formula"] <= 0.05)
                       and not row["max_pct_of_roofline"] > 100 and (out["modules_vs_ops"] or 0) <= 0.01)
    return out


def _judge(row: dict[str, Any], run: Path) -> None:
    """Complete ``row`` (the truth, FlopCounterMode's counts, and our figures of ``run``): the attention formula
    its trace's causality calls for, and the checks."""
    row["attention_causal"] = trace_causal(run)
    row["attention_formula"] = attention_formula(row["model"], row["batch"], row["attention_causal"])
    row["check"] = check(row)


def remeasure(results: Path, runs: Path) -> int:
    """Rewrite ``results``' measured figures from the runs under ``runs`` (no GPU, no profiling): the truth
    (FlopCounterMode, counted on the GPU) is kept, our side and the checks are recomputed."""
    doc = json.loads(results.read_text())
    for row in doc["runs"]:
        if "error" in row:
            continue
        run = runs / f"{row['model']}-{row['mode']}"
        if not run.is_dir():  # a run not committed keeps the figures measured on the GPU, and says so
            row["figures"] = "as measured on the GPU (its run is not committed)"
            print(f"{run}: not committed, its row is kept as measured", flush=True)
            continue
        row["figures"] = f"recomputed from {run}"
        row |= measure(run)
        _judge(row, run)
        print(json.dumps({k: row[k] for k in ("model", "mode", "check")}, default=str), flush=True)
    results.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--only", default=",".join(RUNS))
    ap.add_argument("--modes", default="eager,inductor")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_ops"))
    ap.add_argument("--device", default="cuda", help="cuda, or cpu for a dry run (--only tiny)")
    ap.add_argument("--remeasure", type=Path, metavar="RUNS",
                    help="recompute our figures of the --json file from its committed runs (RUNS/<model>-<mode>) "
                         "with this checkout; FlopCounterMode's counts, measured on the GPU, stay as they are")
    a = ap.parse_args()
    if a.remeasure:
        return remeasure(a.json, a.remeasure)
    import torch

    gpu = torch.cuda.get_device_name(0) if a.device == "cuda" else None
    doc: dict[str, Any] = {"torch": torch.__version__, "gpu": gpu, "runs": []}
    for name in a.only.split(","):
        amp, batch = RUNS[name]
        try:
            counted = flop_counter(name, amp, batch, a.device)
        except Exception as e:  # noqa: BLE001 - reported, the other models still run
            doc["runs"].append({"model": name, "error": f"FlopCounterMode: {e}"[-2000:]})
            continue
        for mode in a.modes.split(","):
            row: dict[str, Any] = {"model": name, "mode": mode, "amp": amp, "batch": batch}
            try:
                row["profile_s"] = round(profile(name, mode, amp, batch, a.work / f"{name}-{mode}", a.device), 1)
                row |= measure(a.work / f"{name}-{mode}")
            except Exception as e:  # noqa: BLE001 - a failed run is reported, the others still run
                row["error"] = str(e)[-2000:]
                doc["runs"].append(row)
                continue
            row["gemm_conv_flops_counter"] = counted["gemm_conv_flops"]
            row["attention_flops_counter"] = counted["attention_flops_counter"]
            _judge(row, a.work / f"{name}-{mode}")
            doc["runs"].append(row)
            a.json.write_text(json.dumps(doc, indent=1, default=str))  # partial results survive a timeout
            print(json.dumps({k: row[k] for k in ("model", "mode", "check")}, default=str), flush=True)
    a.json.write_text(json.dumps(doc, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
