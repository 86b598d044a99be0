"""``tracekit bench``: ``ddp`` (scaling sweep), ``diff`` (compare two sweeps), ``rpc`` (parameter-server benchmark)."""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Callable
from typing import Any

import click

from tracekit.cli.common import debug_option, emit, format_options, invoked_as, run_guarded
from tracekit.errors import ConfigError, RunError
from tracekit.cli.options import MODEL_HELP, workload_options
from tracekit.profile.config import DEVICES

GROUP_EPILOG = """\b
Examples:
  tracekit bench ddp --model toy --model transformer --json sweep.json
  tracekit bench diff before.json after.json
  tracekit bench rpc --trainers 2 --parameter-servers 2
"""

DDP_EPILOG = """\b
Examples:
  tracekit bench ddp --model toy --model transformer --json sweep.json
  tracekit bench ddp --model resnet50 --world-sizes 1,2 --dynamo inductor --json inductor.json
  tracekit bench ddp --device cpu --world-sizes 1,2 --iters 5 --profile --profile-dir runs/bench
  torchrun --nnodes 2 --nproc-per-node 8 ... -m tracekit bench ddp --model resnet50   (multi-node points)
"""

DIFF_EPILOG = """\b
Example:
  tracekit bench diff baseline.json test.json
  tracekit bench diff original_benchmark_output.json tracekit_sweep.json --format markdown
"""

RPC_EPILOG = """\b
Examples:
  tracekit bench rpc --trainers 2 --parameter-servers 2 --epochs 100
  tracekit bench rpc --trainers 1 --parameter-servers 1 --epochs 5 --warmup-cycles 1 --json rpc.json
"""


def _sizes(value: str | None) -> list[int] | None:
    if not value:
        return None
    try:
        sizes = [int(x) for x in value.replace(" ", "").split(",") if x]
    except ValueError as e:
        raise ConfigError(f"--world-sizes must be comma-separated integers (got {value!r})") from e
    if not sizes or any(n < 1 for n in sizes):
        raise ConfigError(f"--world-sizes must be positive integers (got {value!r})")
    return sizes


@click.group(epilog=GROUP_EPILOG)
def bench_group() -> None:
    """Distributed benchmarks (PyTorch's DDP sweep, its diff, and the RPC parameter-server benchmark)."""


@bench_group.command("ddp", epilog=DDP_EPILOG,
                     short_help="DDP scaling sweep: a no-DDP baseline, then DDP on 1, 2, 4, ... ranks")
@click.option("--model", "models", multiple=True, default=("toy",), show_default=True,
              help="Repeatable. " + MODEL_HELP)
@click.option("--world-sizes", default=None,
              help="Comma-separated DDP world sizes, e.g. 1,2,4 (default: 1, 2, 4, ... up to the GPUs here; "
                   "2 ranks on cpu; under torchrun/srun up to the job's ranks).")
@click.option("--warmup", type=int, default=5, show_default=True, help="Untimed iterations per point.")
@click.option("--iters", type=int, default=10, show_default=True, help="Timed iterations per point and rank.")
@workload_options()
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write the results (superset of benchmark.py's JSON) to this file.")
@click.option("--profile", is_flag=True,
              help="Also write per-rank traces for each point (tracekit profile layout; `tracekit analyze` them).")
@click.option("--profile-dir", type=click.Path(file_okay=False), default=None,
              help="Where --profile writes <model>/<no-ddp|ddp-N>/ folders (default: traces/bench-<time>).")
@format_options()
@click.option("--no-progress", is_flag=True, help="Do not show progress on stderr.")
@debug_option
@run_guarded
def ddp_command(models: tuple[str, ...], world_sizes: str | None, warmup: int, iters: int, json_path: str | None,
                profile: bool, profile_dir: str | None, fmt: str, output: str | None, no_progress: bool,
                **workload: Any) -> None:
    """DDP scaling sweep: no-DDP baseline, then DDP on 1, 2, 4, ... ranks, per model.

    Each point is a fresh process group and model: --warmup then --iters iterations of
    forward, loss, backward and optimizer step, timed with device synchronization; all
    ranks' times are gathered. The table shows p50/p75/p90/p95 sec/iter, ex/s per GPU and
    in total, and the scaling efficiency against the 1-GPU DDP point. A failing point is
    reported in the table and the sweep goes on (exit code 1 at the end).
    """
    from tracekit.bench.ddp import failed_points, render_sweep, run_sweep, sweep_rows
    from tracekit.bench.progress import Progress
    from tracekit.bench.schema import write_document
    from tracekit.profile.config import ProfileConfig

    if iters < 1 or warmup < 0:
        raise ConfigError("--iters must be >= 1 and --warmup >= 0")
    if profile_dir and not profile:
        raise ConfigError("--profile-dir needs --profile")
    if profile and not profile_dir:
        profile_dir = f"traces/bench-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    sizes = _sizes(world_sizes)
    # ProfileConfig wants warmup >= 1; the sweep's --warmup 0 maps to 1 warm-up step.
    config = ProfileConfig(**workload, warmup=max(1, warmup), steps=iters, command_line=list(sys.argv))
    progress = Progress(0, enabled=False) if no_progress else None
    doc = run_sweep(config, list(models), sizes, profile_dir=profile_dir, progress=progress)
    if doc is None:  # not rank 0 of an outer job
        return
    emit(_render(doc, fmt, lambda style: render_sweep(doc, style), sweep_rows), output)
    if json_path:
        write_document(json_path, doc)
        click.echo(f"wrote {json_path}", err=True)
    if profile:
        click.echo(f"traces: {profile_dir}/<model>/<point>/  ({invoked_as()} analyze <folder>)", err=True)
    failed = failed_points(doc)
    if failed:
        total = sum(len(e["result"]) + len(e["failures"]) for e in doc["benchmark_results"])
        raise RunError(f"{failed} of {total} points failed (see the table)")


@bench_group.command("diff", epilog=DIFF_EPILOG,
                     short_help="compare two `bench ddp` JSON files, like PyTorch's diff.py")
@click.argument("file_a", type=click.Path(exists=True, dir_okay=False))
@click.argument("file_b", type=click.Path(exists=True, dir_okay=False))
@format_options()
@debug_option
@run_guarded
def diff_command(file_a: str, file_b: str, fmt: str, output: str | None) -> None:
    """Compare two `bench ddp` JSON files (A = baseline, B = test), like PyTorch's diff.py.

    Metadata side by side; per model and world size, p75 and p95 sec/iter and ex/s with the
    % change (positive = B is faster). Also reads JSON written by PyTorch's benchmark.py.
    """
    from tracekit.compare.bench import diff_files, diff_rows, render_diff

    d = diff_files(file_a, file_b)
    emit(_render(d, fmt, lambda style: render_diff(d, style), diff_rows), output)


@bench_group.command("rpc", epilog=RPC_EPILOG,
                     short_help="DDP + RPC hybrid parameter-server benchmark (benchmark_ddp_rpc.py)")
@click.option("--trainers", type=int, default=2, show_default=True, help="Trainer ranks (DDP over the dense part).")
@click.option("--parameter-servers", type=int, default=2, show_default=True,
              help="Parameter-server ranks, one EmbeddingBag table each.")
@click.option("--num-embeddings", type=int, default=100, show_default=True, help="Rows per table.")
@click.option("--embedding-dim", type=int, default=64, show_default=True, help="Columns per table.")
@click.option("--warmup-cycles", type=int, default=5, show_default=True, help="Epochs run and dropped first.")
@click.option("--epochs", type=int, default=100, show_default=True, help="Timed epochs (10 batches each).")
@click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True,
              help="Trainers' device: auto = a GPU per trainer when available, else cpu.")
@click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True,
              help="Seconds for process-group/RPC init and for the whole trainer run.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Write results here.")
@format_options()
@debug_option
@run_guarded
def rpc_command(trainers: int, parameter_servers: int, num_embeddings: int, embedding_dim: int,
                warmup_cycles: int, epochs: int, device: str, timeout_s: float, json_path: str | None,
                fmt: str, output: str | None) -> None:
    """Hybrid parameter-server benchmark (torch/distributed/benchmarks/benchmark_ddp_rpc.py).

    EmbeddingBag tables live on parameter-server ranks and are reached through
    torch.distributed.rpc (TensorPipe); a dense MLP is DDP-wrapped on the trainer ranks;
    distributed autograd and a DistributedOptimizer train both; a master coordinates.
    Prints per-trainer and overall p50/p75/p90/p95 sec/epoch and epochs/s.
    """
    from tracekit.bench.rpc import RpcConfig, render_rpc, rpc_rows, run_rpc_bench
    from tracekit.bench.schema import write_document

    cfg = RpcConfig(trainers=trainers, parameter_servers=parameter_servers, num_embeddings=num_embeddings,
                    embedding_dim=embedding_dim, warmup_cycles=warmup_cycles, epochs=epochs, device=device,
                    timeout_s=timeout_s)
    doc = run_rpc_bench(cfg)
    emit(_render(doc, fmt, lambda style: render_rpc(doc, style), rpc_rows), output)
    if json_path:
        write_document(json_path, doc)
        click.echo(f"wrote {json_path}", err=True)


def _render(doc: dict[str, Any], fmt: str, text: Callable[[str], str],
            rows: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> str:
    """A bench document through the output path: ``text(tabulate style)``, the document itself as JSON, ``rows``
    as CSV."""
    import pandas as pd

    from tracekit.report.output import Output, render, tablefmt

    return render(Output(text=lambda f: text(tablefmt(f)), document=lambda: doc,
                         frame=lambda: pd.DataFrame(rows(doc))), fmt)
