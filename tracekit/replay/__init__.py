"""Replay the profiled window and predict the step the profiler did not disturb (``tracekit whatif``).

Pipeline: traces and the analysis tables (:mod:`tracekit.analyses`) -> a dependency graph of
every rank's CPU threads, GPU streams and collectives (:mod:`tracekit.replay.graph`) -> its
evaluation (:mod:`tracekit.replay.simulate`) twice: as recorded (the self-check: the replay
must reproduce the window) and with the profiler's own cost per event taken out
(:mod:`tracekit.replay.costs`; measured by ``tracekit profile``, :mod:`tracekit.profile.calibrate`)
-> step figures of the window and the prediction (:mod:`tracekit.replay.figures`) ->
:func:`tracekit.replay.api.whatif`. Nothing here imports torch.
"""
