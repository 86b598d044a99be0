"""What a what-if scenario is: :class:`Scenario`, the values of the options the families of
:mod:`tracekit.replay.changes` declare (and :class:`~tracekit.replay.family.Context`, what every scenario reads).

Apart from :mod:`tracekit.replay.scenarios`, which applies them, so that the advice can name scenarios without
importing the engine.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tracekit.errors import ConfigError
from tracekit.replay.changes import FAMILIES, OPTIONS
from tracekit.replay.family import Context

__all__ = ["Context", "Scenario"]


class _ScenarioMethods:
    """What every :class:`Scenario` does beyond holding its options' values."""

    def changes(self) -> dict[str, Any]:
        """The options set (not None, not False), in :data:`~tracekit.replay.changes.OPTIONS` order (the JSON
        ``changes``)."""
        return {k: v for k, v in ((k, getattr(self, k)) for k in OPTIONS) if v is not None and v is not False}

    def replace(self, **values: Any) -> Scenario:
        """A copy with ``values`` changed."""
        return dataclasses.replace(self, **values)  # type: ignore[type-var]

    @property
    def name(self) -> str:
        return " ".join(k.replace("_", "-") if v is True else f"{k.replace('_', '-')}={v:g}"
                        if isinstance(v, float) else f"{k.replace('_', '-')}={v}" for k, v in self.changes().items())

    def validate(self) -> None:
        """:class:`ConfigError` for a value out of range: the bounds of every option, then each family's own
        check, then the choices."""
        for bound in ("above", "at_least"):
            for o in OPTIONS.values():
                v, low = getattr(self, o.name), getattr(o, bound)
                if v is None or low is None:
                    continue
                if not (v > low if bound == "above" else v >= low):
                    raise ConfigError(f"{o.flag} must be {'>' if bound == 'above' else '>='} {low:g}, got {v}")
        for f in FAMILIES:
            why = f.check(self) if f.check is not None else None  # type: ignore[arg-type]
            if why:
                raise ConfigError(why)
        for o in OPTIONS.values():
            v = getattr(self, o.name)
            if o.choices and v is not None and v not in o.choices:
                raise ConfigError(f"{o.flag} must be {' or '.join(o.choices)}, got {v}")


#: Changes predicted together: a frozen dataclass with one field per option of every scenario family
#: (:data:`tracekit.replay.changes.OPTIONS`, in that order; None / False: unchanged), made from the declarations
#: so that an option is declared once. ``Scenario(bucket_cap_mb=5)``; ``sc.bucket_cap_mb``; ``sc.replace(...)``.
Scenario = dataclasses.make_dataclass(
    "Scenario", [(o.name, bool if o.kind is bool else o.kind | None, False if o.kind is bool else None)
                 for o in OPTIONS.values()],
    bases=(_ScenarioMethods,), frozen=True)
Scenario.__module__ = __name__
