"""Measure what the profiler costs per recorded event on this machine (run.json ``profiler_cost``).

Why: on launch-bound steps the profiled window runs up to ~1.9x slower than the real step,
and the replay (``tracekit whatif``) predicts the undisturbed step by taking the
profiler's own cost out of every recorded event. That cost depends on the machine, the
torch/kineto/CUPTI versions and the profiler settings, so each run measures it with the
settings it profiled with. The run's own unprofiled step times are never used here: they
are what the prediction is checked against.

Method (per rank, in two halves, :class:`Calibration`): a loop of ``n`` training steps of a
small MLP (6 x Linear(32, 32) + ReLU, batch 8: forward, backward, SGD; the operator mix of
a real step, nested autograd ranges included) is timed ``reps`` times with the profiler off
**before the timed steps** (:meth:`Calibration.before`) and ``reps`` times with the profiler
on **after the profiled window** (:meth:`Calibration.after`; same activities,
``record_shapes``, ``with_stack`` as the run). The cost is the fastest on-loop minus the
fastest off-loop (noise on a shared host only adds time), divided by the events one
profiled loop records.

Why the off-loops come first: a finished profiler session that recorded the CPU leaves the
process slower (on an H100 host the same step ran 18-40 % slower after one short session
than before any, with or without DDP; CUDA-only sessions left no trace:
``benchmarks/gpu/profiler_after_effect.py``). The run's unprofiled steps are timed before any
profiling, so off-loops timed after the window would measure a slower baseline and
under-state the cost (1.3-3.3 µs per event against the 3.8-7.6 µs the windows carried).

- **CPU runs:** the loop runs on the CPU; ``cpu_op_ns`` = that cost per recorded operator.
- **CUDA runs:** the loop runs on the GPU, wrapped in DDP on the run's process group when
  the run trains with DDP (DDP's reducer hooks and their recorded ranges raise the cost per
  event by 40-70 %, measured with ``benchmarks/gpu/profiler_cost_probe.py``); backward runs on
  autograd's device thread. One figure per recorded event, operators and runtime calls
  alike (``cpu_op_ns`` = ``runtime_ns``): splitting it between the two from one loop is
  ill-conditioned (a 10 % error in the operator figure moved the per-launch one by 3 µs),
  and a single figure predicted the ten H100 runs of docs/whatif-evidence.md best.

**Compiled CUDA runs** (``--dynamo`` other than ``none``) time a second probe: the same small
model with its forward under ``torch.compile`` with the run's backend (compiled before the
run's compile facts start counting, its code its own, so it adds no frame, recompile or
bucket log to the run's ``compile`` section). A recorded event of compiled code costs the
profiler 1.3-2.3x one of eager code on an H100 (Triton launch ranges with their launch
arguments, ``cuLaunchKernelEx``, compiled-region ranges:
``benchmarks/results/profiler_cost_compiled_h100.txt``), so the run's figure is
the compiled probe's; both probes' figures are kept under ``probes``. On 16 inductor runs
(docs/whatif-evidence.md, "A compiled probe for compiled runs") it predicted the unprofiled step about
as well as the eager probe (|error| median 22.1 % against 23.2 %): both are noise-bound there. CPU runs keep the eager
probe only: compiling the probe's C++ kernels would add 10-40 s to a run on a small host, and
whether compiled CPU events cost more is not measured.

Negative results (noise on an idle machine) are clipped at 0. The figures are written per
rank and their median in ``profiler_cost``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from tracekit.profile.quiet import drop_kineto_markers

#: training steps of the small model per timed loop, its depth, and interleaved repetitions of the off/on pair
LOOP_STEPS = 200
#: ... fewer where one loop would take longer than this: GPU runs (a few seconds in all), CPU runs (CI)
LOOP_TARGET_NS = {"cuda": 100e6, "cpu": 20e6}
LAYERS = 6
REPS = 9
#: steps per loop under DDP: fixed, so every rank runs as many collectives (about 0.1-0.2 s a loop on an H100)
DDP_LOOP_STEPS = 50


def _loop(op: Any, n: int, sync: Any) -> float:
    sync()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        op()
    sync()
    return float(time.perf_counter_ns() - t0)


def _profiled(torch: Any, activities: list[Any], record_shapes: bool, with_stack: bool) -> Any:
    return torch.profiler.profile(activities=activities, record_shapes=record_shapes, with_stack=with_stack)


def _count(prof: Any) -> tuple[int, int]:
    """(CPU operators, runtime calls) recorded by a finished ``torch.profiler.profile``."""
    ops = launches = 0
    for e in prof.profiler.kineto_results.events():  # the raw events: no FunctionEvent tree to build
        if str(e.device_type()).rsplit(".", 1)[-1] != "CPU":
            continue
        name = e.name()
        if name.startswith(("cuda", "cu", "hip")) and not name.startswith("cudnn"):
            launches += 1
        elif not name.startswith("ProfilerStep"):
            ops += 1
    return ops, launches


def _tiny_step(torch: Any, device: str, ddp: bool = False, compiled: str | None = None) -> Any:
    """One training step of a small MLP on ``device``: forward, backward (autograd's device thread on
    CUDA), SGD update: the operator mix of a real step (nested autograd ranges, launches) at tiny sizes.
    ``ddp``: wrapped in DistributedDataParallel on the default process group (every rank must call).
    ``compiled``: the forward under ``torch.compile`` with that backend, compiled at the first call."""
    # its own seed, without moving the run's random streams (the calibration now runs before the timed steps)
    gpus = [torch.cuda.current_device()] if device == "cuda" else []
    with torch.random.fork_rng(devices=gpus):
        torch.manual_seed(0)
        model = _ProbeNet(torch)
        x = torch.randn(8, 32, device=device)
    model.to(device)
    if compiled:
        # an instance attribute compiles _ProbeNet.forward, a code object no run model shares: the run's
        # dynamo caches, counters of recompiles and cache limits never see the probe
        model.forward = torch.compile(model.forward, backend=compiled)
    if ddp:  # as the run does: DDP around the compiled module (DDPOptimizer applies)
        ids = [torch.cuda.current_device()] if device == "cuda" else None
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step() -> None:
        model(x).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def _ProbeNet(torch: Any) -> Any:  # noqa: N802 - builds the probe module (torch is imported lazily)
    """The probe model: LAYERS x (Linear(32, 32), ReLU) in a module whose ``forward`` is defined here."""

    class ProbeNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = torch.nn.Sequential(*[m for _ in range(LAYERS)
                                              for m in (torch.nn.Linear(32, 32), torch.nn.ReLU())])

        def forward(self, x: Any) -> Any:
            return self.body(x)

    return ProbeNet()


#: one probe's figures where nothing was measured
_NO_FIGURES: dict[str, Any] = {"cpu_op_ns": None, "runtime_ns": None, "ops_per_rep": None, "launches_per_rep": None}


class _Probe:
    """One probe step and its timings: off-loops (before any profiler ran), events and on-loops."""

    def __init__(self, label: str, op: Any) -> None:
        self.label, self.op = label, op
        self.offs: list[float] = []


class Calibration:
    """One rank's profiler-cost calibration in two halves (module doc): :meth:`before` before the timed
    steps, :meth:`after` after the profiled window. ``ddp`` (CUDA runs of DDP models, process group
    initialised): the small step runs under DDP; every rank of the group must call both halves.
    ``compiled``: the run's ``torch.compile`` backend (CUDA runs): a compiled probe is timed too and
    gives the run's figure; call :meth:`prepare` before the run's compile facts start counting."""

    def __init__(self, device: str, activities: list[Any], *, record_shapes: bool = False,
                 with_stack: bool = False, ddp: bool = False, compiled: str | None = None,
                 n: int = LOOP_STEPS, reps: int = REPS) -> None:
        import torch

        self.torch, self.activities, self.record_shapes, self.with_stack = torch, activities, record_shapes, with_stack
        self.reps = reps
        cpu_acts = [a for a in activities if a == torch.profiler.ProfilerActivity.CPU]
        #: nothing to measure: a cuda-only capture records no CPU operators
        self.enabled = bool(cpu_acts)
        self.on_gpu = device == "cuda" and len(cpu_acts) < len(activities)
        self.ddp = (self.on_gpu and ddp and torch.distributed.is_available()
                    and torch.distributed.is_initialized())
        self.compiled = compiled if self.on_gpu and compiled not in (None, "none") else None
        self.n = DDP_LOOP_STEPS if self.ddp else n
        self.probes: list[_Probe] = []
        self._sync: Any = torch.cuda.synchronize if self.on_gpu else (lambda: None)

    def prepare(self) -> None:
        """Build the probe steps and run each twice (first-call initialisation; the compiled one compiles)."""
        if not self.enabled or self.probes:
            return
        device = "cuda" if self.on_gpu else "cpu"
        self.probes = [_Probe("eager", _tiny_step(self.torch, device, self.ddp))]
        if self.compiled:
            self.probes.append(_Probe(self.compiled, _tiny_step(self.torch, device, self.ddp, self.compiled)))
        for p in self.probes:
            _loop(p.op, 2, self._sync)

    def before(self) -> None:
        """Time each probe step ``reps`` times unprofiled (before any profiler ran)."""
        if not self.enabled:
            return
        self.prepare()
        if not self.ddp:  # under DDP every rank must run as many steps (collectives): n stays fixed
            target = LOOP_TARGET_NS["cuda" if self.on_gpu else "cpu"]
            slowest = max(_loop(p.op, 1, self._sync) for p in self.probes)
            self.n = max(3, min(self.n, int(target / max(slowest, 1.0))))
        for p in self.probes:
            p.offs = [_loop(p.op, self.n, self._sync) for _ in range(self.reps)]

    def after(self) -> dict[str, Any]:
        """Time each probe ``reps`` times profiled; this rank's figures: ``{"cpu_op_ns", "runtime_ns",
        "ops_per_rep", "launches_per_rep", "reps", "ddp", "probe", "probes"}`` (None figures where nothing
        was measured): the top-level figures are the last probe's (the compiled one where timed), ``probes``
        maps each probe's label to its figures."""
        out: dict[str, Any] = {**_NO_FIGURES, "reps": self.reps, "ddp": self.ddp, "probe": None, "probes": {}}
        if not self.enabled or not self.probes or not self.probes[0].offs:  # before() measured nothing
            return out
        with drop_kineto_markers():  # each profiled loop starts and stops a profiler: kineto's markers off stderr
            for p in self.probes:
                out["probes"][p.label] = self._profiled_figures(p)
        out.update(out["probes"][self.probes[-1].label], probe=self.probes[-1].label)
        return out

    def _profiled_figures(self, p: _Probe) -> dict[str, Any]:
        torch, sync = self.torch, self._sync
        with _profiled(torch, self.activities, self.record_shapes, self.with_stack) as prof:
            _loop(p.op, self.n, sync)
        ops, launches = _count(prof)
        ons = []
        for _ in range(self.reps):
            with _profiled(torch, self.activities, self.record_shapes, self.with_stack):
                _loop(p.op, max(1, self.n // 8), sync)  # the profiler's own start-up, outside the timed loop
                ons.append(_loop(p.op, self.n, sync))
        extra = min(ons) - min(p.offs)
        out = dict(_NO_FIGURES)
        if not self.on_gpu:
            out.update(cpu_op_ns=max(0.0, extra / ops) if ops else None, ops_per_rep=ops)
        elif ops + launches:
            per_event = max(0.0, extra / (ops + launches))
            out.update(cpu_op_ns=per_event, runtime_ns=per_event, ops_per_rep=ops, launches_per_rep=launches)
        return out


def calibrate(device: str, activities: list[Any], *, record_shapes: bool = False, with_stack: bool = False,
              ddp: bool = False, compiled: str | None = None, n: int = LOOP_STEPS,
              reps: int = REPS) -> dict[str, Any]:
    """Both halves of a :class:`Calibration` back to back: for a process in which no profiler ran yet."""
    cal = Calibration(device, activities, record_shapes=record_shapes, with_stack=with_stack, ddp=ddp,
                      compiled=compiled, n=n, reps=reps)
    cal.before()
    return cal.after()


def summarize(per_rank: list[dict[str, Any] | None], *, device: str, activities: str, record_shapes: bool,
              with_stack: bool) -> dict[str, Any] | None:
    """run.json ``profiler_cost`` from the ranks' :func:`calibrate` results (median over ranks)."""
    rows = [r for r in per_rank if r]
    if not rows:
        return None

    def med(key: str, rs: list[dict[str, Any]] = rows) -> float | None:
        vals = [r[key] for r in rs if isinstance(r.get(key), (int, float))]
        return statistics.median(vals) if vals else None

    labels = list((rows[0].get("probes") or {}))
    probes = {label: {"cpu_op_ns": med("cpu_op_ns", per), "runtime_ns": med("runtime_ns", per),
                      "ops_per_rep": per[0].get("ops_per_rep"), "launches_per_rep": per[0].get("launches_per_rep")}
              for label in labels
              for per in [[r["probes"][label] for r in rows if label in (r.get("probes") or {})]]}
    return {
        "cpu_op_ns": med("cpu_op_ns"), "runtime_ns": med("runtime_ns"), "device": device,
        "activities": activities, "record_shapes": record_shapes, "with_stack": with_stack,
        "ops_per_rep": rows[0].get("ops_per_rep"), "launches_per_rep": rows[0].get("launches_per_rep"),
        "reps": rows[0].get("reps"),
        "per_rank": [{"rank": r.get("rank"), "cpu_op_ns": r.get("cpu_op_ns"), "runtime_ns": r.get("runtime_ns")}
                     for r in rows],
        "ddp": bool(rows[0].get("ddp")),
        "probe": rows[0].get("probe"), "probes": probes,
        "method": "a loop of small training steps (on the GPU in CUDA runs, under DDP when the run uses it, its "
                  "forward compiled with the run's backend in compiled CUDA runs) timed "
                  "with the profiler off and on, same profiler settings as the run; fastest on-loop minus fastest "
                  "off-loop (off-loops timed before the run's timed steps, on-loops after its window), per recorded event; "
                  "median over ranks",
    }
