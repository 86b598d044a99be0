"""``tracekit profile``: options -> ProfileConfig -> run_profile -> a short summary."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from tracekit.cli.common import debug_option, invoked_as, run_guarded
from tracekit.errors import ConfigError, RunError
from tracekit.cli.options import MODEL_HELP, workload_options
from tracekit.profile.config import COMPILE_MODES, GRAPH_BREAK_KINDS, OPTIMIZERS, PROFILE_ACTIVITIES, ProfileConfig

EPILOG = """\b
Examples:
  tracekit profile --nproc 2 --out runs/eager
  tracekit profile --nproc 2 --dynamo inductor --optimize-ddp ddp_optimizer \\
      --model toy --width 4096 --depth 16 --bucket-cap-mb 25 --out runs/inductor
  tracekit profile --dynamo inductor --optimize-ddp python_reducer --inductor-ddp-fusion coalesced
  tracekit profile --nproc 4 --tp 2 --replicate --model transformer --out runs/tp2
  torchrun --nproc-per-node 8 -m tracekit profile --model transformer --fsdp
  tracekit analyze runs/inductor
"""


@click.command(epilog=EPILOG)
@click.option("--nproc", type=int, default=None, help="Ranks to start (default: all GPUs, or 2 on cpu). "
              "Under torchrun/srun the launcher decides: omit it (or pass WORLD_SIZE).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Run folder for rank<R>.trace.json.gz and run.json (default: traces/<time>-<model>-<mode>).")
@click.option("--model", default="toy", show_default=True, help=MODEL_HELP)
@workload_options(per_model_defaults=True)
@click.option("--graph-break-at", type=int, default=None,
              help="Insert torch._dynamo.graph_break() after this layer/block (built-in models).")
@click.option("--graph-break-kind", type=click.Choice(GRAPH_BREAK_KINDS), default="explicit", show_default=True,
              help="What the break at --graph-break-at is: explicit (torch._dynamo.graph_break()) or item (a "
                   "data-dependent check of the activations with .item(): a graph break that also makes the host "
                   "wait for the GPU, a blocking device-to-host copy).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--ddp", "parallel", flag_value="ddp", default=True, help="DistributedDataParallel (default).")
@click.option("--fsdp", "parallel", flag_value="fsdp", help="FSDP2 fully_shard per block.")
@click.option("--replicate", "parallel", flag_value="replicate",
              help="Composable torch.distributed._composable.replicate (DDP's reducer, module-level API).")
@click.option("--tp", type=int, default=1, show_default=True,
              help="Tensor-parallel degree: mesh (dp, tp), colwise/rowwise Linear pairs on the tp dimension, "
                   "--replicate or --fsdp on the dp dimension (toy, transformer).")
@click.option("--grad-accum", type=int, default=1, show_default=True,
              help="Micro-batches per step; all but the last skip gradient sync (no_sync).")
@click.option("--activation-checkpointing", is_flag=True, help="FSDP/replicate: checkpoint each block.")
@click.option("--optimizer", type=click.Choice(OPTIMIZERS), default="sgd", show_default=True)
@click.option("--lr", type=float, default=1e-3, show_default=True)
@click.option("--fullgraph", is_flag=True, help="torch.compile(fullgraph=True): a graph break is an error.")
@click.option("--compile-mode", type=click.Choice(COMPILE_MODES), default=None,
              help="torch.compile's mode (--dynamo inductor): reduce-overhead and max-autotune capture CUDA graphs; "
                   "run.json's compile facts say which graphs were captured, skipped (and why) or re-recorded.")
@click.option("--warmup", type=int, default=3, show_default=True,
              help="Warm-up steps (compilation happens here).")
@click.option("--steps", type=int, default=10, show_default=True, help="Timed steps, profiler off.")
@click.option("--profile-wait", type=int, default=1, show_default=True, help="Profiler schedule: wait steps.")
@click.option("--profile-warmup", type=int, default=2, show_default=True,
              help="Profiler schedule: warmup steps (CUPTI on, nothing recorded; from 2 on, the steps after the "
                   "first time CUPTI's own cost: table profiler_distortion).")
@click.option("--profile-steps", type=int, default=3, show_default=True,
              help="Profiler schedule: active (recorded) steps.")
@click.option("--profile-cpu-only-steps", type=int, default=0, show_default=True, hidden=True,
              help="After the window, time this many steps profiled with the CPU recorded and CUPTI off (no trace; "
                   "run.json cpu_only_step_s): the profiler's cost split by state (docs/whatif-evidence.md).")
@click.option("--record-shapes", is_flag=True, help="Record operator input shapes.")
@click.option("--with-stack", is_flag=True, help="Record Python stacks (bigger traces).")
@click.option("--record-modules/--no-record-modules", default=True, show_default=True,
              help="Name each module's forward in the trace (ranges tracekit.module:<path>) in the profiled "
                   "steps of an eager forward; a compiled forward is named through compiled_kernels.json.")
@click.option("--profile-activities", type=click.Choice(PROFILE_ACTIVITIES), default="cpu,cuda", show_default=True,
              help="What the profiler records. cuda (GPU runs): less profiler overhead, but no CPU side: "
                   "no steps, phases, launches or collective ops in the trace (see docs/commands/profile.md).")
@click.option("--bucket-timing/--no-bucket-timing", default=True, show_default=True,
              help="DDP: time every bucket's allreduce with CUDA events (host clocks on CPU) during the "
                   "timed steps, through a comm hook wrapping the active one; stored in run.json.")
@click.option("--calibrate-profiler/--no-calibrate-profiler", default=True, show_default=True,
              help="Measure the profiler's own cost per recorded event on this machine (about a second, after "
                   "the profiled steps); run.json profiler_cost, which `tracekit whatif` subtracts to predict "
                   "the undisturbed step.")
@click.option("--torchviz", is_flag=True,
              help="Rank 0 draws the autograd graph of one extra step with torchviz (autograd.dot, and autograd.svg "
                   "when graphviz's dot is installed). Needs tracekit[viz]. See docs/graphs.md.")
@click.option("--fail-rank", type=int, default=None, hidden=True, envvar="TRACEKIT_TEST_FAIL_RANK",
              help="Debug: make this rank raise.")
@click.option("--fail-at", type=click.Choice(["warmup", "end"]), default="end", hidden=True,
              envvar="TRACEKIT_TEST_FAIL_AT")
@click.option("--compare", default=None, metavar="VARIANTS",
              help="Profile each variant (comma-separated [PARALLEL:]BACKEND[:OPTIMIZE_DDP][:FUSION], e.g. "
                   "eager,inductor,inductor:python_reducer,replicate:inductor:python_reducer:coalesced) into "
                   "OUT/<variant> with otherwise identical options, then print one comparison table.")
@click.option("--force", is_flag=True,
              help="Replace the finished run already in --out (its run.json and traces); without it such a "
                   "folder is refused. A failed run's files are always replaced.")
@debug_option
@run_guarded
def profile_command(compare: str | None = None, force: bool = False, **opts: Any) -> None:
    """Train a model on N ranks (DDP/replicate/FSDP, optional tensor parallel, eager or compiled) and profile it.

    Writes one Chrome trace per rank and run.json (config, versions, hardware,
    step-time percentiles, compile facts, buckets) into the run folder, ready
    for `tracekit analyze`.

    \b
    Examples:
      tracekit profile --nproc 2 --out runs/eager
      tracekit profile --dynamo inductor --optimize-ddp no_optimization --out runs/nosplit
      tracekit profile --model transformer --width 1024 --depth 8 --fsdp --amp bf16
      tracekit profile --compare eager,inductor,inductor:no_optimization --out runs/cmp
      tracekit profile --compare inductor,inductor:python_reducer,replicate:inductor:python_reducer
    """
    from tracekit.profile.launcher import run_profile

    command_line = ["tracekit", *sys.argv[1:]]
    if compare:
        _compare({**opts, "command_line": command_line}, compare, force)
        return
    config = ProfileConfig(command_line=command_line, **opts)
    manifest = run_profile(config, notify=lambda m: click.echo(m, err=True), force=force)
    if manifest is None:  # a non-zero rank under torchrun/srun
        return
    click.echo(format_summary(manifest))


def _compare(options: dict[str, Any], spec: str, force: bool = False) -> None:
    """Profile every variant, then (rank 0 / elastic launcher only) analyze and compare them."""
    from tracekit.compare.variants import variant_configs
    from tracekit.profile.launcher import run_profile
    from tracekit.profile.outdir import holds_finished_run

    configs = variant_configs(options, spec, options.get("out_dir"))  # all validated before any runs
    if not force:  # refuse before the first variant runs, not half-way through
        taken = [cfg.out_dir for _, cfg in configs if holds_finished_run(cfg.out_dir)]
        if taken:
            raise ConfigError(f"{', '.join(taken)} already hold(s) a run: pass --force to replace, "
                              f"or choose another --out")
    root = str(Path(configs[0][1].out_dir).parent)
    dirs, failed = {}, {}
    for label, cfg in configs:
        click.echo(f"== {label}", err=True)
        try:
            manifest = run_profile(cfg, notify=lambda m: click.echo(m, err=True), force=force)
        except RunError as e:  # a failing variant is reported and the others still run
            click.echo(f"error: {label}: {e}", err=True)
            failed[label] = str(e)
            continue
        if manifest is None:  # a non-zero rank under an outer launcher
            continue
        dirs[label] = cfg.out_dir
    if dirs:
        # analysis runs after every profile finished, so the profiled processes never import it
        from tracekit.compare.variants import compare_runs
        from tracekit.report.fmt import table

        click.echo(f"Comparison ({root})")
        click.echo(table(compare_runs(dirs), "table"))
    for label, why in failed.items():
        click.echo(f"{label}: FAILED: {why}")
    if failed:
        raise RunError(f"{len(failed)} of {len(configs)} variants failed: {', '.join(failed)}")


def _cudagraph_lines(cg: dict[str, Any] | None) -> list[str]:
    """What inductor's CUDA graphs did (run.json compile facts ``cudagraphs``), for a mode that captures them."""
    if not cg or not cg.get("captures"):
        return []
    recorded, rerecords, skips = ("n/a" if cg.get(k) is None else cg[k] for k in ("graphs_recorded", "rerecords", "skips"))
    reasons = "; ".join(f"{r['reason']} (x{r['count']})" for r in cg.get("skip_reasons") or [])
    return [f"cuda graphs ({cg.get('mode')}): {recorded} recorded, {rerecords} re-recordings, {skips} graphs skipped"
            + (f": {reasons}" if reasons else "")]


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 1e3:.2f} ms"


def _graphs_lines(graphs: dict[str, Any] | None) -> list[str]:
    """What --dynamo / --torchviz wrote (run.json ``graphs``)."""
    if not graphs:
        return []
    out = []
    n = len(graphs.get("graphs") or [])
    if n:
        out.append(f"{n} compiled graphs (FX code) in graphs/, summary in run.json graphs")
    ag = graphs.get("autograd")
    if ag:
        drawn = ", ".join(f for f in (ag.get("svg"), ag.get("dot")) if f) or "nothing"
        out.append(f"torchviz: wrote {drawn}" + (f"; note: {ag['note']}" if ag.get("note") else ""))
    return out


def format_summary(manifest: dict[str, Any]) -> str:
    """A few lines: where the traces went, step time, what the compiler did."""
    run = manifest.get("run", {})
    overall = manifest.get("timings", {}).get("overall", {})
    sec = overall.get("sec_per_iter", {})
    eps = overall.get("examples_per_sec", {})
    out_dir = manifest.get("_out_dir", "?")
    lines = [
        f"wrote {len(manifest.get('traces', []))} traces + run.json to {out_dir}",
        f"{run.get('world_size')} ranks on {run.get('device')} ({run.get('backend')}); "
        f"step p50 {_ms(sec.get('p50'))}, p90 {_ms(sec.get('p90'))}; "
        f"{eps.get('p50', 0) or 0:.0f} examples/s (p50)",
    ]
    prof = (manifest.get("timings", {}).get("profiled") or {}).get("mean_sec_per_iter")
    unprof = overall.get("mean_sec_per_iter")
    if prof and unprof:
        lines.append(f"profiled steps {_ms(prof)} per step, {prof / unprof:.2f}x the unprofiled mean "
                     f"{_ms(unprof)}" + ("; the window is distorted (> 1.15x): see tracekit analyze"
                                         if prof / unprof > 1.15 else ""))
    per_rank = manifest.get("compile", {}).get("per_rank", [])
    if per_rank and per_rank[0].get("enabled"):
        c = per_rank[0]
        gb = c.get("graph_breaks") or {}
        ddp_opt = c.get("ddp_optimizer") or {}
        skipped = c.get("skipped_frames")
        rec = c.get("recompiles") or {}
        ct = c.get("compile_time_s")
        parts = [
            f"compile ({c.get('backend')}, {c.get('optimize_ddp')}) rank 0:",
            f"{c.get('graph_count') if c.get('graph_count') is not None else 'n/a'} graphs",
            f"{gb.get('model', 'n/a')} graph breaks in the model",
        ]
        if ddp_opt.get("intended_splits") is not None:
            parts.append(f"{ddp_opt['intended_splits']} DDPOptimizer splits")
        parts += [f"{rec.get('count', 'n/a')} recompiles",
                  f"{len(skipped) if skipped is not None else 'n/a'} skipped frames",
                  f"compile {ct:.3g} s" if isinstance(ct, (int, float)) else "compile time n/a"]
        lines.append(", ".join(parts[1:]).join([parts[0] + " ", ""]))
        skips = c.get("dynamo_skips") or []
        if c.get("graph_count") == 0 and skips:
            s0 = skips[0]
            lines.append(f"warning: no compiled graph ran: dynamo skipped {s0.get('function')} "
                         f"({str(s0.get('file')).split('site-packages/')[-1]}): {s0.get('reason')}"
                         + (f"; fix: {s0['fix']}" if s0.get("fix") else ""))
        if c.get("compiles_after_warmup"):
            lines.append(f"warning: {c['compiles_after_warmup']} compiles after warm-up; raise --warmup")
        lines += _cudagraph_lines(c.get("cudagraphs"))
    lines += _graphs_lines(manifest.get("graphs"))
    from tracekit.traces.manifest import implausible_profiler_cost  # after the run: off the CLI's start-up

    bad_cost = implausible_profiler_cost(manifest.get("profiler_cost"), run.get("device"))
    if bad_cost:
        lines.append(f"warning: {bad_cost}: a failed measurement (a busy host?); tracekit whatif will not use it "
                     "and subtracts its documented default instead; profile again to measure it anew")
    lines.append(f"next: {invoked_as()} analyze {shlex.quote(str(out_dir))}")
    return "\n".join(lines)
