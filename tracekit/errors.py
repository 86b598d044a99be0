"""Exceptions raised by the tracekit library.

The CLI turns every :class:`TracekitError` into a one-line message and the
exit code stored on the class; anything else is a bug and shows a traceback.
"""

from __future__ import annotations


class TracekitError(Exception):
    """Base class of every error tracekit raises on purpose."""

    exit_code = 2


class TraceInputError(TracekitError):
    """A trace path is missing, unreadable or not a valid profiler trace."""

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

    def __reduce__(self):  # noqa: ANN204 - keeps the error picklable across parse worker processes
        return (type(self), (self.path, self.problem))


class NotATraceError(TraceInputError):
    """A JSON file that is no profiler trace at all (no ``traceEvents`` list). Found in a folder beside
    traces it is ignored with a warning (a results or config file); given by name, it is an error."""


class TraceLoadWarning(UserWarning):
    """Something about the inputs is suspicious but analysis can continue (the message names the file)."""


class TraceSetError(TracekitError):
    """The traces are individually valid but do not form one run (duplicate ranks, mixed runs)."""


class ConfigError(TracekitError):
    """A bad option or option combination, rejected before any work starts."""


class OutputError(TracekitError):
    """The report cannot be written where asked (missing directory, full disk, no permission)."""


class RunError(TracekitError):
    """A profiled run failed (a rank raised, timed out or was killed)."""

    exit_code = 1


class ReplayError(TracekitError):
    """Nothing in the traces can be replayed (no steps, no CPU side): the message says what is missing."""


class ScenarioError(TracekitError):
    """A what-if scenario cannot be predicted for this run (``tracekit whatif --bucket-cap-mb ...``); the
    message says which scenario and why."""


class MissingDependencyError(TracekitError):
    """An optional package is needed for the requested feature."""

    def __init__(self, package: str, feature: str, install: str | None = None) -> None:
        self.args_ = (package, feature, install)
        hint = install or f"pip install {package}"
        super().__init__(f"{feature} needs the optional package '{package}': {hint}")

    def __reduce__(self):  # noqa: ANN204
        return (type(self), self.args_)
