"""The validated configuration of one ``tracekit profile`` run.

:class:`ProfileConfig` is plain data (no torch import): the CLI builds it, the
launcher validates and resolves it, and it travels to every rank as JSON.
Bad values and bad combinations raise :class:`tracekit.errors.ConfigError` in
``__post_init__``, before anything is launched.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from tracekit.errors import ConfigError

DYNAMO_BACKENDS = ("none", "eager", "aot_eager", "inductor")
OPTIMIZE_DDP_MODES = (
    "ddp_optimizer",
    "no_optimization",
    "python_reducer",
    "python_reducer_without_compiled_forward",
)
#: torch.compile's ``mode`` (inductor): ``reduce-overhead`` and ``max-autotune`` capture CUDA graphs
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
PARALLELISMS = ("ddp", "fsdp", "replicate")
#: data-parallel wrappers built on DDP (its reducer, buckets, comm hooks, python reducer)
DDP_LIKE = ("ddp", "replicate")
#: inductor's DDP communication fusion: concat = fuse_ddp_with_concat_op, coalesced = fuse_ddp_with_coalesced_op
INDUCTOR_DDP_FUSIONS = ("concat", "coalesced", "none")
DEVICES = ("auto", "cuda", "cpu")
COMM_HOOKS = ("none", "bf16", "fp16")
AMP_DTYPES = ("none", "bf16", "fp16")
OPTIMIZERS = ("sgd", "adamw")
BUILTIN_MODELS = ("toy", "transformer")
#: what the built-in models do at ``--graph-break-at``: ``explicit`` calls ``torch._dynamo.graph_break()``;
#: ``item`` checks the activations with ``.item()`` (a data-dependent branch), which breaks the graph AND makes
#: the host wait for the GPU (a blocking device-to-host copy) before it launches the next graph
GRAPH_BREAK_KINDS = ("explicit", "item")
PROFILE_ACTIVITIES = ("cpu,cuda", "cuda")
#: width, depth of the built-in models when not given: the toy MLP is 8 x Linear(2048, 2048) = 134 MB of
#: fp32 gradients, six DDP buckets at the default 25 MiB cap (a 1 MB model fits one bucket and shows nothing)
MODEL_SHAPE_DEFAULTS = {"toy": (2048, 8), "transformer": (256, 4)}
#: per-rank batch when not given: large enough on a GPU that the toy MLP is compute-bound, small on CPU
TOY_CUDA_BATCH = 4096
DEFAULT_BATCH = 32


def default_batch_size(model: str, device: str) -> int | None:
    """``--batch-size`` when not given (None while the device is still ``auto``)."""
    if device == "auto":
        return None
    return TOY_CUDA_BATCH if model == "toy" and device == "cuda" else DEFAULT_BATCH


def _choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"--{name.replace('_', '-')} must be one of {', '.join(choices)} (got {value!r})")


@dataclass
class ProfileConfig:
    """Everything that decides what a profile run does.

    Step phases, in order: ``warmup`` steps (compilation happens here), ``steps``
    timed steps with the profiler off, ``bucket_timing_steps`` steps with DDP bucket
    marks (the profiler off), then the profiler window of
    ``profile_wait + profile_warmup + profile_steps`` steps of which the last
    ``profile_steps`` are recorded.
    """

    # launch
    nproc: int | None = None  # None: every GPU on cuda, 2 on cpu
    device: str = "auto"
    out_dir: str | None = None  # None: traces/<timestamp>-<model>-<mode>
    timeout_s: float = 300.0  # process-group init and every collective
    # model
    model: str = "toy"
    width: int | None = None  # None: MODEL_SHAPE_DEFAULTS (toy 2048 x 8, transformer 256 x 4)
    depth: int | None = None
    seq_len: int = 128
    heads: int = 4
    graph_break_at: int | None = None  # insert torch._dynamo.graph_break() after this block
    graph_break_kind: str = "explicit"  # GRAPH_BREAK_KINDS: the break at graph_break_at, or an .item() check there
    batch_size: int | None = None  # None: default_batch_size once the device is known
    seed: int = 0
    # parallelism
    parallel: str = "ddp"  # ddp | fsdp | replicate (torch.distributed._composable.replicate)
    tp: int = 1  # tensor-parallel degree: mesh (dp, tp) with dp = world / tp
    bucket_cap_mb: float | None = None  # None: torch's default (25 MiB)
    first_bucket_cap_mb: float | None = None
    static_graph: bool = False
    gradient_as_bucket_view: bool = False
    comm_hook: str = "none"
    grad_accum: int = 1
    activation_checkpointing: bool = False
    amp: str = "none"
    optimizer: str = "sgd"
    lr: float = 1e-3
    # compile
    dynamo: str = "none"
    optimize_ddp: str | None = None  # None: ddp_optimizer when compiling a DDP model
    fullgraph: bool = False
    compile_mode: str | None = None  # None: torch.compile's default mode
    inductor_ddp_fusion: str | None = None  # None: torch's inductor config as it is
    inductor_ddp_bucket_mb: int | None = None  # torch._inductor.config._fuse_ddp_bucket_size
    # profiling
    warmup: int = 3
    steps: int = 10
    profile_wait: int = 1
    # two: the first warm-up step carries CUPTI's start-up, the second times CUPTI's cost alone (analyses/distortion)
    profile_warmup: int = 2
    profile_steps: int = 3
    # after the window: steps profiled with the CPU recorded and CUPTI off, timed, no trace (run.json
    # cpu_only_step_s; the profiler's cost split by state, docs/whatif-evidence.md); 0: none
    profile_cpu_only_steps: int = 0
    record_shapes: bool = False
    with_stack: bool = False
    record_modules: bool = True  # forward ranges tracekit.module:<path> per module (eager forward only)
    profile_activities: str = "cpu,cuda"
    torchviz: bool = False  # rank 0 draws one step's autograd graph (tracekit.profile.autograd_viz)
    bucket_timing: bool = True  # per-bucket CUDA-event timing in steps after the timed ones (bucket_timing_steps)
    calibrate_profiler: bool = True  # measure the profiler's cost per event (run.json profiler_cost, for whatif)
    # provenance and test hooks
    command_line: list[str] = field(default_factory=list)
    fail_rank: int | None = None  # debug: this rank raises (see fail_at)
    fail_at: str = "end"  # "warmup": in the first warm-up step; "end": after writing its trace
    # set by the launcher, not by options
    launcher: str | None = None  # elastic | torchrun | slurm
    device_notice: str | None = None

    def __post_init__(self) -> None:
        _choice("device", self.device, DEVICES)
        _choice("profile_activities", self.profile_activities, PROFILE_ACTIVITIES)
        if self.profile_activities == "cuda" and self.device == "cpu":
            raise ConfigError("--profile-activities cuda needs a GPU run (--device cuda)")
        shape = MODEL_SHAPE_DEFAULTS.get(self.model, MODEL_SHAPE_DEFAULTS["transformer"])
        if self.width is None:
            self.width = shape[0]
        if self.depth is None:
            self.depth = shape[1]
        if self.batch_size is None:
            self.batch_size = default_batch_size(self.model, self.device)
        _choice("parallel", self.parallel, PARALLELISMS)
        _choice("dynamo", self.dynamo, DYNAMO_BACKENDS)
        _choice("comm_hook", self.comm_hook, COMM_HOOKS)
        _choice("amp", self.amp, AMP_DTYPES)
        _choice("optimizer", self.optimizer, OPTIMIZERS)
        if self.fail_at not in ("warmup", "end"):
            raise ConfigError("fail_at must be 'warmup' or 'end'")
        if self.optimize_ddp is not None:
            _choice("optimize_ddp", self.optimize_ddp, OPTIMIZE_DDP_MODES)
        if self.inductor_ddp_fusion is not None:
            _choice("inductor_ddp_fusion", self.inductor_ddp_fusion, INDUCTOR_DDP_FUSIONS)
        for name in ("width", "depth", "seq_len", "heads", "batch_size", "grad_accum",
                     "warmup", "steps", "profile_steps", "tp"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(self, name)})")
        for name in ("profile_wait", "profile_warmup", "profile_cpu_only_steps"):
            if getattr(self, name) < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 0")
        if self.nproc is not None and self.nproc < 1:
            raise ConfigError(f"--nproc must be at least 1 (got {self.nproc})")
        if self.timeout_s <= 0:
            raise ConfigError("--timeout must be positive")
        if self.model == "transformer" and self.width % self.heads:
            raise ConfigError(f"--width {self.width} must be divisible by --heads {self.heads}")
        if self.graph_break_at is not None and not 0 <= self.graph_break_at < self.depth - 1:
            raise ConfigError(f"--graph-break-at must be in [0, depth-1) so layers follow the break (depth={self.depth})")
        if self.graph_break_at is not None and self.model not in BUILTIN_MODELS:
            raise ConfigError("--graph-break-at works with the built-in models (toy, transformer) only")
        _choice("graph_break_kind", self.graph_break_kind, GRAPH_BREAK_KINDS)
        if self.graph_break_kind != "explicit" and self.graph_break_at is None:
            raise ConfigError(f"--graph-break-kind {self.graph_break_kind} needs --graph-break-at (where the break goes)")
        self._check_parallel()
        self._check_tp()
        self._check_compile()

    def _check_parallel(self) -> None:
        if self.parallel == "fsdp":
            ddp_only = {
                "--optimize-ddp": self.optimize_ddp is not None,
                "--bucket-cap-mb": self.bucket_cap_mb is not None,
                "--first-bucket-cap-mb": self.first_bucket_cap_mb is not None,
                "--static-graph": self.static_graph,
                "--gradient-as-bucket-view": self.gradient_as_bucket_view,
                "--comm-hook": self.comm_hook != "none",
            }
            bad = [k for k, v in ddp_only.items() if v]
            if bad:
                raise ConfigError(f"{', '.join(bad)} {'applies' if len(bad) == 1 else 'apply'} "
                                  "only to --ddp/--replicate, not --fsdp")
        elif self.activation_checkpointing and self.parallel != "replicate":
            raise ConfigError("--activation-checkpointing is only supported with --fsdp or --replicate")
        if self.bucket_cap_mb is not None and self.bucket_cap_mb <= 0:
            raise ConfigError("--bucket-cap-mb must be positive")
        if self.first_bucket_cap_mb is not None:
            if self.first_bucket_cap_mb <= 0:
                raise ConfigError("--first-bucket-cap-mb must be positive")
            if self.bucket_cap_mb is None:
                raise ConfigError("--first-bucket-cap-mb needs --bucket-cap-mb")

    def _check_tp(self) -> None:
        if self.tp == 1:
            return
        if self.parallel == "ddp":
            raise ConfigError("--tp needs --replicate or --fsdp for the data-parallel dimension "
                              "(DistributedDataParallel does not take a device mesh here)")
        if self.model not in BUILTIN_MODELS:
            raise ConfigError("--tp works with the built-in models (toy, transformer) only")
        if self.model == "toy" and self.depth < 2:
            raise ConfigError("--tp with --model toy needs --depth >= 2 (a colwise/rowwise pair)")
        if self.width % self.tp or (self.model == "transformer" and self.heads % self.tp):
            raise ConfigError(f"--tp {self.tp} must divide --width {self.width}"
                              + (f" and --heads {self.heads}" if self.model == "transformer" else ""))
        if self.nproc is not None and self.nproc % self.tp:
            raise ConfigError(f"--tp {self.tp} must divide the number of ranks ({self.nproc})")
        if self.graph_break_at is not None:
            raise ConfigError("--graph-break-at cannot be combined with --tp")

    def _check_compile(self) -> None:
        if self.inductor_ddp_fusion is not None or self.inductor_ddp_bucket_mb is not None:
            if self.dynamo != "inductor" or not (self.resolved_optimize_ddp or "").startswith("python_reducer"):
                raise ConfigError("--inductor-ddp-fusion/--inductor-ddp-bucket-mb need --dynamo inductor and "
                                  "--optimize-ddp python_reducer[_without_compiled_forward] (inductor fuses the "
                                  "allreduces of the compiled-autograd backward)")
            if self.inductor_ddp_bucket_mb is not None and self.inductor_ddp_bucket_mb <= 0:
                raise ConfigError("--inductor-ddp-bucket-mb must be positive")
            if self.inductor_ddp_fusion == "none" and self.inductor_ddp_bucket_mb is not None:
                raise ConfigError("--inductor-ddp-bucket-mb has no effect with --inductor-ddp-fusion none")
        if self.compile_mode is not None:
            _choice("compile_mode", self.compile_mode, COMPILE_MODES)
            if self.dynamo != "inductor":
                raise ConfigError("--compile-mode needs --dynamo inductor (torch.compile's mode is inductor's)")
        if self.dynamo == "none":
            if self.optimize_ddp is not None:
                raise ConfigError("--optimize-ddp needs --dynamo (it only affects compiled DDP)")
            if self.fullgraph:
                raise ConfigError("--fullgraph needs --dynamo")
            return
        mode = self.resolved_optimize_ddp
        if mode == "ddp_optimizer" and self.bucket_cap_mb is not None and self.bucket_cap_mb < 1:
            # DDPOptimizer asserts its 1 MiB first bucket is <= the bucket cap.
            raise ConfigError("--optimize-ddp ddp_optimizer needs --bucket-cap-mb >= 1")
        if mode and mode.startswith("python_reducer"):
            if self.tp > 1:
                # torch's own test (test_replicate_with_compiler.py, test_ddp_tp) expects compiled autograd
                # to fail on DTensor gradients ("Expected ProxyTensor, got DTensor").
                raise ConfigError("--optimize-ddp python_reducer cannot be combined with --tp "
                                  "(compiled autograd does not trace DTensor gradients)")
            if self.comm_hook != "none":
                raise ConfigError("--comm-hook is not supported by DDP's python reducer")
            if self.static_graph:
                raise ConfigError("--static-graph is not supported with the python reducer")
            if self.first_bucket_cap_mb is not None:
                raise ConfigError("--first-bucket-cap-mb is not supported with the python reducer")
            if self.grad_accum > 1:
                raise ConfigError("--grad-accum (no_sync) is not supported with the python reducer")
        if self.fullgraph and mode == "ddp_optimizer":
            # DDPOptimizer splits the graph on purpose, which fullgraph forbids.
            raise ConfigError("--fullgraph cannot be combined with --optimize-ddp ddp_optimizer")

    @property
    def resolved_optimize_ddp(self) -> str | None:
        """The DDP optimization mode in effect (None when not compiling DDP)."""
        if self.dynamo == "none" or self.parallel not in DDP_LIKE:
            return None
        return self.optimize_ddp or "ddp_optimizer"

    @property
    def bucket_timing_steps(self) -> int:
        """Steps with bucket marks, run after the timed steps and before the profiler window
        (``min(steps, 10)``; 0 without bucket timing): the marks' cost never reaches the step time."""
        return min(self.steps, 10) if self.bucket_timing else 0

    @property
    def profile_cycle_steps(self) -> int:
        return self.profile_wait + self.profile_warmup + self.profile_steps

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["optimize_ddp_resolved"] = self.resolved_optimize_ddp
        return d

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ProfileConfig:
        return cls(**json.loads(text))

    def mode_label(self) -> str:
        """Short name for folder names: ``ddp-eager``, ``ddp-inductor-ddp_optimizer``."""
        parts = [self.parallel if self.tp == 1 else f"{self.parallel}-tp{self.tp}",
                 "eager" if self.dynamo == "none" else self.dynamo]
        if self.resolved_optimize_ddp:
            parts.append(self.resolved_optimize_ddp)
        if self.inductor_ddp_fusion:
            parts.append(f"fuse_{self.inductor_ddp_fusion}")
        if self.compile_mode not in (None, "default"):
            parts.append(self.compile_mode)
        return "-".join(parts)

    @property
    def uses_python_reducer(self) -> bool:
        """Backward runs under compiled autograd with DDP's python reducer."""
        return (self.resolved_optimize_ddp or "").startswith("python_reducer")


def default_out_dir(config: ProfileConfig) -> str:
    """``traces/<YYYYmmdd-HHMMSS>-<model>-<mode>``: the run folder when ``--out`` is not given."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    model = re.sub(r"[^A-Za-z0-9_.-]+", "_", config.model)
    return os.path.join("traces", f"{stamp}-{model}-{config.mode_label()}")
