"""How far each what-if scenario has been checked against the same change made for real.

A scenario's predicted change is only as good as the checks behind it, so ``tracekit whatif`` prints,
next to the scenarios it was asked for, the checks of those changes: the same model profiled twice,
once as it was and once with the change really made, and the scenario predicted from the first run
compared with the second run's measured unprofiled step. The measure is the **delta error**: the
absolute difference, in percentage points of the baseline step, between the predicted change
(``predicted_delta_pct``) and the measured one (``measured_delta_pct``); the measured baseline is the
first run's own timed steps (run.json), never an input to the prediction.

Each :class:`Check` names the result files under ``benchmarks/results/`` it summarises and the
variant runs it takes from them (``variants``, a regex on the variant's run folder);
``tests/test_whatif_validation.py`` recomputes every figure from those files, so this table cannot
drift from the measurements. ``verdict`` says what the figures mean: ``checked`` (the truth was
steady enough to check the prediction), ``not checkable here`` (the same program's measured step
moved between runs by more than the change: the figures are the host's noise as much as the
model's error) or ``not run`` (no machine here could make the change).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

CHECKED, NOISY, NOT_RUN = "checked", "not checkable here", "not run"


class _FromResults:
    """A dataclass of figures recomputed from result files (fields ``sources``, ``variants``): its JSON drops
    the regex picking the runs."""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("variants")
        d["sources"] = list(self.sources)
        return d


@dataclass(frozen=True)
class Check(_FromResults):
    """One setting in which a scenario's change was made for real and compared with its prediction."""

    #: the :class:`~tracekit.replay.scenario_spec.Scenario` field the check is about
    change: str
    #: where it was checked: machine, backend, what bound the step
    setting: str
    #: variant runs compared (each a real run with the change made)
    runs: int
    #: median and max |predicted − measured change|, percentage points of the baseline step (None: not run)
    delta_error_pp_median: float | None
    delta_error_pp_max: float | None
    #: :data:`CHECKED`, :data:`NOISY` or :data:`NOT_RUN` (module doc)
    verdict: str
    #: one sentence: why the verdict
    why: str
    #: result files under benchmarks/results/ (name fragments) and the regex picking the variant runs in them
    sources: tuple[str, ...] = ()
    variants: str = "."
    #: a ``world_size`` check of runs of one rank grown to more (:mod:`tracekit.replay.grow`), not of runs of several
    from_one_rank: bool = False

    @property
    def backend(self) -> str | None:
        """The backend of the runs checked, from the setting's wording: ``gloo`` (CPU/gloo), ``nccl``, or None
        (one GPU: no collective)."""
        return "gloo" if "CPU/gloo" in self.setting else "nccl" if "NCCL" in self.setting else None


_GB = ("whatif_scenarios_2026-11-24_h100_graph_break", "whatif_scenarios_2026-11-25_h200_graph_break")
_GLOO = ("whatif_scenarios_2026-11-24_cpu_gloo_a", "whatif_scenarios_2026-11-24_cpu_gloo_b",
         "whatif_scenarios_2026-11-24_cpu_gloo_c")

_CPU16 = ("whatif_scenarios_2026-11-25_cpu16_a", "whatif_scenarios_2026-11-25_cpu16_b")
_CPU16_PINNED = ("whatif_scenarios_2026-11-25_cpu16_pinned",)
_IDLE = "CPU/gloo, 2 ranks, an idle 16-core host"
_PAIRED = "whatif_scenarios_2026-11-25_h100_paired_twins"
_PAIRED_H200 = "whatif_scenarios_2026-11-25_h200_paired_twins"
_CPU16_PAIRED = ("whatif_scenarios_2026-11-25_cpu16_paired",)
_ONE_JOB = "pinned to 8 cores, every variant timed in one job, steps alternating, 30 rounds"
_NCCL = "NCCL, 2 GPUs (4 x H200 host)"
_NCCL_ONE_JOB = "every variant timed in one job, steps alternating, 40 rounds"
_NCCL_SHAPES = ("toy MLP 8 x 4096 fp32 batch 64 and a bf16 transformer (3 sets each), HF GPT-2 bf16 seq 512 batch 4 "
                 "(2 sets); the third sets and GPT-2's were recorded after the per-cut bound was fitted")
_GPUBOUND = "toy MLP 16 x 4096 fp32 batch 512"
_ALL_SHAPES = "the three CPU-bound shapes and a GPU-bound toy MLP 16 x 4096"
_CPU_SHAPES = "toy4096|tfm1024|gpt2bf16"
_NCCL_PAIRED = ("whatif_scenarios_2026-11-27_h200x4_paired",)
_NCCL_SEPARATE = ("whatif_scenarios_2026-11-27_h200x4_separate",)
_X2 = "NCCL, 2 GPUs (a 2 x H200 host, 32 cores), CPU-bound steps"
_X2_HELD_OUT = ("the three CPU-bound shapes, one set recorded after every figure of the model was fitted; GPT-2's "
                "trace not kept")
_NCCL_X2 = ("whatif_scenarios_2026-11-27_h200x2_paired",)
_X2B = "NCCL, 2 GPUs (another 2 x H200 host, 32 cores, 2026-11-28), CPU-bound steps"
_X2B_HELD_OUT = ("the three CPU-bound shapes, recorded after every figure of the model was fitted and evaluated "
                 "before and after the launch work of 2026-11-28; GPT-2's trace not kept")
_NCCL_X2B = ("whatif_scenarios_2026-11-28_h200x2_paired",)
_X2W = "NCCL, 2 GPUs (a third 2 x H200 host, 32 cores, 2026-11-28, seventh session), CPU-bound steps"
_X2W_HELD_OUT = ("five CPU-bound shapes (toy MLPs 8 x 4096 and 16 x 2048, bf16 transformers 1024 x 8 and 768 x 12, HF "
                 "GPT-2 bf16), recorded after NCCL's launches were shed; traces not kept")
_NCCL_X2W = ("whatif_scenarios_2026-11-28_h200x2_ws1_heldout",)
_H100X2 = "NCCL, 2 GPUs (a 2 x H100 host, 32 cores, 2026-11-28), CPU-bound steps"
_H100X2_HELD_OUT = "the three CPU-bound shapes, recorded after every change of the model; traces not kept"
_NCCL_H100X2 = ("whatif_scenarios_2026-11-28_h100x2_paired",)
_CROSS = ("every bucket layout (caps 1, 5, 25, 100 MB) profiled and each predicted from every other, the four timed "
          "in one job, 40 rounds (benchmarks/bench_whatif.py --cross)")
_CROSS_X4 = ("whatif_scenarios_2026-11-27_h200x4_layouts_cross",)
_CROSS_X2 = ("whatif_scenarios_2026-11-28_h200x2_layouts_cross",)
_X2C = "NCCL, 2 GPUs (a 2 x H200 host, 32 cores, 2026-11-28, fifth session), CPU-bound steps"
_X2C_SHAPES = ("bf16 transformers 1024 x 8 and 768 x 12, HF GPT-2 bf16, toy MLPs 8 x 4096 and 16 x 2048; recorded after "
               "every figure of the model was set; traces not kept")

_X2D = "NCCL, 2 GPUs (a 2 x H200 host, 32 cores, 2026-11-28, ninth session), GPU-bound steps"
_X2D_SHAPES = ("toy MLPs 16 x 4096 fp32 batch 512 and 16 x 2048 fp32 batch 2048, committed under "
               "sample_traces/h200x2_contention, and a bf16 transformer 1024 x 8 batch 64, trace not kept; each profiled at "
               "caps 25 and 100 MB and predicted from both; recorded after the contention re-timing was set on the 4 x H200 "
               "runs: held out")
_NCCL_X2D = ("whatif_scenarios_2026-11-28_h200x2_contention",)

CHECKS: tuple[Check, ...] = (
    Check("no_graph_breaks", "inductor, GPU-bound step (GPU busy throughout), 1 GPU (H100, H200)", 3, 0.1, 0.9,
          CHECKED, "the twins' measured steps were steady (p90/p50 within 1 %; in one process, alternating: "
          "quartiles within 0.4 %)", (*_GB, _PAIRED), "gpubound"),
    Check("no_graph_breaks", "inductor, CPU-bound step (launch-bound), 1 GPU (H100, H200): both twins timed in "
          "one process, steps alternating, 150 rounds (10 shapes of toy MLP and transformer, 4 host sessions)", 14,
          1.7, 4.6, CHECKED, "the paired change reproduced across host sessions and GPUs (toy MLP -12.8, -13.0 and "
          "-11.8 %, transformer -5.5 and -5.3 %); 8 of the 14 ran only after the graph-break model was settled "
          "(median 1.4, max 4.6 points)", (_PAIRED, _PAIRED_H200), "cpubound|/b/|/c/|h200"),
    Check("no_graph_breaks", "inductor, CPU-bound step (launch-bound), 1 GPU (H100, H200), separate runs", 13, 19.4,
          54.3, NOISY, "the same program measured up to 50 % apart from run to run, ten times the predicted change "
          "(the 9 repeats keep the predictions of the model before DDPOptimizer's re-cut: traces not kept)",
          _GB, "cpubound|transformer-small"),
    Check("no_graph_breaks", "inductor, CPU-bound step, 1 GPU (H100), pinned to 4 cores, 3 alternating repeats", 6,
          13.8, 20.9, NOISY, "pinned, the same program still measured 5.5 to 8.2 ms (toy with the break) and 10.3 to "
          "14.3 ms (transformer without it) in three runs; every pair measured faster without the break but one, by "
          "more than the -2.4 to -3.1 % the model before DDPOptimizer's re-cut predicted (traces not kept)",
          ("whatif_scenarios_2026-11-25_h100_graph_break_pinned",)),
    Check("no_graph_breaks", "inductor, CPU/gloo, 2 ranks", 1, 26.1, 26.1, NOISY,
          "the twin without the break measured 25 % slower than the one with it",
          ("whatif_scenarios_2026-11-24_cpu_gloo_graph_break",)),
    Check("bucket_cap_mb", "CPU/gloo, 2 ranks (caps 1, 5, 25 again, 100 MB)", 11, 14.9, 55.3, NOISY,
          "the unchanged baseline measured 21 % and 55 % apart in two repeats", _GLOO),
    Check("bucket_cap_mb", "CPU/gloo, 2 ranks on a 2-core host, DDP's default caps (the README's demo model), every "
          "variant timed in one job, steps alternating, 16 rounds (caps 1, 25, 100 MB)", 3, 18.2, 19.5, NOISY,
          "no two variants measured apart beyond their quartiles (cap 25 MB -1.5 %, 100 MB +4.9 %, 1 MB +7.9 %, "
          "quartiles 4 to 20 % wide); predicted +16.7, +24.4 and +11.6 %: each rank's compute and gloo's worker "
          "threads share the two cores, which the replay does not model (2026-11-28)",
          ("whatif_scenarios_2026-11-28_cpu2_demo_paired",)),
    Check("first_bucket_cap_mb", "CPU/gloo, 2 ranks (first bucket 5 MB)", 3, 37.5, 65.8, NOISY,
          "the unchanged baseline measured 21 % and 55 % apart in two repeats", _GLOO),
    Check("world_size", "CPU/gloo, 2 ranks -> 1", 3, 41.4, 68.7, NOISY,
          "the unchanged baseline measured 21 % and 55 % apart in two repeats; one set gave the single rank "
          "both cores", _GLOO),
    Check("bucket_cap_mb", f"{_IDLE}, pinned to 8 cores, 50 steps (caps 1, 5, 25 again, 100 MB; 2 sets)", 8, 4.7,
          15.9, CHECKED, "the unchanged rerun moved 3.1 and 0.2 %; cap 100 MB measured +21.6 and +22.5 %, predicted "
          "+6.7 and +9.0 % (one 32 MiB gloo allreduce is under-estimated); cap 1 MB measured -10.6 and -0.2 % in "
          "the two sets, predicted -16.8 and -16.1 % (-12.9 and -12.1 %, median 2.7 and max 14.9 points, before "
          "2026-11-29, when a recorded bucket also waited for new buckets holding only later gradients; the paired "
          "sets below, timed in one job, measured -14.8 and -18.8 %)", _CPU16_PINNED),
    Check("bucket_cap_mb", f"{_IDLE}, unpinned, 30 steps (caps 1, 5, 25 again, 100 MB; 2 sets)", 8, 4.2, 13.2, NOISY,
          "the unchanged rerun moved -6.3 and +5.3 %, and cap 100 MB measured +0.9 and +22.7 % in the two sets",
          _CPU16),
    Check("first_bucket_cap_mb", f"{_IDLE}, pinned to 8 cores, 50 steps (first bucket 5 MB; 2 sets)", 2, 7.3, 10.8,
          NOISY, "the same change measured -2.6 and +13.8 % in the two sets", _CPU16_PINNED),
    Check("first_bucket_cap_mb", f"{_IDLE}, unpinned, 30 steps (first bucket 5 MB; 2 sets)", 2, 17.5, 19.5, NOISY,
          "measured -17.6 and -10.5 %, predicted +1.8 and +4.9 %, but the pinned sets measured -2.6 and +13.8 %",
          _CPU16),
    Check("world_size", f"{_IDLE}, pinned to 8 cores, 50 steps (2 ranks -> 1 and -> 4; 2 sets)", 4, 10.4, 32.6, NOISY,
          "the same change measured -35.9 and -15.9 % (1 rank), +14.3 and +43.1 % (4 ranks) in the two sets",
          _CPU16_PINNED),
    Check("world_size", f"{_IDLE}, unpinned, 30 steps (2 ranks -> 1 and -> 4; 2 sets)", 4, 5.7, 22.5, NOISY,
          "1 rank measured -39.2 and -16.6 % in the two sets; 4 ranks +14.1 % in both, predicted +8.2 and +8.7 %",
          _CPU16),
    Check("bucket_cap_mb", f"{_IDLE}, {_ONE_JOB} (caps 1, 5, 25 again, 100 MB; 2 sets)", 8, 1.8, 13.1, CHECKED,
          "the unchanged cap measured +1.5 and +2.6 %, caps 1 and 100 MB agreed between the sets within 4 points; "
          "cap 5 MB did not (-7.6 and -17.5 %), and set b's caps 1 and 5 MB are the two errors above 4 points; "
          "cap 1 MB predicted -15.9 and -12.7 % (-11.3 and -5.7 %, median 2.4 points, before 2026-11-29, when a "
          "recorded bucket also waited for new buckets holding only later gradients)",
          _CPU16_PAIRED),
    Check("first_bucket_cap_mb", f"{_IDLE}, {_ONE_JOB} (first bucket 5 MB; 2 sets)", 2, 8.8, 9.4, CHECKED,
          "measured -7.7 and -4.0 %, predicted +1.6 and +4.2 %: the sign is wrong (the transfer time fitted to "
          "the baseline's allreduces, which ran beside the backward and each other on the same cores, overstates "
          "the last bucket's, which runs alone)", _CPU16_PAIRED),
    Check("world_size", f"{_IDLE}, {_ONE_JOB} (2 ranks -> 1 and -> 4; 2 sets)", 4, 9.7, 13.4, CHECKED,
          "measured -26.4 and -26.1 % (1 rank), +16.7 and +17.6 % (4 ranks), predicted -16.7 / -12.7 and +9.3 / "
          "+7.9 %: gloo's allreduces compete with the backward for the CPU, which the replay does not model",
          _CPU16_PAIRED),
    Check("bucket_cap_mb", f"{_NCCL}, GPU-bound step, {_NCCL_ONE_JOB} (caps 1, 5, 100 MB; {_GPUBOUND}; 2 sets)",
          6, 0.2, 0.7, CHECKED, "the two sets agreed within 0.2 points (quartiles within 1 point); cap 100 MB "
          "measured -2.4 and -2.5 %, predicted -3.1 and -2.9 % (+0.3 and +0.5 %, max 2.9 points, before the GEMMs "
          "beside fewer, larger allreduces were re-timed: tracekit/replay/contention.py, 2026-11-28, ninth session)",
          _NCCL_PAIRED, "gpubound"),
    Check("first_bucket_cap_mb", f"{_NCCL}, GPU-bound step, {_NCCL_ONE_JOB} (first bucket 5 MB; {_GPUBOUND}; 2 sets)",
          2, 0.1, 0.1, CHECKED, "measured -0.1 and -0.0 %, predicted 0.0 %", _NCCL_PAIRED, "gpubound"),
    Check("comm_hook", f"{_NCCL}, GPU-bound step, {_NCCL_ONE_JOB} (bf16 hook; {_GPUBOUND}; 2 sets)", 2, 1.1, 1.5,
          CHECKED, "measured +0.4 and +0.2 %, predicted +1.3 and +1.7 %: the cast kernels are predicted as the hook "
          "run shows them (+1.1 ms of GPU time a step), and the GEMMs beside the halved allreduces re-timed for "
          "their shorter overlap (2026-11-28, ninth session; +2.9 % and 2.5 / 2.7 points before)", _NCCL_PAIRED,
          "gpubound"),
    Check("world_size", f"{_NCCL}, GPU-bound step, {_NCCL_ONE_JOB} (2 ranks -> 1 and -> 4; {_GPUBOUND}; 2 sets)", 4,
          1.1, 1.3, CHECKED, "1 rank measured -8.9 and -9.0 %, predicted -10.3 % (the GEMMs ran 25-31 % "
          "slower beside the allreduces; without that, -0.03 %); 4 ranks measured +1.2 and +1.1 %, predicted "
          "+1.7 and +2.0 % (+0.6 and +0.7 % before the GEMMs beside the longer allreduces were re-timed, "
          "2026-11-28, ninth session)", _NCCL_PAIRED, "gpubound"),
    Check("bucket_cap_mb", f"{_NCCL}, CPU-bound steps, {_NCCL_ONE_JOB} (caps 1, 5, 100 MB; {_NCCL_SHAPES})",
          24, 2.1, 15.6, CHECKED, "the paired changes agreed between the sets within 3.1 points: the transformer's "
          "caps 1, 5 and 100 MB measured +24.6 / +23.2 / +19.4, +14.3 / +12.5 / +10.8 and -13.4 / -10.3 / -15.4 %, "
          "predicted +21.0 / +22.8 / +28.6, +10.9 / +13.0 / +13.5 and -5.2 / -9.4 / -2.5 %; GPT-2 +23.3 / +22.3, "
          "+16.3 / +13.2 and -6.3 / -6.5 % measured, +32.0 / +20.9, +20.4 / +11.5 and -4.6 / -4.3 % predicted; the "
          "toy MLP's cap 100 MB -15.9 / -14.5 / -16.9 % measured, -6.4 / -6.5 / -1.4 % predicted (the largest "
          "errors: fewer, larger buckets save more than their launch work). Since 2026-11-28 a bucket's launch work "
          "is its hook window's work less the profiler's cost of its own events; scaled by the thread's average "
          "rate before, it was about half of that (median 5.8 points then, the caps right in sign and order at "
          "about half the size)", _NCCL_PAIRED, _CPU_SHAPES),
    Check("first_bucket_cap_mb", f"{_NCCL}, CPU-bound steps, {_NCCL_ONE_JOB} (first bucket 5 MB; {_NCCL_SHAPES})",
          8, 1.6, 3.8, CHECKED, "measured -3.8 / -0.2 / +0.8 % (toy MLP), +0.3 / +1.3 / -2.8 % (transformer) and "
          "+2.0 / -1.4 % (GPT-2), predicted 0.0 / 0.0 / 0.0, -1.4 / -0.2 / -1.1 and +0.2 / -0.8 %", _NCCL_PAIRED, _CPU_SHAPES),
    Check("comm_hook", f"{_NCCL}, CPU-bound steps, {_NCCL_ONE_JOB} (bf16 hook; {_NCCL_SHAPES})", 8, 0.6, 6.6,
          CHECKED, "measured +10.1 / +8.1 / +8.9 % (toy MLP, 537 MB of gradients a step), +1.6 / +2.1 / +0.1 % and "
          "+1.5 / +1.2 % (GPT-2), predicted +8.2 / +8.5 / +2.2, +2.3 / +2.7 / +1.9 and +2.2 / +1.6 % (the third "
          "toy MLP +2.6 % before the contention re-timing of 2026-11-28, ninth session: max 6.2 points): the cast "
          "kernels at the trace's copy speed and the hook's CPU work, 59.6 us per bucket, fitted on the first set "
          "(its three shapes: 1.9, 0.9 and 0.7 points) and held out on the five later runs (median 0.7, max 5.5 "
          "points when fitted; 6.2 since queued GPU operations keep no launch latency, 2026-11-28; before the "
          "CPU work, 2.2 and 10.5). A probe that timed the hook on a small DDP model (136-198 us a "
          "bucket) over-predicted the change 2-8x and was not adopted: docs/whatif.md",
          _NCCL_PAIRED, _CPU_SHAPES),
    Check("world_size", f"{_NCCL}, CPU-bound steps, {_NCCL_ONE_JOB} (2 ranks -> 1 and -> 4; {_NCCL_SHAPES})",
          16, 3.2, 28.0, NOISY, "the same change measured -33.4 and -16.6 % (toy MLP, 1 rank), -14.6 and -3.3 % "
          "(transformer, 1 rank), +7.3 and +12.9 % (toy MLP, 4 ranks) in the two sets; predicted -5.4 / -2.8, "
          "-4.5 / -5.7 and +6.5 / +7.7 % (one rank sheds NCCL's kernel launches since 2026-11-28, seventh session: "
          "-3.2 / -0.5 and -3.3 / -4.5 % before; the rest of its measured gain, every CPU operator faster, is not "
          "modelled); GPT-2 -3.2 and +3.3 % measured, -4.8 and +1.7 % predicted; the third sets (1 and 4 ranks): "
          "toy MLP -8.5 / +1.6 % measured, -11.9 / +16.6 % predicted, transformer -9.2 / +6.3 and -8.7 / +0.9 %, "
          "GPT-2's second -5.6 / +2.5 and -1.8 / +1.0 % (median 2.4, max 30.2 points before the launches were "
          "shed)", _NCCL_PAIRED, _CPU_SHAPES),
    Check("bucket_cap_mb", f"{_X2}, {_NCCL_ONE_JOB} (caps 1, 5, 100 MB; {_X2_HELD_OUT})", 9, 4.2, 12.6, CHECKED,
          "the transformer's and GPT-2's caps 1 and 5 MB measured +21.1 / +12.8 and +22.1 / +14.5 %, predicted "
          "+26.7 / +15.2 and +29.4 / +18.2 % (+14.4 / +8.2 and +13.0 / +8.0 % with the launch work of before "
          "2026-11-28: median 6.5 points); the toy MLP's cap 100 MB -20.6 % measured, -8.0 % predicted (the largest "
          "error)", _NCCL_X2),
    Check("first_bucket_cap_mb", f"{_X2}, {_NCCL_ONE_JOB} (first bucket 5 MB; {_X2_HELD_OUT})", 3, 4.1, 4.6, CHECKED,
          "measured -2.5, -4.5 and -4.1 % (GPT-2, transformer, toy MLP), predicted -0.8, +0.1 and 0.0 %", _NCCL_X2),
    Check("comm_hook", f"{_X2}, {_NCCL_ONE_JOB} (bf16 hook; {_X2_HELD_OUT})", 3, 2.3, 3.1, CHECKED,
          "measured +4.6 (toy MLP), +0.8 and +0.6 %, predicted +7.7, +3.1 and +1.5 % with the hook's CPU work of "
          "the 4 x H200 host (59.6 us a bucket; without it -0.5, 0.0 and -0.2 %: errors 5.1, 0.8 and 0.8 points): "
          "this host's hook cost less per bucket", _NCCL_X2),
    Check("world_size", f"{_X2}, {_NCCL_ONE_JOB} (2 ranks -> 1; {_X2_HELD_OUT})", 3, 3.1, 19.1, NOISY,
          "1 rank measured -23.5 % (toy MLP; -33.4, -16.6 and -8.5 % in the 4 x H200 sets), -7.0 and -5.2 %, "
          "predicted -4.4, -4.0 and -2.5 % (NCCL's kernel launches shed since 2026-11-28, seventh session: -2.2 and "
          "-2.7 % before, median 4.3, max 21.3 points; GPT-2's trace not kept: its prediction is the model's before; "
          "the rest of the measured gain, every CPU operator faster, is not modelled)", _NCCL_X2),
    Check("bucket_cap_mb", f"{_X2B}, {_NCCL_ONE_JOB} (caps 1, 5, 100 MB; {_X2B_HELD_OUT})", 9, 3.4, 11.9, CHECKED,
          "the transformer's and GPT-2's caps 1, 5 and 100 MB measured +23.8 / +20.4, +13.8 / +13.8 and -14.2 / "
          "-9.4 %, predicted +26.2 / +17.1, +13.5 / +9.4 and -4.2 / -1.4 % (the transformer's -2.6 % before the "
          "contention re-timing of 2026-11-28, ninth session); the toy MLP's cap 100 MB measured "
          "-1.4 % on this host (-14.5 to -20.6 % on the others), predicted -13.3 % (the largest error). With the "
          "launch work of before 2026-11-28: median 8.6, max 11.9 points", _NCCL_X2B),
    Check("first_bucket_cap_mb", f"{_X2B}, {_NCCL_ONE_JOB} (first bucket 5 MB; {_X2B_HELD_OUT})", 3, 0.3, 1.1,
          CHECKED, "measured -1.5, -1.5 and -0.3 % (GPT-2, transformer, toy MLP), predicted -1.2, -0.4 and 0.0 %",
          _NCCL_X2B),
    Check("comm_hook", f"{_X2B}, {_NCCL_ONE_JOB} (bf16 hook; {_X2B_HELD_OUT})", 3, 1.6, 4.5, CHECKED,
          "measured +0.1, +1.2 and +1.1 %, predicted +0.7, +2.8 and +5.5 % (GPT-2, transformer, toy MLP): as on the "
          "first 2 x H200 host, the hook cost less CPU per bucket than the 59.6 us of the 4 x H200 host", _NCCL_X2B),
    Check("world_size", f"{_X2B}, {_NCCL_ONE_JOB} (2 ranks -> 1; {_X2B_HELD_OUT})", 3, 12.8, 14.7, NOISY,
          "1 rank measured -14.4, -17.3 and -20.0 % (GPT-2, transformer, toy MLP; -5.2, -7.0 and -23.5 % on the "
          "first 2 x H200 host), predicted -6.2, -4.5 and -5.3 % (NCCL's kernel launches shed since 2026-11-28, "
          "seventh session: -3.3 and -3.4 % before, median 14.0, max 16.6 points; GPT-2's trace not kept: its "
          "prediction is the model's before; the rest of the measured gain is not modelled)", _NCCL_X2B),
    Check("world_size", f"{_X2W}, {_NCCL_ONE_JOB} (2 ranks -> 1; {_X2W_HELD_OUT})", 5, 1.7, 25.1, NOISY,
          "1 rank measured -9.1, -27.6 (toy MLPs 8 x 4096, 16 x 2048), -13.4, -2.2 (transformers) and -1.0 % (GPT-2), "
          "predicted -10.4, -2.4, -4.1, -2.0 and -2.6 % (-9.1, -0.4, -3.2, -0.9 and -2.2 % without the shed "
          "launches: median 1.3, max 27.2 points); the toy MLP 16 x 2048 and the transformer 1024 x 8 gain more "
          "than their NCCL launches, every CPU operator faster, which is not modelled", _NCCL_X2W),
    Check("bucket_cap_mb", f"{_H100X2}, {_NCCL_ONE_JOB} (caps 1, 5, 100 MB; {_H100X2_HELD_OUT})", 9, 3.0, 8.1,
          CHECKED, "the transformer's and GPT-2's caps 1, 5 and 100 MB measured +16.4 / +21.8, +9.9 / +15.6 and "
          "-11.5 / -7.8 %, predicted +22.8 / +22.5, +12.2 / +13.0 and -5.2 / -3.6 %; the toy MLP's cap 100 MB "
          "-12.8 % measured, -4.7 % predicted (the largest error). With the model at the start of 2026-11-28: "
          "median 6.0, max 12.2 points (GPT-2's caps 1 and 5 MB +9.6 and +5.4 % predicted)", _NCCL_H100X2),
    Check("first_bucket_cap_mb", f"{_H100X2}, {_NCCL_ONE_JOB} (first bucket 5 MB; {_H100X2_HELD_OUT})", 3, 1.1,
          2.3, CHECKED, "measured -2.3, -1.0 and -1.3 % (toy MLP, transformer, GPT-2), predicted 0.0, 0.0 and "
          "-0.2 %", _NCCL_H100X2),
    Check("comm_hook", f"{_H100X2}, {_NCCL_ONE_JOB} (bf16 hook; {_H100X2_HELD_OUT})", 3, 1.4, 3.1, CHECKED,
          "measured +9.9, +1.7 and +1.6 % (toy MLP, transformer, GPT-2), predicted +6.8, +3.1 and +1.2 %",
          _NCCL_H100X2),
    Check("bucket_cap_mb", f"{_X2D}, {_NCCL_ONE_JOB} (caps 1, 5, 25, 100, 200, 400 MB; {_X2D_SHAPES})", 18, 0.9,
          2.0, CHECKED, "the 16 x 4096 MLP's merges from cap 25 MB (100, 200, 400 MB) measured -2.9, -2.7 and -4.4 %, "
          "predicted -1.9, -1.0 and -2.4 %, and its split back from cap 100 MB +3.0 %, predicted +1.4 %; the "
          "16 x 2048 MLP's merges -1.5 and -2.7 %, predicted -3.1 and -3.5 %, but its splits from cap 100 MB (+1.6 and "
          "+2.1 % measured) predicted +0.1 %: in the cap-100 run its GEMM ran 1.98x slower beside the long "
          "allreduces, above the 1.5 bound, and is not modelled from it; the transformer's caps within 1.2 % of each "
          "other. With the model before the "
          "re-timing: median 1.4, max 6.1 points, every merge of the 16 x 4096 MLP predicted slower (+0.5 to +2.7 %)",
          _NCCL_X2D),
    Check("comm_hook", f"{_X2D}, {_NCCL_ONE_JOB} (bf16 hook; {_X2D_SHAPES})", 6, 0.9, 2.0, CHECKED,
          "measured +0.7 / +3.7 % (16 x 4096 MLP from caps 25 / 100 MB), -0.7 / +0.7 % (16 x 2048 MLP) and +2.0 / "
          "+1.9 % (transformer), predicted +1.1 / +1.7, -1.0 / +0.9 and +0.4 / +0.4 % (before the re-timing +2.9 / "
          "+2.9, +0.9 / +0.9 and +0.5 / +0.5 %: median 1.5, max 2.2 points)", _NCCL_X2D),
    Check("world_size", f"{_H100X2}, {_NCCL_ONE_JOB} (2 ranks -> 1; {_H100X2_HELD_OUT})", 3, 3.2, 17.7, NOISY,
          "1 rank measured -18.5, -7.3 and -2.6 % (toy MLP, transformer, GPT-2; quartiles 17, 9 and 13 points "
          "wide), predicted -0.8, -4.5 and -5.9 % by the model before NCCL's kernel "
          "launches were shed (2026-11-28, seventh session; traces not kept: not recomputed)", _NCCL_H100X2),
    Check("bucket_cap_mb", f"{_NCCL}, CPU-bound steps, {_CROSS} (toy MLP, transformer, GPT-2 of the first set; "
          "2026-11-27)", 42, 3.8, 37.3, CHECKED,
          "from the transformer's cap-100 run cap 1 MB is predicted +79 %, measured +42 % (splits from a cap-100 run "
          "are over-predicted on every transformer run, whether its backward thread ran faster or slower than the "
          "cap-1 run's: not located); from the toy MLP's cap-100 run every smaller cap is predicted 2.5 % faster, "
          "measured 17-19 % slower (not located)", _CROSS_X4, "toy4096|tfm1024|gpt2bf16"),
    Check("bucket_cap_mb", f"{_NCCL}, GPU-bound step, {_CROSS} ({_GPUBOUND}; 2026-11-27)", 15, 0.3, 2.7, CHECKED,
          "every change within 2.7 points; cap 100 MB measured 2.3-2.4 % faster than the others, predicted 0.1-0.4 % "
          "slower by the model before the GEMMs beside communication were re-timed (2026-11-28, ninth session; "
          "traces not kept, not recomputed: the held-out 2 x H200 check of that model is below)", _CROSS_X4,
          "gpubound"),
    Check("bucket_cap_mb", f"{_X2C}, {_CROSS} ({_X2C_SHAPES})", 60, 3.6, 19.8, CHECKED,
          "merges (fewer, larger buckets) median 2.4, max 15.3 points; splits 5.0 / 19.8: splits predicted from "
          "the transformers' cap-100 runs are too large (+58 and +53 % for cap 1 MB, measured +38 and +37 %), merges "
          "from GPT-2's and the 16 x 2048 MLP's cap-1 and cap-5 runs too small (cap 5 -> 100 MB: -8 and -17 % "
          "predicted, -23 and -33 % measured). One launch work per bucket for the whole run (the mean, or a clipped "
          "mean, instead of each bucket's own) helped the first set and not these (mean error 5.9 -> 6.2 / 6.4 "
          "points): not adopted", _CROSS_X2),
    Check("bucket_cap_mb", f"{_NCCL}, separate runs (caps 1, 5, 25 again, 100 MB; {_ALL_SHAPES})", 15, 9.5, 46.8,
          NOISY, "the unchanged cap measured -0.3, +2.2, +11.2 and +5.8 % (GPT-2) apart, and the transformer's cap "
          "1 MB +67.8 % here against +24.6 % timed in one job, GPT-2's +45.0 against +23.3 %", _NCCL_SEPARATE),
    Check("first_bucket_cap_mb", f"{_NCCL}, separate runs (first bucket 5 MB; {_ALL_SHAPES})", 4, 5.4, 9.6, NOISY,
          "the unchanged cap measured -0.3, +2.2, +11.2 and +5.8 % apart", _NCCL_SEPARATE),
    Check("comm_hook", f"{_NCCL}, separate runs (bf16 hook; {_ALL_SHAPES})", 4, 11.9, 48.5, NOISY,
          "measured +56.6, +11.0 and +17.2 % on the CPU-bound shapes here against +10.1, +1.6 and +1.5 % timed in "
          "one job",
          _NCCL_SEPARATE),
    Check("world_size", "NCCL, 1 GPU grown to 2 and 4 (a 1-rank run; the paired truth timed 1, 2 and 4 ranks in one "
          "job, steps alternating, 40 rounds), GPU-bound steps (toy MLP 16 x 4096 fp32 batch 512 on a 4 x H200 and three "
          "2 x H200 hosts, a bf16 transformer 1024 x 8 batch 64 on the three 2 x H200 hosts; 2026-11-28)", 8, 1.9, 3.2,
          CHECKED, "the MLP measured +9.8, +10.2, +10.2 and +9.9 % for a second rank, predicted +7.2, +7.0, +7.1 and "
          "+7.1 %: compute beside the allreduces (1.28x slower, set before these runs) is most of it; the transformer "
          "+0.3, 0.0 and +0.5 %, predicted +1.1 % (the third 2 x H200 host was run after the model was set: held out)",
          ("whatif_scenarios_2026-11-28_h200x4_grow", "whatif_scenarios_2026-11-28_h200x2_grow",
           "whatif_scenarios_2026-11-28_h200x2b_grow", "whatif_scenarios_2026-11-28_h200x2c_grow"), "gpubound|tfmbig",
          from_one_rank=True),
    Check("world_size", "NCCL, 1 GPU grown to 2 and 4 (a 1-rank run; the paired truth timed in one job, 40 rounds), "
          "CPU-bound steps (toy MLP 8 x 4096 fp32 batch 64 on all four hosts, a bf16 transformer batch 8 and HF GPT-2 "
          "bf16 on the 2 x H200 hosts; 2026-11-28)", 11, 16.3, 30.2, NOISY,
          "the same toy MLP measured +50.2, +6.8, +29.9 and +6.7 % for a second rank on four hosts (predicted +20.0, "
          "+23.4, +2.6 and +24.9 %); where the step waits for the CPU, the ranks' skew and NCCL's enqueue work decide "
          "the change, and the model takes every rank to be the recorded one (the transformer: +19.7, +8.9 and +2.9 % "
          "measured, 0.0, 0.0 and +1.5 % predicted; GPT-2 +4.1 and +13.7 %, predicted +0.6 and +1.5 %)",
          ("whatif_scenarios_2026-11-28_h200x4_grow", "whatif_scenarios_2026-11-28_h200x2_grow",
           "whatif_scenarios_2026-11-28_h200x2b_grow", "whatif_scenarios_2026-11-28_h200x2c_grow"),
          "toy4096|tfm1024/|gpt2bf16", from_one_rank=True),
    Check("world_size", f"{_NCCL}, separate runs (2 ranks -> 1 and -> 4; {_ALL_SHAPES})", 8, 6.4, 27.8, NOISY,
          "the transformer's 1 and 4 ranks measured +0.2 and -6.1 % here, -14.6 and +3.2 % timed in one job",
          _NCCL_SEPARATE),
    Check("busbw_gbps", f"{_NCCL}, the network's bus bandwidth given as timed by scripts/nccl_busbw.py (305 GB/s "
          f"default, 41.8 GB/s with NCCL_MAX_NCHANNELS=2) between the default and the slower network made for real, "
          f"separate runs ({_ALL_SHAPES}; 2026-11-28)", 6, 7.5, 14.7, CHECKED,
          "as --bandwidth-x with the ratio of the two runs' own fitted bus bandwidths (37.7-40.6 and 267-305 GB/s, "
          "the timed 41.8 and 305 GB/s within 10 %): toy MLP +192.6 / -63.9 % predicted, +201.2 / -66.8 % "
          "measured; GPU-bound MLP +57.5 / -42.1 %, +64.0 / -39.0 %; transformer +31.2 / -0.9 %, +18.6 / -15.7 %",
          ("whatif_scenarios_2026-11-28_h200x4_busbw",)),
    Check("bandwidth_x", f"{_NCCL}, a slower network made for real (NCCL_MAX_NCHANNELS=2: 7.30x less all-reduce "
          f"bandwidth, scripts/nccl_busbw.py) and back, separate runs ({_ALL_SHAPES})", 6, 11.7, 18.9, CHECKED,
          "the change (+19 to +201 %) is far above the runs' noise; toy MLP measured +201.2 / -66.8 %, predicted "
          "+220.0 / -63.9 %; GPU-bound MLP +64.0 / -39.0 %, predicted +74.8 / -42.1 % (-18.1 % until 2026-11-28: "
          "the slow run's allreduces, queued behind each other, kept their recorded launch-to-start times of "
          "15-20 ms); transformer +18.6 / -15.7 %, predicted +31.3 / -0.9 % (allreduces overlapped the backward "
          "more, or slowed it less, than the replay keeps)", (*_NCCL_SEPARATE, "whatif_scenarios_2026-11-27_h200x4_bandwidth")),
    Check("optimize_ddp", "NCCL, 4 GPUs (4 x H200), GPU-bound step (toy MLP 16 x 4096 fp32 batch 256, torch.compile "
          "inductor), each of the two committed runs (sample_traces/h200x4_compare: DDPOptimizer on and off) predicted "
          "from the other", 2, 9.3, 12.8, CHECKED,
          "ddp_optimizer from the one-graph run -18.3 % predicted, -12.6 % measured; no_optimization from the split run "
          "+27.2 %, +14.4 %: the backward's kernels ran 44 % longer beside the allreduces there, the model's contention "
          "factor is 1.28; both ranked as measured",
          ("whatif_optimize_ddp_h200x4_compare",)),
    Check("cuda_graphs", "1 GPU, compiled models profiled in the default mode and timed with reduce-overhead "
          "(benchmarks/gpu/cuda_graphs.sh)", 0, None, None, NOT_RUN,
          "the batch was not run: the graph-launch cost (20 us default) and the model are unvalidated"),
)


def checks_for(changes: list[str], one_rank: bool | None = None, backend: str | None = None) -> list[Check]:
    """The checks of the scenario fields in ``changes``, in :data:`CHECKS` order; with ``one_rank`` (the run has one
    rank, or several) the ``world_size`` checks of that kind of run only (:attr:`Check.from_one_rank`); with
    ``backend`` those of runs over it and of single GPUs (:attr:`Check.backend`)."""
    wanted = set(changes)
    return [c for c in CHECKS if c.change in wanted
            and (one_rank is None or c.change != "world_size" or c.from_one_rank == one_rank)
            and (backend is None or c.backend in (None, backend))]


# -- ranking: do the predictions order the variants as the paired timings do? ----------------------------------

@dataclass(frozen=True)
class Ranking(_FromResults):
    """How often the predictions ordered two variants of one baseline as their paired timing did.

    A *pair* is two variants of the same profiled baseline, the baseline itself among them (its change is
    0 % with no spread), from a paired timing (every variant timed in one job, steps alternating: each
    variant's change has quartiles over rounds). Only pairs whose measured changes differ beyond those
    quartiles count (**separated**: the interquartile ranges do not overlap); closer pairs have no measured
    order to check. A separated pair is **ranked as measured** when the predicted changes differ in the same
    direction; a predicted tie counts against. ``tests/test_whatif_validation.py`` recomputes the figures
    from the files (:func:`ranked_pairs`)."""

    #: where the variants were timed
    setting: str
    #: separated pairs, and those the prediction orders as measured
    pairs: int
    ranked: int
    #: one sentence: which pairs it did not order as measured, and why
    misses: str
    #: result files under benchmarks/results/ (name fragments) and the regex picking the baselines in them
    sources: tuple[str, ...] = ()
    variants: str = "."


def ranked_pairs(rows: Iterable[dict[str, Any]]) -> tuple[int, int, list[tuple[str, str, str]]]:
    """(separated pairs, pairs ranked as measured, the misses as (baseline run, change a, change b)) over
    the paired result rows (``variant`` ``RUN:CHANGES``, ``predicted_delta_pct``, ``measured_delta_pct``
    and its quartiles ``measured_delta_q1_pct``/``measured_delta_q3_pct``); see :class:`Ranking`."""
    by_base: dict[str, list[tuple[str, float, float, float, float]]] = {}
    for r in rows:
        if r.get("measured_delta_q1_pct") is None:
            continue
        base = r["variant"].rsplit(":", 1)[0]
        items = by_base.setdefault(base, [("baseline", 0.0, 0.0, 0.0, 0.0)])
        items.append((r["changes"], r["predicted_delta_pct"], r["measured_delta_pct"], r["measured_delta_q1_pct"],
                      r["measured_delta_q3_pct"]))
    pairs = ranked = 0
    misses = []
    for base, items in by_base.items():
        for a, b in itertools.combinations(items, 2):
            if not (a[4] < b[3] or b[4] < a[3]):
                continue  # the quartiles overlap: no measured order
            pairs += 1
            if (a[2] - b[2]) * (a[1] - b[1]) > 0:
                ranked += 1
            else:
                misses.append((base, a[0], b[0]))
    return pairs, ranked, misses


RANKINGS: tuple[Ranking, ...] = (
    Ranking("graph break removed, 1 GPU (H100, H200), both twins timed in one process, steps alternating (15 pairs "
            "of twins, CPU- and GPU-bound)", 11, 11, "none",
            (_PAIRED, _PAIRED_H200)),
    Ranking(f"bucket caps (the unchanged one again among them), first bucket, 1 and 4 ranks; {_IDLE}, {_ONE_JOB} "
            "(2 sets)", 22, 22, "none",
            _CPU16_PAIRED),
    Ranking(f"bucket caps, first bucket, bf16 hook, 1 and 4 ranks; {_NCCL}, GPU-bound step, {_NCCL_ONE_JOB} "
            f"({_GPUBOUND}; 2 sets)", 38, 38, "none", _NCCL_PAIRED, "gpubound"),
    Ranking(f"bucket caps, first bucket, bf16 hook, 1 and 4 ranks; {_NCCL}, CPU-bound steps, {_NCCL_ONE_JOB} "
            f"({_NCCL_SHAPES})", 109, 108, "the toy MLP's cap 100 MB against 1 rank in set a (-15.9 against -33.4 % "
            "measured, -6.3 against -3.2 % predicted; -6.0 on 2026-11-27). Before the hook's CPU work was modelled (2026-11-27), 103: "
            "the toy MLP's hook (+10.1 % measured, -0.5 % predicted) against four variants in set a and against "
            "cap 100 MB in set c", _NCCL_PAIRED, _CPU_SHAPES),
    Ranking(f"bucket caps, first bucket, bf16 hook, 1 rank; {_X2}, {_NCCL_ONE_JOB} ({_X2_HELD_OUT})", 32, 31,
            "the toy MLP's cap 1 MB against the baseline (-4.1 % measured, quartiles -9.8 .. -1.8 %; predicted "
            "+0.1 %: every 64 MiB parameter is its own bucket under either cap)", _NCCL_X2),
    Ranking(f"bucket caps, first bucket, bf16 hook, 1 rank; {_X2B}, {_NCCL_ONE_JOB} ({_X2B_HELD_OUT})", 34, 33,
            "the toy MLP's cap 100 MB against 1 rank (-1.4 against -20.0 % measured, -13.3 against -3.4 % "
            "predicted)", _NCCL_X2B),
    Ranking(f"bucket caps, first bucket, bf16 hook, 1 rank; {_H100X2}, {_NCCL_ONE_JOB} ({_H100X2_HELD_OUT})", 34,
            34, "none", _NCCL_H100X2),
    Ranking(f"bucket caps, bf16 hook; {_X2D}, {_NCCL_ONE_JOB} ({_X2D_SHAPES})", 39, 35,
            "from the 16 x 4096 MLP's cap-100 run, cap 200 MB against the run's own (+0.4 % measured, -1.3 % "
            "predicted); from the 16 x 2048 MLP's cap-25 run, cap 5 MB against it (+0.5 % measured, -0.2 % "
            "predicted); from its cap-100 run, the bf16 hook against caps 25 and 5 MB (+0.7 against +1.6 and +2.1 % "
            "measured, +0.9 against +0.1 % predicted: the splits' slowdown not modelled from that run). 18 of 39 "
            "before the re-timing (2026-11-28, ninth session)", _NCCL_X2D),
    Ranking(f"bucket caps from every profiled layout; {_NCCL}, CPU-bound steps, {_CROSS} (toy MLP, transformer, GPT-2 "
            "of the first set; 2026-11-27)", 65, 62, "from the toy MLP's cap-100 run, caps 1, 5 and 25 MB against "
            "the run's own (measured 17-19 % slower, predicted 2.5 % faster)", _CROSS_X4, "toy4096|tfm1024|gpt2bf16"),
    Ranking(f"bucket caps from every profiled layout; {_NCCL}, GPU-bound step, {_CROSS} ({_GPUBOUND}; 2026-11-27)",
            15, 0, "every separated pair is cap 100 MB against a smaller cap: measured 2.3-2.4 % faster, predicted "
            "0.1-0.4 % slower by the model before the GEMMs beside communication were re-timed (2026-11-28, ninth "
            "session; traces not kept, not recomputed)", _CROSS_X4, "gpubound"),
    Ranking(f"bucket caps from every profiled layout; {_X2C}, {_CROSS} ({_X2C_SHAPES})", 89, 88,
            "from the toy MLP 8 x 4096's cap-1 run, cap 100 MB against the run's own (-12.0 % measured, +0.2 % "
            "predicted; from its cap-25 run, with the same eight 64 MiB buckets, -16.4 %: a what-if inherits the "
            "run it is predicted from)", _CROSS_X2),
)


def rankings_for(n_scenarios: int) -> list[Ranking]:
    """The ranking checks to quote beside ``n_scenarios`` scenarios: all of them when there is at least one
    (a scenario is ranked against the baseline, a sweep's against each other), none without."""
    return list(RANKINGS) if n_scenarios else []
