"""The validated configuration of one ``tracekit profile`` run.

:class:`ProfileConfig` is plain data (no torch import): the CLI builds it, the
launcher validates and resolves it, and it travels to every rank as JSON.
Bad values and bad combinations raise :class:`tracekit.errors.ConfigError` in
``__post_init__``, before anything is launched.
"""

from __future__ import annotations

import dataclasses
import json
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
PARALLELISMS = ("ddp", "fsdp")
DEVICES = ("auto", "cuda", "cpu")
COMM_HOOKS = ("none", "bf16", "fp16")
AMP_DTYPES = ("none", "bf16", "fp16")
OPTIMIZERS = ("sgd", "adamw")
BUILTIN_MODELS = ("toy", "transformer")


def _choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"--{name.replace('_', '-')} must be one of {', '.join(choices)} (got {value!r})")


@dataclass
class ProfileConfig:
    """Everything that decides what a profile run does.

    Step phases, in order: ``warmup`` steps (compilation happens here), ``steps``
    timed steps with the profiler off, then the profiler window of
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
    width: int = 256
    depth: int = 4
    seq_len: int = 128
    heads: int = 4
    graph_break_at: int | None = None  # insert torch._dynamo.graph_break() after this block
    batch_size: int = 32
    seed: int = 0
    # parallelism
    parallel: str = "ddp"
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
    # profiling
    warmup: int = 3
    steps: int = 10
    profile_wait: int = 1
    profile_warmup: int = 1
    profile_steps: int = 3
    record_shapes: bool = False
    with_stack: bool = False
    # provenance and test hooks
    command_line: list[str] = field(default_factory=list)
    fail_rank: int | None = None  # debug: this rank raises (see fail_at)
    fail_at: str = "end"  # "warmup": in the first warm-up step; "end": after writing its trace
    # set by the launcher, not by options
    launcher: str | None = None  # elastic | torchrun | slurm
    device_notice: str | None = None

    def __post_init__(self) -> None:
        _choice("device", self.device, DEVICES)
        _choice("parallel", self.parallel, PARALLELISMS)
        _choice("dynamo", self.dynamo, DYNAMO_BACKENDS)
        _choice("comm_hook", self.comm_hook, COMM_HOOKS)
        _choice("amp", self.amp, AMP_DTYPES)
        _choice("optimizer", self.optimizer, OPTIMIZERS)
        if self.fail_at not in ("warmup", "end"):
            raise ConfigError("fail_at must be 'warmup' or 'end'")
        if self.optimize_ddp is not None:
            _choice("optimize_ddp", self.optimize_ddp, OPTIMIZE_DDP_MODES)
        for name in ("width", "depth", "seq_len", "heads", "batch_size", "grad_accum",
                     "warmup", "steps", "profile_steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(self, name)})")
        for name in ("profile_wait", "profile_warmup"):
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
        self._check_parallel()
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
                raise ConfigError(f"{', '.join(bad)} {'applies' if len(bad) == 1 else 'apply'} only to --ddp, not --fsdp")
        elif self.activation_checkpointing:
            raise ConfigError("--activation-checkpointing is only supported with --fsdp")
        if self.bucket_cap_mb is not None and self.bucket_cap_mb <= 0:
            raise ConfigError("--bucket-cap-mb must be positive")
        if self.first_bucket_cap_mb is not None:
            if self.first_bucket_cap_mb <= 0:
                raise ConfigError("--first-bucket-cap-mb must be positive")
            if self.bucket_cap_mb is None:
                raise ConfigError("--first-bucket-cap-mb needs --bucket-cap-mb")

    def _check_compile(self) -> None:
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
        if self.dynamo == "none" or self.parallel != "ddp":
            return None
        return self.optimize_ddp or "ddp_optimizer"

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
        parts = [self.parallel, "eager" if self.dynamo == "none" else self.dynamo]
        if self.resolved_optimize_ddp:
            parts.append(self.resolved_optimize_ddp)
        return "-".join(parts)
