"""Comparing runs: two analysed runs (:mod:`.diff`, ``tracekit diff``), profiled variants (:mod:`.variants`,
``tracekit profile --compare``) and two benchmark sweeps (:mod:`.bench`, ``tracekit bench diff``).
"""
