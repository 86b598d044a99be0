"""Small models for ``benchmarks/bench_ops.py`` (``tracekit profile --model benchmarks.ops_models:NAME``).

Each factory returns ``(model, batch_fn)`` as ``--model pkg.module:factory`` expects; the models are cut down
(4 layers) so that their compilation fits a short GPU lease, and :data:`SHAPES` states what the attention FLOP
formula needs.
"""

from __future__ import annotations

from typing import Any

#: per model: layers with attention, heads, head dim, tokens per sample, causal
SHAPES: dict[str, dict[str, Any]] = {
    "gpt2": {"layers": 4, "heads": 12, "head_dim": 64, "seq": 512, "causal": True},
    "vit": {"layers": 4, "heads": 12, "head_dim": 64, "seq": 197, "causal": False},
    "resnet": {"layers": 0},
    "tiny": {"layers": 1, "heads": 4, "head_dim": 16, "seq": 32, "causal": True},
}


def gpt2() -> tuple[Any, Any]:
    """GPT-2 (Hugging Face, random weights) with 4 blocks, sequences of 512 tokens, SDPA attention."""
    import torch
    import transformers

    s = SHAPES["gpt2"]
    cfg = transformers.GPT2Config(n_layer=s["layers"], n_head=s["heads"], n_embd=s["heads"] * s["head_dim"],
                                  n_positions=s["seq"], attn_implementation="sdpa")
    model = transformers.GPT2LMHeadModel(cfg)

    def batch_fn(batch_size: int, device: Any) -> Any:
        ids = torch.randint(0, cfg.vocab_size, (batch_size, s["seq"]), device=device)
        return {"input_ids": ids, "labels": ids}

    return model, batch_fn


def vit() -> tuple[Any, Any]:
    """A torchvision VisionTransformer (ViT-B/16 widths) with 4 encoder layers, 224x224 images."""
    import torch
    from torchvision.models.vision_transformer import VisionTransformer

    s = SHAPES["vit"]
    model = VisionTransformer(image_size=224, patch_size=16, num_layers=s["layers"], num_heads=s["heads"],
                              hidden_dim=s["heads"] * s["head_dim"], mlp_dim=3072)

    def batch_fn(batch_size: int, device: Any) -> Any:
        return torch.randn(batch_size, 3, 224, 224, device=device)

    return model, batch_fn


def resnet() -> tuple[Any, Any]:
    """torchvision's ResNet-18, 224x224 images."""
    import torch
    import torchvision

    model = torchvision.models.resnet18(weights=None)

    def batch_fn(batch_size: int, device: Any) -> Any:
        return torch.randn(batch_size, 3, 224, 224, device=device)

    return model, batch_fn


def tiny() -> tuple[Any, Any]:
    """A convolution, a linear layer and one causal SDPA: the benchmark's dry run on CPU (``--device cpu``)."""
    import torch
    from torch import nn

    s = SHAPES["tiny"]
    width = s["heads"] * s["head_dim"]

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv1d(width, width, 3, padding=1)
            self.qkv = nn.Linear(width, 3 * width)

        def forward(self, x: Any) -> Any:
            b = x.shape[0]
            x = self.conv(x.transpose(1, 2)).transpose(1, 2)
            q, k, v = self.qkv(x).view(b, s["seq"], 3, s["heads"], s["head_dim"]).permute(2, 0, 3, 1, 4)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).sum()

    def batch_fn(batch_size: int, device: Any) -> Any:
        return torch.randn(batch_size, s["seq"], width, device=device)

    return Tiny(), batch_fn
