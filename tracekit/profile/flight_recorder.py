"""PyTorch's flight recorder in profiled runs: switch it on, dump it when a rank fails, read it with torch's analyser.

* :func:`apply_env` (every rank, before the process group exists): ``TORCH_FR_BUFFER_SIZE`` /
  ``TORCH_NCCL_TRACE_BUFFER_SIZE`` (:data:`BUFFER_ENTRIES` collectives), ``TORCH_NCCL_DUMP_ON_TIMEOUT=1``
  and ``TORCH_FR_DUMP_TEMP_FILE=<run>/fr/rank_`` -- defaults only, a value the user exported wins.
  With NCCL the watchdog then dumps ``fr/rank_<R>`` on a collective timeout by itself.
* :func:`dump` (a rank whose run raised, e.g. its collective timed out): write this rank's buffer to
  ``fr/rank_<R>``. Gloo records into the flight recorder since torch 2.7 but does not dump on timeout,
  and (torch 2.13) leaves the buffer's ``pg_config`` empty (no group names, no ranks), which makes
  torch's analyser fail with a KeyError; we fill it from ``torch.distributed``'s own group table and
  say so in the dump (``pg_config_source``).
* :func:`summarize` (the launcher, after a failure): torch's own loader and analyser
  (``torch.distributed.flight_recorder.components``: ``read_dir``, ``build_db``, as the ``fr_trace``
  script) over the dumps; returns the collective each rank last entered and the collectives some
  ranks never joined. A rank that was stopped or killed leaves no dump: then torch's analyser cannot
  match that rank, and the summary says whose dumps are missing.
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import pickle
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

#: ring-buffer size: the last this many collectives per rank (torch's own default when enabled is 2000)
BUFFER_ENTRIES = 2000
FR_DIR = "fr"
DUMP_PREFIX = "rank_"


def apply_env(run_dir: str | os.PathLike[str] | None, env: MutableMapping[str, str] | None = None) -> None:
    """Enable the flight recorder for process groups created after this call (defaults only)."""
    env = os.environ if env is None else env
    size = env.get("TORCH_FR_BUFFER_SIZE") or env.get("TORCH_NCCL_TRACE_BUFFER_SIZE") or str(BUFFER_ENTRIES)
    env.setdefault("TORCH_FR_BUFFER_SIZE", size)
    if not _knows_fr_names():  # the old name; newer torch warns on every rank when it is set
        env.setdefault("TORCH_NCCL_TRACE_BUFFER_SIZE", size)
    env.setdefault("TORCH_NCCL_DUMP_ON_TIMEOUT", "1")
    if run_dir is not None:
        (Path(run_dir) / FR_DIR).mkdir(parents=True, exist_ok=True)  # NCCL's watchdog does not create it
        env.setdefault("TORCH_FR_DUMP_TEMP_FILE", str(Path(run_dir) / FR_DIR / DUMP_PREFIX))


def _knows_fr_names() -> bool:
    """Whether this torch reads ``TORCH_FR_BUFFER_SIZE`` (2.7 and later)."""
    try:
        import torch

        major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    except (ImportError, ValueError):
        return True
    return (major, minor) >= (2, 7)


def remove_empty_dir(run_dir: str | os.PathLike[str]) -> None:
    """After a clean run: drop ``fr/`` when no rank dumped into it."""
    try:
        (Path(run_dir) / FR_DIR).rmdir()
    except OSError:
        pass  # not empty (a dump is kept), already gone, or another rank removed it


def dump(run_dir: str | os.PathLike[str], rank: int, backend: str | None) -> str | None:
    """Write this rank's flight-recorder buffer to ``<run_dir>/fr/rank_<R>``; return why not, or None when written.

    Never raises: the rank is already failing.
    """
    try:
        import torch
        import torch.distributed as dist

        c10d = torch._C._distributed_c10d
        names = ("_dump_nccl_trace", "_dump_fr_trace") if backend == "nccl" else ("_dump_fr_trace",)
        data = None
        for name in names:
            fn = getattr(c10d, name, None)
            if fn is not None:
                data = pickle.loads(fn())
                if data.get("entries"):
                    break
        if not data or not data.get("entries"):
            return "the flight recorder holds no collectives (not enabled, or none ran)"
        if dist.is_initialized() and not _groups_known(data):
            data["pg_config"] = _pg_config_from_c10d()
            data["pg_config_source"] = "tracekit (the buffer's pg_config was empty)"
        out = Path(run_dir) / FR_DIR
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / f".partial{os.getpid()}"
        tmp.write_bytes(pickle.dumps(data))
        os.replace(tmp, out / f"{DUMP_PREFIX}{rank}")
        return None
    except Exception as e:  # noqa: BLE001 - a diagnostic must not mask the rank's own error
        return f"{type(e).__name__}: {e}"


def _groups_known(data: dict[str, Any]) -> bool:
    """Whether ``pg_config`` names every group the entries use, with its ranks (what torch's analyser needs)."""
    cfg = data.get("pg_config") or {}
    used = {str((e.get("process_group") or ("",))[0]) for e in data.get("entries") or []}
    return all(name in cfg and (cfg[name] or {}).get("ranks") not in (None, "", "[]") for name in used)


def _pg_config_from_c10d() -> dict[str, dict[str, str]]:
    """``pg_config`` as the flight recorder writes it (name -> {name, desc, ranks}), from c10d's group table."""
    from torch.distributed import distributed_c10d as c10d

    out = {}
    for pg, name in c10d._world.pg_names.items():
        ranks = sorted(c10d._world.pg_group_ranks.get(pg, {}))
        desc = getattr(pg, "group_desc", "") or ""
        out[str(name)] = {"name": str(name), "desc": desc, "ranks": str(ranks)}
    return out


def summarize(run_dir: str | os.PathLike[str], world_size: int) -> dict[str, Any]:
    """What the flight-recorder dumps in ``<run_dir>/fr`` say, read with torch's analyser.

    Returns ``{"dumps": [ranks], "missing_dumps": [ranks], "last_entered": {rank: entry},
    "not_joined": [{"seq", "op", "group", "input_sizes", "missing_ranks"}], "analyser": str,
    "unavailable": reason | None}`` where an entry is ``{"seq" (collective_seq_id within its group),
    "op" (profiling_name), "group" ("name:desc"), "input_sizes", "state", "created_unix"}``.
    """
    fr = Path(run_dir) / FR_DIR
    files = sorted(fr.glob(f"{DUMP_PREFIX}*")) if fr.is_dir() else []
    out: dict[str, Any] = {"dumps": [], "missing_dumps": list(range(world_size)), "last_entered": {},
                           "not_joined": [], "analyser": None, "unavailable": None}
    if not files:
        out["unavailable"] = "no rank wrote a flight-recorder dump"
        return out
    try:
        from torch.distributed.flight_recorder.components.builder import build_db
        from torch.distributed.flight_recorder.components.config_manager import JobConfig
        from torch.distributed.flight_recorder.components.loader import read_dir
    except ImportError as e:
        out["unavailable"] = f"this torch has no flight-recorder analyser ({e})"
        return out
    args = JobConfig().parse_args([str(fr), "-p", DUMP_PREFIX, "--allow-incomplete-ranks"])
    with _quiet(), _keeps_gc():
        try:
            details, version = read_dir(args)
        except Exception as e:  # noqa: BLE001 - torch's loader asserts on what it cannot read
            out["unavailable"] = f"torch's flight-recorder loader failed: {type(e).__name__}: {e}"
            return out
        ranks = sorted(int(d["rank"]) for d in details.values())
        out["dumps"] = ranks
        out["missing_dumps"] = sorted(set(range(world_size)) - set(ranks))
        out["last_entered"] = {int(d["rank"]): _entry(d["entries"][-1]) for d in details.values() if d["entries"]}
        try:
            db = build_db(details, args, version)
        except Exception as e:  # noqa: BLE001
            out["unavailable"] = f"torch's flight-recorder analyser failed: {type(e).__name__}: {e}"
            return out
    out["analyser"] = f"torch.distributed.flight_recorder (build_db, dump version {version})"
    out["not_joined"] = [{"seq": c.collective_seq_id, "op": c.collective_name, "group": c.pg_desc,
                          "input_sizes": c.input_sizes, "missing_ranks": sorted(c.missing_ranks)}
                         for c in db.collectives if c.missing_ranks]
    return out


def _entry(e: dict[str, Any]) -> dict[str, Any]:
    pg = e.get("process_group") or ("", "")
    created = e.get("time_created_ns")
    return {"seq": e.get("collective_seq_id"), "op": e.get("profiling_name"), "group": ":".join(map(str, pg)),
            "input_sizes": e.get("input_sizes"), "state": e.get("state"),
            "created_unix": created / 1e9 if isinstance(created, (int, float)) else None}


@contextlib.contextmanager
def _quiet() -> Any:
    """torch's analyser logs every mismatch to stderr ("Flight Recorder" logger) and prints; keep our summary."""
    lg = logging.getLogger("Flight Recorder")
    saved = lg.disabled
    lg.disabled = True
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        lg.disabled = saved


@contextlib.contextmanager
def _keeps_gc() -> Any:
    """torch's ``read_dir`` disables the garbage collector and never turns it back on."""
    was = gc.isenabled()
    try:
        yield
    finally:
        if was:
            gc.enable()
