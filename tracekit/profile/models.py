"""Workloads: a model plus a function that makes one batch of inputs.

A workload factory returns ``(model, batch_fn)``; ``batch_fn(batch_size, device)``
returns the model's inputs (a tensor, a tuple of positional args, or a dict of
keyword args). The loss is derived from the output by :func:`output_to_loss`,
so any model that returns a tensor, a tuple or an object with ``.loss`` /
``.logits`` works.

``check_model_available`` runs in the launcher (before any rank starts) so a
missing optional package is a one-line error, not N tracebacks.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

from tracekit.errors import ConfigError, MissingDependencyError
from tracekit.profile.config import ProfileConfig

BatchFn = Callable[[int, Any], Any]


def _kind(name: str) -> str:
    if name in ("toy", "transformer"):
        return name
    if name.startswith("hf:"):
        return "hf"
    if ":" in name:
        return "factory"
    return "named"  # torchvision or Hugging Face, decided by what is installed


def workload_kind(name: str) -> str:
    """``toy``, ``transformer``, ``torchvision``, ``hf`` or ``factory``: which builder :func:`build_workload`
    uses for ``--model name`` (run.json ``run.model_kind``; decides which shape options apply)."""
    kind = _kind(name)
    if kind != "named":
        return kind
    if importlib.util.find_spec("torchvision") is not None:
        import torchvision

        if name in torchvision.models.list_models():
            return "torchvision"
    return "hf"


def check_model_available(config: ProfileConfig) -> None:
    """Raise ConfigError / MissingDependencyError if ``config.model`` cannot be built here."""
    kind = _kind(config.model)
    if kind == "factory":
        mod, _, fn = config.model.partition(":")
        if not mod or not fn:
            raise ConfigError(f"--model {config.model!r}: expected 'pkg.module:factory'")
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ConfigError(f"--model {config.model!r}: module {mod!r} not importable")
    elif kind == "hf":
        if importlib.util.find_spec("transformers") is None:
            raise MissingDependencyError("transformers", f"--model {config.model}")
    elif kind == "named":
        has_tv = importlib.util.find_spec("torchvision") is not None
        has_hf = importlib.util.find_spec("transformers") is not None
        if not has_tv and not has_hf:
            raise MissingDependencyError(
                "torchvision", f"--model {config.model} (torchvision or Hugging Face model)",
                "pip install torchvision  (or: pip install transformers for Hugging Face models)")


def output_to_loss(out: Any) -> Any:
    """A scalar to call ``backward()`` on, from whatever the model returned."""
    loss = getattr(out, "loss", None)
    if loss is not None:
        return loss
    logits = getattr(out, "logits", None)
    if logits is not None:
        return logits.float().mean()
    if isinstance(out, (tuple, list)):
        out = out[0]
    if isinstance(out, dict):
        out = next(iter(out.values()))
    return out.float().mean()


def build_workload(config: ProfileConfig) -> tuple[Any, BatchFn, list[Any]]:
    """Build ``(model, batch_fn, blocks)`` on CPU; ``blocks`` are the units FSDP shards."""
    kind = _kind(config.model)
    if kind == "toy":
        return _toy(config)
    if kind == "transformer":
        return _transformer(config)
    if kind == "factory":
        mod_name, _, fn_name = config.model.partition(":")
        factory = getattr(importlib.import_module(mod_name), fn_name, None)
        if factory is None:
            raise ConfigError(f"--model {config.model!r}: {mod_name} has no attribute {fn_name!r}")
        model, batch_fn = factory()
        return model, batch_fn, _default_blocks(model)
    if kind == "hf":
        return _hf(config, config.model[3:])
    # named: torchvision first, then a Hugging Face model type
    if importlib.util.find_spec("torchvision") is not None:
        import torchvision

        if config.model in torchvision.models.list_models():
            return _torchvision(config)
    if importlib.util.find_spec("transformers") is not None:
        return _hf(config, config.model)
    raise ConfigError(f"--model {config.model!r}: not a torchvision model "
                      "(and transformers is not installed for Hugging Face models)")


def _default_blocks(model: Any) -> list[Any]:
    """Top-level children that hold parameters: a reasonable FSDP unit for unknown models."""
    return [m for m in model.children() if any(True for _ in m.parameters())]


def _toy(config: ProfileConfig) -> tuple[Any, BatchFn, list[Any]]:
    """MLP like PyTorch's benchmarks/dynamo ToyModel: depth x (Linear(width, width) + ReLU).

    The model is a class of ours, not a bare ``nn.Sequential``: dynamo does not
    start tracing at frames inside torch.nn (skipfiles), so a compiled bare
    Sequential would silently run eagerly.
    """
    import torch
    from torch import nn

    cut = config.depth if config.graph_break_at is None else config.graph_break_at + 1

    def stack(n: int) -> nn.Sequential:
        return nn.Sequential(*[nn.Sequential(nn.Linear(config.width, config.width), nn.ReLU()) for _ in range(n)])

    class ToyModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.front = stack(cut)
            self.back = stack(config.depth - cut)

        def forward(self, x: Any) -> Any:
            x = self.front(x)
            if config.graph_break_at is not None:
                # A real break in the middle of forward (not in a loop, which would
                # make dynamo skip the whole frame), written here, not in a helper: a break
                # inside an inlined call is a different break (GRAPH_BREAK_KINDS says what each does).
                if config.graph_break_kind == "item":
                    if not bool(torch.isfinite(x).all().item()):  # a NaN guard: .item() waits for the GPU
                        raise FloatingPointError("non-finite activations")
                else:
                    torch._dynamo.graph_break()
            return self.back(x)

    model = ToyModel()
    width = config.width

    def batch_fn(batch_size: int, device: Any) -> Any:
        return torch.randn(batch_size, width, device=device)

    return model, batch_fn, [*model.front, *model.back]


def _transformer(config: ProfileConfig) -> tuple[Any, BatchFn, list[Any]]:
    import torch
    import torch.nn.functional as F  # noqa: N812
    from torch import nn

    width, heads, seq_len, vocab = config.width, config.heads, config.seq_len, 1024
    head_dim = width // heads
    cut = config.depth if config.graph_break_at is None else config.graph_break_at + 1

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.ln2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

        def forward(self, x: Any) -> Any:
            b, t, c = x.shape
            qkv = self.qkv(self.ln1(x))
            # head-major columns (head, q|k|v, dim): a column shard (--tp) holds whole heads
            local_heads = qkv.shape[-1] // (3 * head_dim)
            q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
            return x + self.mlp(self.ln2(x))

    class Transformer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            self.blocks = nn.ModuleList(Block() for _ in range(config.depth))
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab)

        def forward(self, tokens: Any) -> Any:
            x = self.embed(tokens)
            for blk in self.blocks[:cut]:
                x = blk(x)
            if config.graph_break_at is not None:
                # between the loops, not inside one; in forward itself, as in the toy model
                if config.graph_break_kind == "item":
                    if not bool(torch.isfinite(x).all().item()):
                        raise FloatingPointError("non-finite activations")
                else:
                    torch._dynamo.graph_break()
            for blk in self.blocks[cut:]:
                x = blk(x)
            return F.cross_entropy(self.head(self.ln(x)).flatten(0, 1).float(), tokens.flatten())

    model = Transformer()

    def batch_fn(batch_size: int, device: Any) -> Any:
        return torch.randint(0, vocab, (batch_size, seq_len), device=device)

    return model, batch_fn, list(model.blocks)


def tp_plan(config: ProfileConfig, model: Any) -> dict[str, str]:
    """Tensor-parallel plan of a built-in model: module path -> ``"colwise"`` | ``"rowwise"``.

    toy: layers (0, 1), (2, 3), ... as colwise/rowwise pairs (an odd last layer stays
    replicated); transformer: per block ``qkv`` and ``mlp.0`` colwise, ``proj`` and ``mlp.2``
    rowwise (Megatron-style: one allreduce in forward and one in backward per pair).
    """
    if config.model == "toy":
        layers = [f"front.{i}.0" for i in range(len(model.front))] + [f"back.{i}.0" for i in range(len(model.back))]
        plan = {}
        for i in range(0, len(layers) - 1, 2):
            plan[layers[i]], plan[layers[i + 1]] = "colwise", "rowwise"
        return plan
    if config.model == "transformer":
        plan = {}
        for i in range(len(model.blocks)):
            plan.update({f"blocks.{i}.qkv": "colwise", f"blocks.{i}.proj": "rowwise",
                         f"blocks.{i}.mlp.0": "colwise", f"blocks.{i}.mlp.2": "rowwise"})
        return plan
    raise ConfigError(f"--tp: no tensor-parallel plan for --model {config.model}")


def _torchvision(config: ProfileConfig) -> tuple[Any, BatchFn, list[Any]]:
    import torch
    import torchvision

    model = torchvision.models.get_model(config.model, weights=None)

    def batch_fn(batch_size: int, device: Any) -> Any:
        return torch.randn(batch_size, 3, 224, 224, device=device)

    return model, batch_fn, _default_blocks(model)


def _hf(config: ProfileConfig, name: str) -> tuple[Any, BatchFn, list[Any]]:
    """A Hugging Face model built from its config (random weights, nothing downloaded)."""
    import torch

    try:
        import transformers
    except ImportError as e:
        raise MissingDependencyError("transformers", f"--model {config.model}") from e
    mapping = transformers.CONFIG_MAPPING
    if name in mapping:
        hf_config = mapping[name]()
    else:
        try:  # a hub id: only its small config.json, from cache or the hub
            hf_config = transformers.AutoConfig.from_pretrained(name)
        except Exception as e:  # noqa: BLE001
            raise ConfigError(f"--model {config.model!r}: unknown Hugging Face model type or id ({e})") from e
    try:
        model = transformers.AutoModelForCausalLM.from_config(hf_config)
    except Exception:  # noqa: BLE001 - not a causal LM: take the bare model
        model = transformers.AutoModel.from_config(hf_config)
    vocab = int(getattr(hf_config, "vocab_size", 1000))
    seq_len = config.seq_len

    def batch_fn(batch_size: int, device: Any) -> Any:
        ids = torch.randint(0, vocab, (batch_size, seq_len), device=device)
        return {"input_ids": ids, "labels": ids} if hasattr(model, "lm_head") or "CausalLM" in type(model).__name__ \
            else {"input_ids": ids}

    layers = None
    for path in ("model.layers", "transformer.h", "encoder.layer", "layers", "h"):
        obj: Any = model
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            layers = list(obj)
            break
    return model, batch_fn, layers or _default_blocks(model)
