"""Golden outputs of ``tracekit analyze --format json`` on committed traces.

Regenerate after an intended change with ``python -m tests.golden_util`` and review the diff.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"
#: name -> trace folder (relative to the repo root)
CASES = {
    "reference_eager": "tests/data/reference/eager",
    "reference_inductor": "tests/data/reference/inductor",
    "reference_inductor_nosplit": "tests/data/reference/inductor_nosplit",
    "reference_inductor_break_in_loop": "tests/data/reference/inductor_break_in_loop",
    # traces tracekit profile produced on 2 x H200 (sample_traces/README.md has the commands)
    "sample_eager_ddp": "sample_traces/fixtures/eager_ddp",
    "sample_inductor_ddp_optimizer": "sample_traces/fixtures/inductor_ddp_optimizer",
    "sample_inductor_no_optimization": "sample_traces/fixtures/inductor_no_optimization",
    "sample_inductor_graph_break": "sample_traces/examples/inductor_graph_break",
    "sample_aot_eager_python_reducer": "sample_traces/fixtures/aot_eager_python_reducer",
    "sample_fsdp_transformer_inductor": "sample_traces/fixtures/fsdp_transformer_inductor",
    # benchmarks/gpu/compiled_autograd.sh on 2 x H200: DDPOptimizer, replicate(), tensor parallel tp=2
    "sample_ca_inductor": "sample_traces/fixtures/h200x2_compiled_autograd/inductor",
    "sample_ca_replicate_inductor": "sample_traces/fixtures/h200x2_compiled_autograd/replicate-inductor",
    "sample_ca_tp2_replicate_transformer": "sample_traces/fixtures/h200x2_compiled_autograd/tp2-replicate-transformer",
    # the lead's --compare run on 2 x H200: DDPOptimizer against the python reducer (each fusion, replicate)
    "sample_pr_inductor": "sample_traces/fixtures/h200x2_python_reducer/inductor",
    "sample_pr_concat": "sample_traces/fixtures/h200x2_python_reducer/inductor-python_reducer",
    "sample_pr_coalesced": "sample_traces/fixtures/h200x2_python_reducer/inductor-python_reducer-coalesced",
    "sample_pr_none": "sample_traces/fixtures/h200x2_python_reducer/inductor-python_reducer-none",
    "sample_pr_replicate": "sample_traces/fixtures/h200x2_python_reducer/replicate-inductor-python_reducer",
    # issue 13: real models whose profiled window is distorted, and the default workload (not distorted)
    "sample_h200x2_resnet50_inductor": "sample_traces/fixtures/h200x2_resnet50_inductor",
    "sample_h200x2_gpt2_inductor_bf16": "sample_traces/fixtures/h200x2_gpt2_inductor_bf16",
    "sample_h200x2_default_inductor": "sample_traces/examples/h200x2_default_inductor",
    # traces other projects published (tests/data/external/README.md: origin, commit, licence)
    **{f"external_{d}": f"tests/data/external/{d}" for d in (
        "hta_amd_mi250", "hta_cupti_profiler", "hta_distributed_info_unavailable", "hta_trace_compare_sampled",
        "hta_trace_filter", "kineto_tb_plugin_2021", "tracelens_mi300_bert_small", "tracelens_mi300_resnet18",
        "hta_torch20_fsdp_16rank", "tracelens_rocm_compile_triton", "tracelens_mi210_gpu_only")},
}
#: ``tracekit diff A B --by ... --format md`` of eager/compiled pairs (single-H100 runs of benchmarks/bench_ops.py,
#: sample_traces/README.md): name -> (run A, run B, by); golden ``<name>.md``
DIFF_CASES = {
    f"diff_h100_{m}_by_{by}": (f"sample_traces/examples/h100_ops/{m}-eager", f"sample_traces/examples/h100_ops/{m}-inductor",
                               by)
    for m in ("gpt2", "vit") for by in ("module", "op")
}
KEEP = ("ranks", "steps", "buckets")
#: significant digits a float keeps in a table's digest (far above any figure's meaning, far below a change's)
DIGEST_DIGITS = 9


def _canonical(v):  # noqa: ANN001, ANN202
    """``v`` with every float rounded to :data:`DIGEST_DIGITS` significant digits (one spelling per value)."""
    if isinstance(v, float):
        return float(f"{v:.{DIGEST_DIGITS}g}") if v == v and abs(v) != float("inf") else repr(v)
    if isinstance(v, dict):
        return {k: _canonical(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canonical(x) for x in v]
    return v


def digest(rows: list) -> str:
    """A table's fingerprint: every row, column and value in order (floats to :data:`DIGEST_DIGITS` digits)."""
    text = json.dumps(_canonical(rows), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def summarize(doc: dict) -> dict:
    """The stable part of the JSON report: rank/step/bucket tables rounded to 0.001 µs, and every table's
    row count and :func:`digest` (any change to any table, its order included, shows as the table's name)."""
    def rnd(v):  # noqa: ANN001, ANN202
        return round(v, 3) if isinstance(v, float) else v
    out = {k: [{c: rnd(v) for c, v in row.items()} for row in doc[k]] for k in KEEP}
    out["collective_count"] = len(doc["collectives"])
    out["instance_count"] = len(doc["instances"])
    out["findings"] = sorted((f["code"], f["rank"] if f["rank"] is not None else -1) for f in doc.get("findings", []))
    out["tables"] = {k: {"rows": len(v), "digest": digest(v)} for k, v in doc.items() if k != "meta"}
    return out


def current(case: str) -> dict:
    from tracekit.runner.pipeline import analyze_paths
    from tracekit.report.render import to_json_dict

    root = HERE.parent
    doc = json.loads(json.dumps(to_json_dict(analyze_paths([str(root / CASES[case])]))))
    return summarize(doc)


def current_diff(case: str) -> str:
    """The markdown ``tracekit diff`` of :data:`DIFF_CASES` entry ``case`` (paths relative to the repo root)."""
    import os

    from tracekit.compare.diff import diff_paths
    from tracekit.compare.render import diff_output
    from tracekit.report.output import render

    a, b, by = DIFF_CASES[case]
    here = os.getcwd()
    os.chdir(HERE.parent)  # (the report names the runs as given)
    try:
        return render(diff_output(a, b, diff_paths(a, b, by)), "markdown")
    finally:
        os.chdir(here)


if __name__ == "__main__":
    GOLDEN.mkdir(exist_ok=True)
    for name in CASES:
        (GOLDEN / f"{name}.json").write_text(json.dumps(current(name), indent=1, sort_keys=True) + "\n")
        print("wrote", name)
    for name in DIFF_CASES:
        (GOLDEN / f"{name}.md").write_text(current_diff(name))
        print("wrote", name)
