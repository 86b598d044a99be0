"""``tracekit profile --compile-mode``: torch.compile's mode in the config, run.json and the compile facts
(tracekit.profile.cudagraph_facts)."""

from __future__ import annotations

import pytest

from tracekit.errors import ConfigError
from tracekit.profile import cudagraph_facts
from tracekit.profile.config import ProfileConfig


def test_compile_mode_needs_inductor_and_a_known_mode() -> None:
    with pytest.raises(ConfigError, match="--compile-mode needs --dynamo inductor"):
        ProfileConfig(dynamo="aot_eager", compile_mode="reduce-overhead")
    with pytest.raises(ConfigError, match="--compile-mode must be one of default, reduce-overhead"):
        ProfileConfig(dynamo="inductor", compile_mode="fast")
    cfg = ProfileConfig(dynamo="inductor", compile_mode="reduce-overhead")
    assert cfg.to_dict()["compile_mode"] == "reduce-overhead"
    assert cfg.mode_label().endswith("-reduce-overhead")
    assert ProfileConfig.from_json(cfg.to_json()).compile_mode == "reduce-overhead"
    assert not ProfileConfig(dynamo="inductor", compile_mode="default").mode_label().endswith("default")


def test_cudagraph_facts_count_skips_and_their_reasons() -> None:
    unavailable: dict[str, str] = {}
    facts = cudagraph_facts.cudagraph_facts(
        "max-autotune-no-cudagraphs", {"cudagraph_skips": 3, "cudagraph_recorded_non_static_inputs": 2},
        ["mutated inputs (1 instances)", "mutated inputs (1 instances)"], unavailable)
    assert facts["mode"] == "max-autotune-no-cudagraphs" and facts["captures"] is False
    assert facts["skips"] == 3 and facts["recorded_non_static_inputs"] == 2
    # two logged with one reason, one counted without a line (a graph without CUDA ops)
    assert facts["skip_reasons"] == [{"reason": "mutated inputs (1 instances)", "count": 2},
                                     {"reason": "not logged by inductor (a graph without CUDA ops)", "count": 1}]
    assert facts["graphs_recorded"] is None and unavailable == {}


def test_the_skip_log_is_captured() -> None:
    import logging

    with cudagraph_facts.capture_cudagraph_skips() as h:
        logging.getLogger(cudagraph_facts.CUDAGRAPHS_LOGGER).warning("skipping cudagraphs due to cpu device (x)")
        logging.getLogger(cudagraph_facts.CUDAGRAPHS_LOGGER).warning("something else")
    assert h.reasons == ["cpu device (x)"]
    assert h not in logging.getLogger(cudagraph_facts.CUDAGRAPHS_LOGGER).handlers


def test_the_profile_summary_says_what_cuda_graphs_did() -> None:
    from tracekit.cli.profile import _cudagraph_lines

    assert _cudagraph_lines({"mode": "default", "captures": False}) == []
    line, = _cudagraph_lines({"mode": "reduce-overhead", "captures": True, "graphs_recorded": 4, "rerecords": 0,
                              "skips": 1, "skip_reasons": [{"reason": "mutated inputs (1 instances)", "count": 1}]})
    assert line == ("cuda graphs (reduce-overhead): 4 recorded, 0 re-recordings, 1 graphs skipped: "
                    "mutated inputs (1 instances) (x1)")
