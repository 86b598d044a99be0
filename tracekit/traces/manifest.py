"""The run manifest ``run.json``: written by rank 0 of ``tracekit profile``, read by ``tracekit analyze``.

This module must stay importable without torch (analyze imports it).

Top-level keys (``schema_version`` 1)::

    schema_version   int, 1
    tool             {"name": "tracekit", "version": str}
    created_utc      ISO-8601 time the manifest was written
    command_line     list[str], the argv that started the run
    status           "ok" | "failed" (written by the launcher when a rank failed: then only tool, created_utc,
                     command_line, config, run, versions, traces (what the surviving ranks wrote) and failure)
    config           the resolved ProfileConfig: every option (see docs/commands/profile.md),
                     plus "optimize_ddp_resolved"
    run              {"world_size", "device": "cuda"|"cpu", "backend": "nccl"|"gloo",
                      "launcher": "elastic"|"torchrun"|"slurm"|"single", "notice": str|None,
                      "model_kind": "toy"|"transformer"|"torchvision"|"hf"|"factory",
                      "examples_per_step_per_rank", "global_batch", "parallel_applied": {...},
                      "tf32": {"matmul": bool, "cudnn": bool} (TF32 of FP32 matmuls and cuDNN convolutions)}
    versions         {"tracekit", "python", "torch", "cuda", "nccl", "cudnn", "platform"}
                     (null when not applicable, e.g. cuda on a CPU build)
    hardware         {"ranks": [{"rank", "local_rank", "hostname", "pid", "device", "gpu_name",
                                 "cpus" (cores its process could run on), "torch_threads",
                                 "gloo_threads" (gloo with --tp: {thread id: group name})}],
                      "topology": str|None, "topology_unavailable": str|None}
    timings          {"method": str, "warmup_step_s": {rank: [..]},
                      "per_rank": [{"rank", "steps", "sec_per_iter": {"p50","p75","p90","p95"},
                                    "mean_sec_per_iter", "examples_per_step",
                                    "examples_per_sec": {"p50",...}, "step_s": [..]}],
                      "overall": {same keys, slowest rank per step, global batch, "definition"},
                      per rank also "profiled_step_s": [..] (the profiler's recorded steps, timed the
                      same way), "profiled_mean_sec_per_iter" and "window_step_s": [..] (every step of
                      the profiler's window: wait, warm-up, recorded);
                      "profiled": {"mean_sec_per_iter", "step_s" (slowest rank per step), "activities",
                                   "definition"}}
    profile_window   {"wait", "warmup", "active", "first_step", "record_shapes", "with_stack", "activities",
                      "record_modules" (the recorded steps carry tracekit.module:<path> forward ranges)}
    profiler_cost    {"cpu_op_ns", "runtime_ns", "device", "activities", "record_shapes", "with_stack",
                      "ops_per_rep", "launches_per_rep", "reps", "per_rank": [{"rank", "cpu_op_ns",
                      "runtime_ns"}], "probe", "probes", "method"}: the profiler's cost per recorded event, measured on
                     the run's machine (tracekit.profile.calibrate); null in older manifests
    compile          {"per_rank": [{"rank", "enabled", "backend", "optimize_ddp", "fullgraph", "compile_mode",
                       "cudagraphs": {"mode", "captures", "graphs_recorded", "rerecords", "skips",
                                      "skip_reasons": [{"reason","count"}], "recorded_non_static_inputs"}
                                     (inductor only),
                       "graph_count", "frames": {"total","ok"},
                       "graph_breaks": {"total","model","ddp_wrapper",
                                        "reasons": [{"reason","detail","count","origin"}]},
                       "ddp_optimizer": {"intended_splits", "graphs": [{"graph","bucket_cap_bytes",
                                          "bucket_count","buckets": [{"index","bytes","params"}]}]}|None,
                       "recompiles": {"count", "events": [{"compile_id","function","reason"}]},
                       "skipped_frames": [{"function","file","line","fail_type","reason","detail"}],
                       "dynamo_skips": [{"function","file","line","reason","kind","count","fix"}],
                       "compile_time_s", "frame_compiles": [...], "compiles_after_warmup",
                       "compiled_autograd_captures", "inductor_ddp_buckets",
                       "unimplemented": [{"reason","count"}], "unavailable": {fact: reason}}]}
                     (only "rank","enabled","backend","optimize_ddp","fullgraph" when eager)
    buckets          {"ddp_optimizer": <rank 0's compile.ddp_optimizer.graphs> | None,
                      "reducer": {"bucket_cap_bytes", "bucket_sizes_bytes": [..],
                                  "rebuilt_bucket_sizes_bytes": [..]|None,
                                  "rebuilt_per_bucket_param_indices": str|None,
                                  "param_bytes": [bytes per parameter, DDP's order]|None, ...}|None,
                      "inductor_ddp_buckets": int|None,
                      "compiled_autograd": {"graphs": [{"graph", "nodes", "dynamo_graphs", "allreduce_calls",
                                            "fullgraph", "fullgraph_failed"?, "fullgraph_failed_at"?,
                                            "fullgraph_failed_masked_by"?}],
                                            "inductor_ddp_fusion": {"fuse_ddp_communication", "passes",
                                                                    "bucket_size_mb"}|None}|None,
                      "unavailable": {what: reason}}
    bucket_timing    {"method": str, "per_rank": [{"rank", "clock": "cuda_events"|"host",
                       "steps": [{"step", "step_us", "bwd_end_us", "comm_us", "exposed_us", "overlap_us",
                                  "overlap_pct", "buckets": [{"order", "index", "bytes", "ready_us",
                                  "start_us", "end_us", "comm_us", "exposed_us", "overlap_us"}]}],
                       "summary": {"steps", "step_us", "buckets_per_step", "comm_us_per_step",
                                   "exposed_us_per_step", "overlap_pct"}}
                      | {"rank", "unavailable": reason}]}
                     (times in µs from the step start; see tracekit.profile.bucket_events)
    traces           [{"rank", "file" (relative to the run folder), "bytes"}]
    graphs           (with --dynamo or --torchviz; see tracekit.profile.graph_capture)
                     {"rank": 0, "optimize_ddp", "reducer_params": [DDP's parameter names, its order],
                      "reducer_buckets": [[indices into reducer_params], bucket 0 first]|None,
                      "graphs": [{"index", "kind": "forward"|"compiled_autograd"|"backward", "compile_id",
                                  "nodes", "ops", "allreduces", "params": [names], "param_bytes",
                                  "file" (graphs/NNN_<kind>_<id>.fx.txt), "ddp_optimizer_submodule",
                                  "buckets": [reducer bucket ids], "cut": {"kind": "ddp_split"|
                                  "graph_break"|"end", "reason", "where"},
                                  "allreduce_params" (backward graphs: per allreduce, its parameter)}],
                      "autograd": {"dot", "svg", "nodes", "note"}|None (--torchviz),
                      "unavailable": {what: reason}}
    failure          (status "failed" only) {"summary", "culprits": [row], "victims": [row], "reference",
                      "reference_unix", "detected_unix", "flight_recorder", "ranks", "definition"}
                     (see tracekit.profile.diagnose)

A fact that could not be read is null, with the reason next to it
(``unavailable`` maps) -- readers must accept nulls.

The file is described by the msgspec Structs below (:class:`Manifest` at the
top). The writer (:func:`write_manifest`, called by ``tracekit profile`` and
``tracekit bench ddp --profile``) converts what it is given into a
:class:`Manifest` before encoding it, and the one reader (:func:`read_manifest`)
decodes into the same Structs, so writer and reader cannot disagree. Readers
ask the Manifest, never the raw JSON: :meth:`Manifest.compile_facts` is the one
rule for which rank's entry applies, :meth:`Manifest.hosts`,
:meth:`Manifest.step_time_s` and :meth:`Manifest.reducer` the others.

Reading is tolerant, because analysis works on bare traces too: a field whose
value has the wrong type (``"graph_count": "two"``) is dropped with one
:class:`ManifestWarning` naming the file and the field (``$.compile.per_rank[0].graph_count``),
and the rest is used; a file that is not JSON, or not an object, is ignored with
a warning. ``schema_version`` above :data:`SCHEMA_VERSION` warns that fields of
the newer format are ignored.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Any

import msgspec

MANIFEST_NAME = "run.json"
SCHEMA_VERSION = 1
TOP_LEVEL_KEYS = (
    "schema_version", "tool", "created_utc", "command_line", "status", "config", "run", "versions",
    "hardware", "timings", "profile_window", "compile", "buckets", "bucket_timing", "traces",
    "graphs", "failure", "profiler_cost",
)


class ManifestWarning(UserWarning):
    """A ``run.json`` (or part of it) could not be used; the analysis goes on without it."""


class _S(msgspec.Struct, kw_only=True, omit_defaults=False):
    """Base of the manifest Structs: every field optional (a fact that could not be read is null)."""


class Tool(_S):
    name: str = "tracekit"
    version: str | None = None


class RunInfo(_S):
    world_size: int | None = None
    device: str | None = None
    #: the workload kind (toy, transformer, torchvision, hf, factory): which shape options apply
    model_kind: str | None = None
    backend: str | None = None
    launcher: str | None = None
    notice: str | None = None
    examples_per_step_per_rank: int | None = None
    global_batch: int | None = None
    #: the DDP kwargs as applied, or FSDP's (free-form: depends on the parallelism)
    parallel_applied: dict[str, Any] | None = None
    #: TF32 in effect on rank 0: ``{"matmul": torch.backends.cuda.matmul.allow_tf32, "cudnn":
    #: torch.backends.cudnn.allow_tf32}`` (None where run.json does not record it)
    tf32: dict[str, bool] | None = None


class Versions(_S):
    tracekit: str | None = None
    python: str | None = None
    torch: str | None = None
    cuda: str | None = None
    nccl: str | None = None
    cudnn: int | str | None = None
    platform: str | None = None


class RankHost(_S):
    rank: int
    local_rank: int | None = None
    hostname: str | None = None
    pid: int | None = None
    device: str | None = None
    gpu_name: str | None = None
    #: CPU cores the rank's process could run on (its affinity mask; None in manifests that predate the field)
    cpus: int | None = None
    #: torch's intra-op threads in the rank (``torch.get_num_threads()``; None in manifests that predate the field)
    torch_threads: int | None = None
    #: gloo with --tp: OS thread id -> process group name (tracekit.profile.pg_probe)
    gloo_threads: dict[str, str] | None = None


class Hardware(_S):
    ranks: list[RankHost] = []
    topology: str | None = None
    topology_unavailable: str | None = None


class Percentiles(_S):
    p50: float | None = None
    p75: float | None = None
    p90: float | None = None
    p95: float | None = None


class StepTimes(_S):
    """Unprofiled step times of one rank (``timings.per_rank``) or of the run (``timings.overall``)."""

    rank: int | None = None
    steps: int | None = None
    sec_per_iter: Percentiles | None = None
    mean_sec_per_iter: float | None = None
    examples_per_step: float | None = None
    examples_per_sec: Percentiles | None = None
    step_s: list[float] = []
    definition: str | None = None
    #: the profiler's recorded steps, timed the same way (per rank)
    profiled_step_s: list[float] | None = None
    profiled_mean_sec_per_iter: float | None = None
    #: every step of the profiler's window, timed the same way: ``profile_window.wait`` steps with the profiler
    #: off, ``profile_window.warmup`` with CUPTI's activity tracing on and nothing recorded, then the recorded ones
    #: (per rank; None in manifests that predate the field)
    window_step_s: list[float] | None = None
    #: steps after the window profiled with the CPU recorded and CUPTI off (``--profile-cpu-only-steps``), timed
    #: the same way (per rank; None when not timed)
    cpu_only_step_s: list[float] | None = None


class ProfiledTimes(_S):
    """``timings.profiled``: the recorded steps, each as long as its slowest rank."""

    mean_sec_per_iter: float | None = None
    step_s: list[float] = []
    activities: str | None = None
    definition: str | None = None


class Timings(_S):
    method: str | None = None
    warmup_step_s: dict[str, list[float]] = {}
    per_rank: list[StepTimes] = []
    overall: StepTimes | None = None
    profiled: ProfiledTimes | None = None


class ProfileWindow(_S):
    wait: int | None = None
    warmup: int | None = None
    active: int | None = None
    first_step: int | None = None
    record_shapes: bool | None = None
    with_stack: bool | None = None
    activities: str | None = None
    record_modules: bool | None = None


class BreakReason(_S):
    reason: str | None = None
    detail: str | None = None
    count: int | None = None
    origin: str | None = None


class GraphBreaks(_S):
    total: int | None = None
    model: int | None = None
    ddp_wrapper: int | None = None
    reasons: list[BreakReason] = []


class DDPOBucket(_S):
    index: int | None = None
    bytes: int | None = None
    params: list[str] = []


class DDPOGraph(_S):
    graph: int | None = None
    bucket_cap_bytes: int | None = None
    bucket_count: int | None = None
    buckets: list[DDPOBucket] = []


class DDPOptimizer(_S):
    intended_splits: int | None = None
    graphs: list[DDPOGraph] | None = None


class Recompiles(_S):
    count: int | None = None
    events: list[dict[str, Any]] = []


class SkippedFrame(_S):
    function: str | None = None
    file: str | None = None
    line: int | None = None
    fail_type: str | None = None
    reason: str | None = None
    detail: str | None = None


class DynamoSkip(_S):
    """A frame dynamo ran eagerly, in its own words (:mod:`tracekit.profile.dynamo_skips`)."""

    function: str | None = None
    file: str | None = None
    line: int | None = None
    reason: str | None = None
    kind: str | None = None
    count: int | None = None
    fix: str | None = None


class CompileFacts(_S):
    """One rank's ``compile.per_rank`` entry."""

    rank: int | None = None
    enabled: bool = False
    backend: str | None = None
    #: a DDPOptimizer mode, or None / False when not compiling a DDP model
    optimize_ddp: str | bool | None = None
    fullgraph: bool | None = None
    #: torch.compile's mode (None: default)
    compile_mode: str | None = None
    #: inductor's CUDA graphs (tracekit.profile.cudagraph_facts): mode, captures, graphs_recorded, rerecords,
    #: skips, skip_reasons [{"reason", "count"}], recorded_non_static_inputs
    cudagraphs: dict[str, Any] | None = None
    graph_count: int | None = None
    frames: dict[str, int | None] | None = None
    graph_breaks: GraphBreaks | None = None
    ddp_optimizer: DDPOptimizer | None = None
    recompiles: Recompiles | None = None
    skipped_frames: list[SkippedFrame] | None = None
    #: dynamo's log of frames it skipped or would not convert (module forwards and WON'T CONVERT only)
    dynamo_skips: list[DynamoSkip] | None = None
    compile_time_s: float | None = None
    frame_compiles: list[dict[str, Any]] | None = None
    compiles_after_warmup: int | None = None
    compiled_autograd_captures: int | None = None
    inductor_ddp_buckets: int | None = None
    unimplemented: list[dict[str, Any]] | None = None
    unavailable: dict[str, str] = {}


class Compile(_S):
    per_rank: list[CompileFacts] = []


class Reducer(_S):
    bucket_cap_bytes: int | None = None
    bucket_sizes_bytes: list[int] | None = None
    rebuilt_bucket_sizes_bytes: list[int] | None = None
    rebuilt_per_bucket_param_indices: str | None = None
    has_rebuilt_buckets: int | bool | None = None
    gradient_as_bucket_view: int | bool | None = None
    python_reducer: bool | None = None
    #: bytes of each reduced parameter in DDP's order (indices of ``rebuilt_per_bucket_param_indices``)
    param_bytes: list[int] | None = None


class CompiledAutogradGraph(_S):
    """One compiled-autograd capture (python-reducer runs, see tracekit.profile.compiled_autograd)."""

    graph: int | None = None
    nodes: int | None = None
    fullgraph: bool | None = None
    dynamo_graphs: int | None = None
    allreduce_calls: int | None = None
    #: why the capture's first call under fullgraph failed (it was then retried without fullgraph)
    fullgraph_failed: str | None = None
    #: the innermost frames dynamo was tracing when it gave up (``file:line in function``)
    fullgraph_failed_at: list[str] | None = None
    #: the error that replaced the real one (``fullgraph_failed``) on its way out, when one did
    fullgraph_failed_masked_by: str | None = None


class CompiledAutograd(_S):
    graphs: list[CompiledAutogradGraph] = []
    #: inductor's DDP-fusion settings as applied (free-form: inductor config names)
    inductor_ddp_fusion: dict[str, Any] | None = None


class Buckets(_S):
    ddp_optimizer: list[DDPOGraph] | None = None
    reducer: Reducer | None = None
    inductor_ddp_buckets: int | None = None
    compiled_autograd: CompiledAutograd | None = None
    unavailable: dict[str, str] = {}


class RankBucketTiming(_S):
    """One rank's ``bucket_timing.per_rank`` entry (:meth:`tracekit.profile.bucket_events.BucketTimer.results`)."""

    rank: int
    clock: str | None = None
    #: per step: ``step``, ``step_us``, ``bwd_end_us``, ``buckets`` and the derived figures (free-form)
    steps: list[dict[str, Any]] = []
    #: means over the steps (``steps``, ``buckets_per_step``, ``comm_us_per_step``, ``exposed_us_per_step``,
    #: ``overlap_pct``, ...); null where a mark was missing
    summary: dict[str, float | None] = {}
    unavailable: str | None = None


class BucketTiming(_S):
    """``bucket_timing`` (see the module doc and tracekit.profile.bucket_events)."""

    method: str | None = None
    per_rank: list[RankBucketTiming] = []


class TraceFile(_S):
    rank: int | None = None
    file: str | None = None
    bytes: int | None = None


class ProfilerCost(_S):
    """``profiler_cost``: what the profiler costs per recorded event on the machine of the run.

    Measured by :mod:`tracekit.profile.calibrate` in each rank after the timed steps: a loop
    of small training steps (on the GPU in CUDA runs, under DDP when the run uses it) timed with
    the profiler off and on, with the run's profiler settings. CUDA runs whose calibration records ``ddp``
    (not null) record one figure per event (``cpu_op_ns`` = ``runtime_ns``). The replay (``tracekit whatif``) subtracts these costs
    to predict the step the profiler did not disturb.
    """

    #: wall ns the profiler adds per recorded CPU operator (``cpu_op`` / ``user_annotation`` range)
    cpu_op_ns: float | None = None
    #: wall ns it adds per recorded CUDA runtime/driver call (CUPTI callback + activity record), beyond the op's
    runtime_ns: float | None = None
    device: str | None = None
    activities: str | None = None
    record_shapes: bool | None = None
    with_stack: bool | None = None
    #: how many events the calibration loops recorded (per repetition) and how often they ran
    ops_per_rep: int | None = None
    launches_per_rep: int | None = None
    reps: int | None = None
    #: the calibration step ran under DDP (as the run did); None in manifests before it was recorded
    ddp: bool | None = None
    #: per-rank figures: [{"rank", "cpu_op_ns", "runtime_ns"}]
    per_rank: list[dict[str, Any]] = []
    #: which probe gave the figures above: "eager", or the run's ``torch.compile`` backend (compiled CUDA runs
    #: time a compiled probe too); None in manifests that predate the field
    probe: str | None = None
    #: each probe's figures (medians over ranks): {label: {"cpu_op_ns", "runtime_ns", "ops_per_rep",
    #: "launches_per_rep"}}; empty in manifests that predate the field
    probes: dict[str, dict[str, Any]] = {}
    method: str | None = None


#: what one recorded event can cost the profiler on a CUDA run, ns (lowest, highest): the 125 calibrations of the
#: committed CUDA runs measured 808 ns to 12.3 µs per event (operators and runtime calls, H100 and H200 hosts), and
#: CUPTI's own cost per CUDA call is 2.6-15 µs (docs/whatif.md, "Profiler cost"). A figure outside it is a failed
#: measurement (one H100 run measured 9 ns): :func:`implausible_profiler_cost`
PROFILER_COST_RANGE_NS = (500.0, 100_000.0)


def implausible_profiler_cost(figures: Any, device: str | None) -> str | None:
    """Why the calibrated figures (a :class:`ProfilerCost`, or a mapping with ``cpu_op_ns``/``runtime_ns``) of a
    run on ``device`` cannot be what the profiler costs, or None when they can (or are not checked: CPU runs,
    whose calibration runs on a shared CPU and has no documented range)."""
    if figures is None or device in (None, "cpu"):
        return None
    get = figures.get if isinstance(figures, dict) else (lambda k: getattr(figures, k, None))
    lo, hi = PROFILER_COST_RANGE_NS
    for key, what in (("cpu_op_ns", "per CPU operator"), ("runtime_ns", "per runtime call")):
        v = get(key)
        if isinstance(v, (int, float)) and not lo <= v <= hi:
            return (f"the calibration measured {v:.0f} ns {what}, outside what the profiler can cost per event on "
                    f"a CUDA run ({lo:.0f} ns to {hi / 1000:.0f} µs)")
    return None


class GraphCut(_S):
    kind: str | None = None
    reason: str | None = None
    where: str | None = None


class CompiledGraph(_S):
    """One graph ``torch.compile`` compiled on rank 0 (tracekit.profile.graph_capture)."""

    index: int | None = None
    kind: str | None = None
    compile_id: str | None = None
    nodes: int | None = None
    ops: int | None = None
    allreduces: int | None = None
    params: list[str] = []
    param_bytes: int | None = None
    file: str | None = None
    ddp_optimizer_submodule: bool | None = None
    buckets: list[int] | None = None
    cut: GraphCut | None = None
    #: a compiled-autograd ``backward`` graph: per allreduce (graph order) the parameter it reduces
    allreduce_params: list[str | None] | None = None


class AutogradGraph(_S):
    """``--torchviz``: the autograd graph files (tracekit.profile.autograd_viz)."""

    dot: str | None = None
    svg: str | None = None
    nodes: int | None = None
    note: str | None = None


class Graphs(_S):
    """``graphs``: rank 0's compiled graphs, DDP's bucket layout, the autograd drawing."""

    rank: int | None = None
    optimize_ddp: str | None = None
    reducer_params: list[str] | None = None
    reducer_buckets: list[list[int]] | None = None
    graphs: list[CompiledGraph] = []
    autograd: AutogradGraph | None = None
    unavailable: dict[str, str] = {}


class Manifest(_S):
    """``run.json`` (see the module doc for every key)."""

    schema_version: int = SCHEMA_VERSION
    tool: Tool | None = None
    created_utc: str | None = None
    command_line: list[str] = []
    status: str | None = None
    #: the resolved ProfileConfig by field name (tracekit.profile.config validates and types it)
    config: dict[str, Any] = {}
    run: RunInfo | None = None
    versions: Versions | None = None
    hardware: Hardware | None = None
    timings: Timings | None = None
    profile_window: ProfileWindow | None = None
    compile: Compile | None = None
    buckets: Buckets | None = None
    bucket_timing: BucketTiming | None = None
    traces: list[TraceFile] = []
    graphs: Graphs | None = None
    #: ``tracekit bench ddp --profile`` points: ``{"ddp", "world_size"}``
    bench_point: dict[str, Any] | None = None
    #: the profiler's own cost per event on this machine (:class:`ProfilerCost`); null in manifests that predate it
    profiler_cost: ProfilerCost | None = None
    #: status "failed": which rank stopped first and who failed because of it (tracekit.profile.diagnose.Failure)
    failure: dict[str, Any] | None = None

    def compile_facts(self, rank: int) -> CompileFacts | None:
        """The ``compile.per_rank`` entry of ``rank``: the entry whose ``rank`` is ``rank``; an entry
        without a ``rank`` counts as the rank of its position. None when there is none."""
        per = self.compile.per_rank if self.compile else []
        for i, c in enumerate(per):
            if (c.rank if c.rank is not None else i) == rank:
                return c
        return None

    def first_compile_facts(self) -> CompileFacts | None:
        """The entry of the lowest rank present (what run summaries show as "rank 0")."""
        per = self.compile.per_rank if self.compile else []
        return min(per, key=lambda c: c.rank if c.rank is not None else 0) if per else None

    def hosts(self) -> dict[int, str]:
        """rank -> hostname (``hardware.ranks``)."""
        return {h.rank: str(h.hostname) for h in (self.hardware.ranks if self.hardware else [])}

    def step_time_s(self, q: str) -> float | None:
        """Unprofiled step time percentile ``q`` (p50/p75/p90/p95) of the run (``timings.overall``), seconds."""
        o = self.timings.overall if self.timings else None
        return getattr(o.sec_per_iter, q, None) if o and o.sec_per_iter else None

    def reducer(self) -> Reducer | None:
        """DDP's C++ reducer buckets (``buckets.reducer``)."""
        return self.buckets.reducer if self.buckets else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready builtins (what ``--format json`` shows as ``meta.manifest``)."""
        return msgspec.to_builtins(self)


_PATH = re.compile(r"at `\$((?:\.[^.`\[]+|\[\d+\])*)`$")


def decode_manifest(data: Any, source: str | os.PathLike[str]) -> Manifest | None:
    """``data`` (decoded JSON) as a :class:`Manifest`; fields of the wrong type are dropped with a
    :class:`ManifestWarning` naming ``source`` and the field. None (with a warning) when ``data`` is
    not a JSON object."""
    if not isinstance(data, dict):
        warnings.warn(f"{source}: ignoring manifest that is not a JSON object", ManifestWarning, stacklevel=3)
        return None
    version = data.get("schema_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        warnings.warn(f"{source}: schema_version {version} is newer than this tracekit reads ({SCHEMA_VERSION}); "
                      "fields it does not know are ignored", ManifestWarning, stacklevel=3)
    for _ in range(200):  # each round drops one bad field
        try:
            return msgspec.convert(data, Manifest)
        except msgspec.ValidationError as e:
            m = _PATH.search(str(e))
            if not m or not m.group(1):
                warnings.warn(f"{source}: ignoring manifest ({e})", ManifestWarning, stacklevel=3)
                return None
            field = "$" + m.group(1)
            warnings.warn(f"{source}: ignoring manifest field {field}: {str(e).split(' - at ')[0]}",
                          ManifestWarning, stacklevel=3)
            data = _without(data, m.group(1))
    return None


def _without(data: Any, path: str) -> Any:
    """A copy of ``data`` with the element at ``path`` (``.a[0].b``) removed."""
    steps = [int(p[1:-1]) if p.startswith("[") else p[1:] for p in re.findall(r"\.[^.\[]+|\[\d+\]", path)]

    def drop(node: Any, rest: list[Any]) -> Any:
        key, tail = rest[0], rest[1:]
        if isinstance(node, dict):
            out = dict(node)
            if tail:
                out[key] = drop(node[key], tail)
            else:
                out.pop(key, None)
            return out
        out_l = list(node)
        if tail:
            out_l[key] = drop(node[key], tail)
        else:
            del out_l[key]
        return out_l

    return drop(data, steps)


def read_manifest(run_dir: str | os.PathLike[str]) -> Manifest | None:
    """The manifest of a run folder (or of the ``run.json`` path itself), or None.

    None when there is no file. A file that cannot be read or decoded, or parts of it
    with the wrong types, give a :class:`ManifestWarning` naming the file (see the module
    doc) and never an exception: analyze works on bare traces too.
    """
    p = Path(run_dir)
    if p.is_dir():
        p = p / MANIFEST_NAME
    if not p.is_file():
        return None
    try:
        data = msgspec.json.decode(p.read_bytes())
    except (OSError, msgspec.DecodeError) as e:
        warnings.warn(f"{p}: ignoring unreadable manifest ({e})", ManifestWarning, stacklevel=2)
        return None
    return decode_manifest(data, p)


def _undeclared(src: Any, typed: Any, path: str = "$") -> list[str]:
    """Paths of dict keys in ``src`` that the typed form ``typed`` (as builtins) does not have."""
    if isinstance(src, dict) and isinstance(typed, dict):
        return [p for k, v in src.items() for p in ([f"{path}.{k}"] if k not in typed
                                                    else _undeclared(v, typed[k], f"{path}.{k}"))]
    if isinstance(src, list) and isinstance(typed, list):
        return [p for i, (x, y) in enumerate(zip(src, typed)) for p in _undeclared(x, y, f"{path}[{i}]")]
    return []


def _plain(obj: Any) -> Any:
    """Values of str/int/float subclasses (torch's ``TorchVersion``, a ``Path``) as their plain form."""
    for t in (str, int, float):
        if isinstance(obj, t):
            return t(obj)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"run.json cannot hold a {type(obj).__name__}")


def write_manifest(run_dir: str | os.PathLike[str], manifest: Manifest | dict[str, Any]) -> Path:
    """Write ``run.json`` atomically (temporary file in the same folder, then rename).

    A dict is converted into a :class:`Manifest` first, so every file matches the reader's types:
    ``msgspec.ValidationError`` when the writer produced a value of the wrong type, ``ValueError``
    when it produced a key the Structs do not declare (it would be lost): both writer bugs.
    """
    m = manifest if isinstance(manifest, Manifest) else msgspec.convert(manifest, Manifest)
    if not isinstance(manifest, Manifest):
        lost = _undeclared(manifest, msgspec.to_builtins(m, enc_hook=_plain))
        if lost:
            raise ValueError(f"run.json keys not declared in tracekit.traces.manifest: {', '.join(lost[:5])}")
    final = Path(run_dir) / MANIFEST_NAME
    tmp = final.with_name(f".{MANIFEST_NAME}.tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(msgspec.json.format(msgspec.json.encode(m, enc_hook=_plain), indent=1))
        fh.write(b"\n")
    os.replace(tmp, final)
    return final
