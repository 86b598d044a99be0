"""Device peaks for the roofline: dense per-dtype FLOP/s and memory bandwidth of the GPUs users have.

Every figure is the vendor datasheet's **dense** one (NVIDIA quotes its tensor-core headline figures with 2:4
sparsity; they are halved here); docs/ops.md lists each with its source. A GPU is identified from the trace's
``deviceProperties`` name (or ``run.json``'s ``gpu_name``) by :func:`identify`; ``tracekit analyze --peaks
FILE`` replaces the table with a JSON file (:func:`load_peaks`, schema in docs/ops.md).

Keys of a device's ``tflops``: ``fp64``, ``fp32`` (non-tensor FP32), ``tf32``, ``bf16`` (= FP16), ``fp8``
(tensor cores, dense); ``tbps``: memory bandwidth in TB/s (1e12 bytes/s); ``l2_mb``: last-level cache in MB
(1e6 bytes), below which a memory-bound op's data may never reach device memory.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from tracekit.errors import ConfigError

PEAK_KEYS = ("fp64", "fp32", "tf32", "bf16", "fp8")


@dataclass(frozen=True)
class Device:
    """One device's dense peaks: ``tflops`` (dtype key -> TFLOP/s), ``tbps`` (TB/s), ``l2_mb``."""

    name: str
    tflops: tuple[tuple[str, float], ...]
    tbps: float
    l2_mb: float | None = None
    #: a regex on the device name reported by torch (``deviceProperties.name``)
    match: str = ""

    def peak(self, key: str) -> float | None:
        return dict(self.tflops).get(key)


def _d(name: str, match: str, tbps: float, l2_mb: float | None, **tflops: float) -> Device:
    return Device(name, tuple(tflops.items()), tbps, l2_mb, match)


#: the built-in table (sources: docs/ops.md, "Device peaks"); the first match wins, so specific names first
DEVICES: tuple[Device, ...] = (
    _d("H100 PCIe", r"H100.*PCIe", 2.0, 50, fp64=51.2, fp32=51.2, tf32=378.0, bf16=756.5, fp8=1513.0),
    _d("H100 SXM", r"H100(?!.*(NVL|PCIe))", 3.35, 50, fp64=66.9, fp32=66.9, tf32=494.7, bf16=989.4, fp8=1978.9),
    _d("H200", r"H200(?!.*NVL)", 4.8, 50, fp64=66.9, fp32=66.9, tf32=494.7, bf16=989.4, fp8=1978.9),
    _d("A100 40GB SXM", r"A100.*SXM.*40GB|A100-SXM4-40GB", 1.555, 40, fp64=19.5, fp32=19.5, tf32=156.0, bf16=312.0),
    _d("A100 80GB SXM", r"A100.*SXM.*80GB|A100-SXM4-80GB", 2.039, 40, fp64=19.5, fp32=19.5, tf32=156.0, bf16=312.0),
    _d("A100 80GB PCIe", r"A100.*80GB.*PCIe|A100-PCIE-80GB", 1.935, 40, fp64=19.5, fp32=19.5, tf32=156.0,
       bf16=312.0),
    _d("A100 40GB PCIe", r"A100.*PCIE|A100.*PCIe", 1.555, 40, fp64=19.5, fp32=19.5, tf32=156.0, bf16=312.0),
    _d("B200", r"B200", 8.0, 126, fp64=40.0, fp32=80.0, tf32=1100.0, bf16=2250.0, fp8=4500.0),
    _d("L40S", r"L40S", 0.864, 96, fp32=91.6, tf32=183.0, bf16=362.05, fp8=733.0),
    _d("L4", r"\bL4\b", 0.3, 48, fp32=30.3, tf32=60.0, bf16=121.0, fp8=242.5),
    _d("MI300X", r"MI300X", 5.3, 256, fp64=163.4, fp32=163.4, tf32=653.7, bf16=1307.4, fp8=2614.9),
    _d("MI250X", r"MI250X?|MI250X/MI250", 3.2768, 16, fp64=95.7, fp32=95.7, bf16=383.0),
)


def identify(gpu_name: str | None, devices: tuple[Device, ...] = DEVICES) -> Device | None:
    """The device whose ``match`` finds ``gpu_name`` (None: unknown or no name)."""
    if not gpu_name:
        return None
    for d in devices:
        if d.match and re.search(d.match, gpu_name, re.IGNORECASE):
            return d
    return None


class _PeakEntry(msgspec.Struct, forbid_unknown_fields=True):
    match: str
    tbps: float
    tflops: dict[str, float]
    l2_mb: float | None = None
    name: str | None = None


class _PeakFile(msgspec.Struct, forbid_unknown_fields=True):
    devices: list[_PeakEntry]


def load_peaks(path: str | Path) -> tuple[Device, ...]:
    """The devices of a ``--peaks`` JSON file: ``{"devices": [{"match": REGEX, "tbps": TB/s, "tflops":
    {"bf16": ..., "fp32": ...}, "l2_mb": MB (optional), "name": (optional)}]}``; tried before the built-in
    table. Raises :class:`ConfigError` (one line naming the file) when it cannot be read or breaks the schema."""
    p = Path(path)
    try:
        doc = msgspec.json.decode(p.read_bytes(), type=_PeakFile)
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the peaks file ({e.strerror or e})") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise ConfigError(f"{p}: not a peaks file ({e}); see docs/ops.md for its schema") from None
    out = []
    for i, e in enumerate(doc.devices):
        bad = [k for k in e.tflops if k not in PEAK_KEYS]
        if bad or e.tbps <= 0 or any(v <= 0 for v in e.tflops.values()):
            raise ConfigError(f"{p}: devices[{i}]: tflops keys must be {', '.join(PEAK_KEYS)} and every peak > 0")
        try:
            re.compile(e.match)
        except re.error as err:
            raise ConfigError(f"{p}: devices[{i}].match is not a regex ({err})") from None
        out.append(Device(e.name or e.match, tuple(e.tflops.items()), e.tbps, e.l2_mb, e.match))
    return tuple(out)


def override_of(peaks: Any) -> tuple[Device, ...] | None:
    """``AnalyzeOptions.peaks`` as devices: a path (``tracekit.analyze(path, peaks="gpu.json")``) is loaded."""
    if isinstance(peaks, (str, Path)):
        return _load_cached(str(peaks))
    return tuple(peaks) if peaks else None


@functools.lru_cache(maxsize=4)
def _load_cached(path: str) -> tuple[Device, ...]:
    return load_peaks(path)


@functools.lru_cache(maxsize=8)
def table(override: tuple[Device, ...] | None) -> tuple[Device, ...]:
    """The devices tried in order: the ``--peaks`` file's, then the built-in ones."""
    return (*(override or ()), *DEVICES)


def peak_key(category: str, dtype: str | None, tf32: bool) -> str | None:
    """Which peak judges an op: tensor-core peaks for GEMM, convolution and attention by dtype (FP32 against
    TF32 only when TF32 is on), the non-tensor FP32 peak for the rest; None for dtypes without one."""
    matrix = category in ("gemm", "conv", "attention")
    if dtype is None:
        return None
    if dtype in ("bfloat16", "float16"):
        return "bf16" if matrix else "fp32"
    if dtype.startswith("float8"):
        return "fp8" if matrix else "fp32"
    if dtype == "float32":
        return ("tf32" if tf32 else "fp32") if matrix else "fp32"
    if dtype == "float64":
        return "fp64"
    return None


def device_of(gpu_names: list[str], manifest_name: str | None,
              override: tuple[Device, ...] | None) -> tuple[Device | None, str | None]:
    """``(device, the name it was looked up by)``: the trace's first device name, else run.json's."""
    name = gpu_names[0] if gpu_names else manifest_name
    return identify(name, table(override)), name


def as_json(d: Device) -> dict[str, Any]:
    return {"name": d.name, "tbps": d.tbps, "tflops": dict(d.tflops), "l2_mb": d.l2_mb}
