"""A model whose top module is torch's own ``nn.Sequential``: under DDP, dynamo skips its forward
(torch/nn/modules/container.py is in dynamo's skip list) and the whole model runs eagerly."""

from __future__ import annotations

from typing import Any


def sequential() -> tuple[Any, Any]:
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64))

    def batch_fn(batch_size: int, device: Any) -> Any:
        return torch.randn(batch_size, 64, device=device)

    return model, batch_fn


def wrapped() -> tuple[Any, Any]:
    """The known fix: the same layers inside a module of the user's own."""
    from torch import nn

    seq, batch_fn = sequential()

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.seq = seq

        def forward(self, x: Any) -> Any:
            return self.seq(x)

    return Net(), batch_fn
