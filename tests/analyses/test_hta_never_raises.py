"""``--hta`` never raises: whatever HTA does, one warning line per rank and the report still prints.

HTA is replaced by fakes that fail in the ways real HTA versions do (a ``KeyError``
when its own rank detection disagrees with the rank map, results keyed by another
rank, unexpected columns, nonsense values), so these tests run without HTA.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from click.testing import CliRunner

from tracekit.analyses import hta_check
from tracekit.analyses.registry import AnalysisWarning
from tracekit.traces.loader import load

try:
    from tests.tracebuilder import TraceBuilder
except ImportError:  # tests/ not a package
    from tracebuilder import TraceBuilder


def two_ranks(d):
    for r in (0, 1):
        tb = TraceBuilder(rank=r, world_size=2)
        tb.step(1, 0, 100)
        tb.kernel("gemm", 10, 20, launch_at_us=5)
        tb.nccl_allreduce(40, 10, launch_at_us=30, nelems=1000)
        tb.write(d / f"rank{r}.json.gz")
    return d


class _T:
    def __init__(self, traces):
        self.traces = traces


def fake(overlap=None, temporal=None, init_error=None):
    """A stand-in for ``hta.trace_analysis.TraceAnalysis``."""

    class Fake:
        def __init__(self, trace_files, trace_dir, include_last_profiler_step):
            if init_error is not None:
                raise init_error
            self.t = _T({r: pd.DataFrame({"stream": [7, -1]}) for r in trace_files})

        def get_comm_comp_overlap(self, visualize):
            if isinstance(overlap, Exception):
                raise overlap
            return overlap

        def get_temporal_breakdown(self, visualize):
            if isinstance(temporal, Exception):
                raise temporal
            return temporal

    return Fake


GOOD_TEMPORAL = pd.DataFrame({"rank": [0, 1], "idle_time(us)": [1.0, 2.0], "compute_time(us)": [3.0, 4.0]})
CASES = {
    "init_keyerror": dict(init_error=KeyError(3)),
    "init_valueerror": dict(init_error=ValueError("no trace files")),
    "overlap_raises": dict(overlap=KeyError(1), temporal=GOOD_TEMPORAL),
    "overlap_other_ranks": dict(overlap=pd.DataFrame({"rank": [5, 6], "comp_comm_overlap_pctg": [1.0, 2.0]}),
                                temporal=GOOD_TEMPORAL),
    "overlap_bad_columns": dict(overlap=pd.DataFrame({"rank": [0, 1], "what": [1, 2]}), temporal=GOOD_TEMPORAL),
    "overlap_rank_strings": dict(overlap=pd.DataFrame({"rank": ["a", "b"], "comp_comm_overlap_pctg": [1.0, 2.0]}),
                                 temporal=GOOD_TEMPORAL),
    "overlap_none": dict(overlap=None, temporal=GOOD_TEMPORAL),
    "temporal_not_frame": dict(overlap=pd.DataFrame({"rank": [0, 1], "comp_comm_overlap_pctg": [1.0, 2.0]}),
                               temporal=[1, 2, 3]),
    "temporal_duplicate_ranks": dict(overlap=pd.DataFrame({"rank": [0, 1], "comp_comm_overlap_pctg": [1.0, 2.0]}),
                                     temporal=pd.DataFrame({"rank": [0, 0], "idle_time(us)": [1.0, 2.0]})),
}


def use(monkeypatch, cls) -> None:
    """Drive ``cls`` instead of HTA (through its constructor, as HTA without serial loading is)."""
    monkeypatch.setattr(hta_check, "_import_hta", lambda: cls)
    monkeypatch.setattr(hta_check, "_load_hta", lambda c, files, d, last: c(files, d, last))


@pytest.mark.parametrize("case", sorted(CASES))
def test_crosscheck_never_raises(tmp_path, monkeypatch, case):
    use(monkeypatch, fake(**CASES[case]))
    ts = load(two_ranks(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = hta_check.hta_table(ts)  # the registered table: hta_crosscheck plus the warnings
    assert out["rank"].tolist() == [0, 1]
    errs = out.set_index("rank")["hta_error"]
    failed = [r for r in (0, 1) if errs[r]]
    assert failed, "every case fails for at least one rank"
    msgs = [str(w.message) for w in caught if issubclass(w.category, AnalysisWarning)]
    # exactly one warning line per failing rank, naming it
    assert sorted(msgs) == sorted(f"--hta: rank {r}: {errs[r]}" for r in failed)
    assert all("\n" not in m for m in msgs)


def test_file_map_failure_is_caught(tmp_path, monkeypatch):
    use(monkeypatch, fake())

    def broken(traces, tmp):
        raise OSError("symlink not permitted")
    monkeypatch.setattr(hta_check, "_trace_files", broken)
    ts = load(two_ranks(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = hta_check.hta_crosscheck(ts)
    assert out["hta_error"].str.contains("symlink not permitted").all()


def test_cli_prints_report_and_one_warning_per_rank(tmp_path, monkeypatch):
    from tracekit.cli import main

    use(monkeypatch, fake(init_error=KeyError(3)))
    r = CliRunner().invoke(main, ["analyze", str(two_ranks(tmp_path)), "--hta"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    warn = [ln for ln in r.output.splitlines() if ln.startswith("warning: --hta")]
    assert len(warn) == 2 and "rank 0" in warn[0] and "rank 1" in warn[1] and "KeyError" in warn[0]
    assert "Per-rank breakdown" in r.output
