"""Running the analyses: load the traces, run every registered table over them, in this process, forked
workers or a dask cluster (:mod:`.pipeline` is the entry, :mod:`.run` the table pass, :mod:`.per_rank`
and :mod:`.engine` where the per-rank pass runs). The tables themselves live in :mod:`tracekit.analyses`.
"""
