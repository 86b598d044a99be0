"""The what-if scenario families, one module each (:class:`~tracekit.replay.scenario_spec.Scenario` is a set of
their options' values).

Every module of this package declares ``SCENARIO``, a :class:`~tracekit.replay.family.Family`; they are
found here (:data:`FAMILIES`, by position), so adding a scenario is adding a module (docs/architecture.md, "Adding
a scenario"). :data:`OPTIONS` is every option of every family in that order: what ``tracekit whatif`` offers,
the keywords :func:`tracekit.whatif` takes, the keys of a scenario's JSON ``changes``, and the docs' table
(:func:`options_table`).
"""

from __future__ import annotations

import importlib
import pkgutil
from tracekit.replay.family import Family, Option


def _discover() -> tuple[Family, ...]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):  # __main__: the docs writer; _launches: a helper of the families
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        family = getattr(module, "SCENARIO", None)
        if not isinstance(family, Family):
            raise TypeError(f"{module.__name__} declares no SCENARIO (a tracekit.replay.family.Family)")
        found.append(family)
    families = tuple(sorted(found, key=lambda f: f.position))
    if len({f.position for f in families}) != len(families):
        raise TypeError("two scenario families share a position: " + ", ".join(f"{f.name}={f.position}"
                                                                             for f in families))
    return families


#: every scenario family, by position
FAMILIES: tuple[Family, ...] = _discover()
#: every option, by family position and then as its family lists them
OPTIONS: dict[str, Option] = {o.name: o for f in FAMILIES for o in f.options}
if len(OPTIONS) != sum(len(f.options) for f in FAMILIES):
    raise TypeError("two scenario families declare the same option")


#: the docs' markers around :func:`options_table` (docs/whatif.md)
MARKERS = ("<!-- whatif:options:begin -->", "<!-- whatif:options:end -->")


def options_table() -> str:
    """The docs' table of scenario options (docs/whatif.md, between :data:`MARKERS`), in :data:`OPTIONS` order."""
    rows = ["| option | value | what it changes | needs from the run |", "|---|---|---|---|"]
    for f in FAMILIES:
        for o in f.options:
            value = "flag" if o.kind is bool else " \\| ".join(o.choices) if o.choices else (o.metavar or "VALUE")
            rows.append(f"| `{o.flag}` | {value} | {o.help.replace('|', '/')} | {f.needs} |")
    return "\n".join(rows)


def update(text: str) -> str:
    """``text`` (docs/whatif.md) with the options table between :data:`MARKERS` rewritten; ValueError without them."""
    begin, end = MARKERS
    if begin not in text or end not in text:
        raise ValueError(f"the page lacks the markers {begin} ... {end}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{options_table()}\n{end}{tail}"
