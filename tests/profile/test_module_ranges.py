"""tracekit.profile.module_ranges in-process: ranges nest per module call, and hooks traced by dynamo do nothing
(no graph break under fullgraph=True, no range from the compiled code)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from tracekit.profile.module_ranges import ModuleRanges, forward_is_compiled  # noqa: E402
from tracekit.traces.provenance import MODULE_RANGE_PREFIX  # noqa: E402


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x) + self.body(x))  # body called twice: two ranges per step


def _ranges(model: nn.Module) -> list:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        model(torch.randn(4, 8)).sum().backward()
    return [e for e in prof.events() if e.name.startswith(MODULE_RANGE_PREFIX)]


def test_eager_ranges_per_call_and_removed_after() -> None:
    model = Net()
    with ModuleRanges(model) as r:
        got = _ranges(model)
    assert r.installed == 5  # the model (""), body, body.0, body.1, head
    names = sorted(e.name[len(MODULE_RANGE_PREFIX):] for e in got)
    assert names == ["", "body", "body", "body.0", "body.0", "body.1", "body.1", "head"]
    assert _ranges(model) == []  # hooks removed with the scope
    with ModuleRanges(model, enabled=False) as off:
        assert _ranges(model) == [] and off.installed == 0


def test_of_the_wrappers_around_the_model_only_the_model_gets_the_empty_path() -> None:
    """A wrapper whose children's names start with ``module`` (DDP's shape) records no range of its own: the
    model inside it is the empty path, once per call."""

    class Wrapper(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.module = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.module(x)

    model = Wrapper(Net())
    with ModuleRanges(model) as r:
        got = _ranges(model)
    assert r.installed == 5
    assert sorted(e.name[len(MODULE_RANGE_PREFIX):] for e in got).count("") == 1


def test_hooks_traced_by_dynamo_do_nothing() -> None:
    torch._dynamo.reset()
    model = Net()
    model.compile(backend="eager", fullgraph=True)  # a graph break would raise
    with ModuleRanges(model):
        got = _ranges(model)
    assert got == []  # the traced hooks were no-ops: no range, nothing left open
    torch._dynamo.reset()


def test_which_runs_have_a_compiled_forward() -> None:
    assert not forward_is_compiled("none", None)
    assert forward_is_compiled("inductor", "ddp_optimizer")
    assert not forward_is_compiled("inductor", "python_reducer_without_compiled_forward")
