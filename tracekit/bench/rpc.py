"""``tracekit bench rpc``: the hybrid parameter-server benchmark of
``torch/distributed/benchmarks/benchmark_ddp_rpc.py``.

Roles (one process each, started by one elastic launch)::

    rank 0                      master: creates the tables, starts the trainers, collects times
    ranks 1 .. P                ps0 .. ps{P-1}: one nn.EmbeddingBag(num_embeddings, embedding_dim) each
    ranks P+1 .. P+T            trainer0 .. trainer{T-1}: a dense MLP under DDP (trainer-only group)

Each trainer step: look up the sparse features on every parameter server through
``torch.distributed.rpc`` (TensorPipe), concatenate, run the DDP MLP, cross-entropy loss,
``dist_autograd.backward`` and a ``DistributedOptimizer`` (SGD) step over the remote
embedding parameters and the local MLP parameters. One epoch = ``batches_per_epoch``
random batches (as in the original: 20-50 indices, bags of 1-10). Trainers run on
GPUs when there is one per trainer, else on cpu (gloo).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracekit.errors import ConfigError, MissingDependencyError, RunError
from tracekit.profile.harness import PERCENTILES, percentile

RPC_CONFIG_ENV = "TRACEKIT_BENCH_RPC_CONFIG"
RESULT_NAME = "rpc_result.json"
NUM_CLASSES = 8


@dataclass
class RpcConfig:
    trainers: int = 2
    parameter_servers: int = 2
    num_embeddings: int = 100
    embedding_dim: int = 64
    warmup_cycles: int = 5
    epochs: int = 100
    batches_per_epoch: int = 10
    device: str = "auto"  # auto | cuda | cpu; resolved before launch
    timeout_s: float = 300.0
    seed: int = 0
    lr: float = 0.05

    def __post_init__(self) -> None:
        for name in ("trainers", "parameter_servers", "num_embeddings", "embedding_dim", "epochs",
                     "batches_per_epoch"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(self, name)})")
        if self.warmup_cycles < 0:
            raise ConfigError("--warmup-cycles must be >= 0")
        if self.device not in ("auto", "cuda", "cpu"):
            raise ConfigError("--device must be auto, cuda or cpu")
        if self.timeout_s <= 0:
            raise ConfigError("--timeout must be positive")

    @property
    def world_size(self) -> int:
        return 1 + self.parameter_servers + self.trainers


def check_rpc_available() -> None:
    import torch.distributed as dist

    ok = dist.is_available()
    if ok:
        try:
            import torch.distributed.rpc as rpc

            ok = rpc.is_available()
        except ImportError:
            ok = False
    if not ok:
        import torch

        raise MissingDependencyError(
            "torch.distributed.rpc", "tracekit bench rpc",
            f"this torch ({torch.__version__}) was built without distributed RPC; "
            "install a torch build with USE_DISTRIBUTED and TensorPipe (the official Linux wheels have it)")


def run_rpc_bench(config: RpcConfig, *, notify: Any = None) -> dict[str, Any]:
    """Launch master + parameter servers + trainers locally; return the result document."""
    from tracekit.bench.launch import launch_local
    from tracekit.profile.env import apply_gpu_safety_env

    notify = notify or (lambda msg: print(msg, file=sys.stderr))
    check_rpc_available()
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    notice = None
    if config.device == "cuda" and gpus < config.trainers:
        raise ConfigError(f"--device cuda needs one GPU per trainer ({config.trainers}), found {gpus}")
    if config.device == "auto":
        device = "cuda" if gpus >= config.trainers else "cpu"
        if device == "cpu":
            why = "no CUDA GPU" if gpus == 0 else f"{gpus} GPU(s) for {config.trainers} trainers"
            notice = f"{why}: trainers run on cpu with gloo"
    else:
        device = config.device
    config = dataclasses.replace(config, device=device)
    if notice:
        notify(f"notice: {notice}")
    if device == "cuda":
        apply_gpu_safety_env()
    run_dir = Path(tempfile.mkdtemp(prefix="tracekit-bench-rpc-"))
    try:
        err = launch_local(config.world_size, "tracekit.bench.rpc",
                           {RPC_CONFIG_ENV: json.dumps(dataclasses.asdict(config))}, run_dir, config.timeout_s)
        if err:
            raise RunError(f"rpc benchmark failed: {err}")
        try:
            raw = json.loads((run_dir / RESULT_NAME).read_text())
        except (OSError, ValueError) as e:
            raise RunError(f"rpc benchmark finished but the master wrote no result: {e}") from e
    finally:
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)
    return build_result(config, raw, notice)


def epoch_stats(measurements: list[float], examples: int | None = None) -> dict[str, Any]:
    sec = {f"p{q}": percentile(measurements, q) for q in PERCENTILES}
    out: dict[str, Any] = {"epochs": len(measurements), "sec_per_epoch": sec,
                           "epochs_per_sec": {k: (1 / v if v > 0 else None) for k, v in sec.items()}}
    if examples is not None:
        out["examples_per_epoch"] = examples
        out["examples_per_sec"] = {k: (examples / v if v > 0 else None) for k, v in sec.items()}
    return out


def build_result(config: RpcConfig, raw: dict[str, Any], notice: str | None) -> dict[str, Any]:
    import torch

    from tracekit.version import version

    trainers = sorted(raw["trainers"], key=lambda t: t["trainer"])
    per = [dict(trainer=t["trainer"], device=t["device"], **epoch_stats(t["measurements"], t["examples"]))
           for t in trainers]
    flat = [x for t in trainers for x in t["measurements"]]
    overall = epoch_stats(flat, sum(t["examples"] for t in trainers))
    overall["definition"] = "every trainer's epochs together; examples = all trainers' examples per epoch"
    return {
        "tracekit_schema": "tracekit.bench.rpc/1",
        "tracekit_version": version(),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "pytorch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "rpc_backend": "tensorpipe",
        "config": dataclasses.asdict(config),
        "device": config.device,
        "notice": notice,
        "trainers": per,
        "overall": overall,
        "measurements": {str(t["trainer"]): t["measurements"] for t in trainers},
    }


def rpc_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per trainer and one ``all`` row (``--format csv``): epochs, sec/epoch percentiles, epochs/s and
    examples/s at p50."""
    rows = []
    for name, s in [(f"trainer{t['trainer']}", t) for t in doc["trainers"]] + [("all", doc["overall"])]:
        rows.append({"trainer": name, "epochs": s["epochs"],
                     **{f"p{q}_sec_per_epoch": s["sec_per_epoch"][f"p{q}"] for q in PERCENTILES},
                     "epochs_per_sec_p50": s["epochs_per_sec"]["p50"], "ex_per_sec_p50": s["examples_per_sec"]["p50"]})
    return rows


def render_rpc(doc: dict[str, Any], fmt: str = "simple") -> str:
    from tabulate import tabulate

    rows = []
    for name, s in [(f"trainer{t['trainer']}", t) for t in doc["trainers"]] + [("all", doc["overall"])]:
        sec, eps = s["sec_per_epoch"], s["epochs_per_sec"]
        rows.append([name, s["epochs"], *(f"{sec[f'p{q}']:.4f}" for q in PERCENTILES),
                     f"{eps['p50']:.2f}", f"{s['examples_per_sec']['p50']:.1f}"])
    c = doc["config"]
    head = ["trainer", "epochs", *(f"p{q} s/epoch" for q in PERCENTILES), "epochs/s (p50)", "ex/s (p50)"]
    title = (f"RPC + DDP hybrid: {c['trainers']} trainer(s) on {doc['device']}, {c['parameter_servers']} "
             f"parameter server(s), EmbeddingBag({c['num_embeddings']}, {c['embedding_dim']}), "
             f"{c['batches_per_epoch']} batches/epoch, {c['warmup_cycles']} warm-up epochs dropped")
    lines = [f"note: {doc['notice']}"] if doc.get("notice") else []
    lines += [title, tabulate(rows, headers=head, tablefmt=fmt, disable_numparse=True)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- worker side (one process per role)

_STATE: dict[str, Any] = {}


def _embedding_params(emb_rref: Any) -> list[Any]:
    from torch.distributed.rpc import RRef

    return [RRef(p) for p in emb_rref.local_value().parameters()]


def _lookup(emb_rref: Any, indices: Any, offsets: Any) -> Any:
    return emb_rref.local_value()(indices, offsets)


def _make_hybrid(emb_rrefs: list[Any], cfg: RpcConfig, device: Any, group: Any) -> Any:
    import torch
    import torch.distributed.rpc as rpc
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    class HybridModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            dims = [cfg.parameter_servers * cfg.embedding_dim, 256, 128, 64, 32, NUM_CLASSES]
            layers: list[nn.Module] = []
            for i in range(len(dims) - 1):
                layers.append(nn.Linear(dims[i], dims[i + 1]))
                if i < len(dims) - 2:
                    layers.append(nn.ReLU())
            ids = {"device_ids": [device.index]} if device.type == "cuda" else {}
            self.ddp = DDP(nn.Sequential(*layers).to(device), process_group=group, **ids)

        def forward(self, indices: Any, offsets: Any) -> Any:
            looked = [rpc.rpc_sync(r.owner(), _lookup, args=(r, indices, offsets)) for r in emb_rrefs]
            return self.ddp(torch.cat(looked, dim=1).to(device))

    return HybridModel()


def _run_trainer(emb_rrefs: list[Any], trainer: int, cfg_json: str) -> dict[str, Any]:
    """Runs on a trainer (called by the master over RPC)."""
    import torch
    import torch.distributed.autograd as dist_autograd
    import torch.distributed.rpc as rpc
    from torch import optim
    from torch.distributed.optim import DistributedOptimizer
    from torch.distributed.rpc import RRef

    cfg = RpcConfig(**json.loads(cfg_json))
    device, group = _STATE["device"], _STATE["group"]
    torch.manual_seed(cfg.seed)  # same MLP weights on every trainer
    model = _make_hybrid(emb_rrefs, cfg, device, group)
    params = []
    for r in emb_rrefs:
        params.extend(rpc.rpc_sync(r.owner(), _embedding_params, args=(r,)))
    params.extend(RRef(p) for p in model.parameters())
    opt = DistributedOptimizer(optim.SGD, params, lr=cfg.lr)
    criterion = torch.nn.CrossEntropyLoss()
    rnd = random.Random(cfg.seed * 1000 + trainer)

    def batches() -> Any:
        for _ in range(cfg.batches_per_epoch):
            n = rnd.randint(20, 50)
            indices = torch.tensor([rnd.randrange(cfg.num_embeddings) for _ in range(n)], dtype=torch.long)
            offsets, start = [], 0
            while start < n:
                offsets.append(start)
                start += rnd.randint(1, 10)
            target = torch.tensor([rnd.randrange(NUM_CLASSES) for _ in offsets], dtype=torch.long).to(device)
            yield indices, torch.tensor(offsets, dtype=torch.long), target

    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    measurements, examples = [], 0
    for epoch in range(cfg.warmup_cycles + cfg.epochs):
        sync()
        t0 = time.perf_counter()
        examples = 0
        for indices, offsets, target in batches():
            examples += len(target)
            with dist_autograd.context() as ctx:
                loss = criterion(model(indices, offsets), target)
                dist_autograd.backward(ctx, [loss])
                opt.step(ctx)
        sync()
        if epoch >= cfg.warmup_cycles:
            measurements.append(time.perf_counter() - t0)
    return {"trainer": trainer, "device": str(device), "measurements": measurements, "examples": examples}


def _worker() -> None:
    import torch
    import torch.distributed as dist
    import torch.distributed.rpc as rpc

    from tracekit.profile.env import apply_gpu_safety_env

    import warnings

    warnings.filterwarnings("ignore", message=".*as a ProcessGroup.*")
    warnings.filterwarnings("ignore", message=".*TorchScript.*support.*deprecated.*")
    cfg = RpcConfig(**json.loads(os.environ[RPC_CONFIG_ENV]))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    timeout = _dt.timedelta(seconds=cfg.timeout_s)
    if cfg.device == "cuda":
        apply_gpu_safety_env()
    # A gloo group over every role, only to build the trainers' DDP group (all ranks must join).
    dist.init_process_group("gloo", timeout=timeout)
    trainer_ranks = list(range(1 + cfg.parameter_servers, world))
    group = dist.new_group(trainer_ranks, backend="nccl" if cfg.device == "cuda" else "gloo", timeout=timeout)
    ps_count = cfg.parameter_servers
    if rank == 0:
        name = "master"
    elif rank <= ps_count:
        name = f"ps{rank - 1}"
    else:
        name = f"trainer{rank - 1 - ps_count}"
        t = rank - 1 - ps_count
        if cfg.device == "cuda":
            torch.cuda.set_device(t % torch.cuda.device_count())
            _STATE["device"] = torch.device("cuda", torch.cuda.current_device())
        else:
            _STATE["device"] = torch.device("cpu")
        _STATE["group"] = group
    opts = rpc.TensorPipeRpcBackendOptions(init_method="env://", rpc_timeout=cfg.timeout_s,
                                           num_worker_threads=16)
    rpc.init_rpc(name, rank=rank, world_size=world, rpc_backend_options=opts)
    if rank == 0:
        torch.manual_seed(cfg.seed)
        embs = [rpc.remote(f"ps{i}", torch.nn.EmbeddingBag, args=(cfg.num_embeddings, cfg.embedding_dim),
                           kwargs={"mode": "sum"}) for i in range(ps_count)]
        cfg_json = json.dumps(dataclasses.asdict(cfg))
        futs = [rpc.rpc_async(f"trainer{t}", _run_trainer, args=(embs, t, cfg_json), timeout=cfg.timeout_s)
                for t in range(cfg.trainers)]
        results = [f.wait() for f in futs]
        run_dir = Path(os.environ["TRACEKIT_BENCH_RUN_DIR"])
        tmp = run_dir / f".{RESULT_NAME}.tmp"
        tmp.write_text(json.dumps({"trainers": results}))
        os.replace(tmp, run_dir / RESULT_NAME)
    rpc.shutdown()  # waits for every role's outstanding work
    dist.destroy_process_group()


def main() -> int:
    from tracekit.profile.failure import report_failure

    try:
        _worker()
    except BaseException as e:
        return report_failure(os.environ.get("TRACEKIT_BENCH_RUN_DIR"), int(os.environ.get("RANK", "0")), e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
