"""The plotly.js an HTML report carries: lean and inline by default, or a link to plotly's CDN.

``inline`` (default): the page holds plotly.js itself and opens offline. The report only draws
bar charts (timeline lanes, breakdown and bucket bars), so it inlines plotly's own *basic*
distribution (``plotly.js-basic-dist-min``: the scatter, bar and pie trace types, 1.2 MB instead of
the full bundle's 4.8 MB), shipped gzipped in ``static/``. That bundle is used when the installed
plotly (which writes the figure JSON) targets the same plotly.js major version and every figure
uses only its trace types; otherwise the full bundle of the installed plotly is inlined, so a page
never mixes figure JSON and a plotly.js that may not read it.

``cdn``: a ``<script src>`` to plotly's CDN for the installed plotly's version, as plotly itself
writes it (with its subresource-integrity hash): a page of a few hundred KB that needs the network
to draw its charts.
"""

from __future__ import annotations

import functools
import gzip
import re
from collections.abc import Iterable
from pathlib import Path

from tracekit.errors import ConfigError

MODES = ("inline", "cdn")
#: plotly's basic distribution, gzipped (see static/PLOTLY_LICENSE.txt)
BASIC_BUNDLE = Path(__file__).parent / "static" / "plotly-basic.min.js.gz"
BASIC_VERSION = "4.1.1"
#: the trace types the basic distribution has
BASIC_TRACE_TYPES = frozenset({"scatter", "bar", "pie"})


def installed_version() -> str:
    """The plotly.js version the installed plotly writes figures for (and bundles)."""
    from plotly.offline import get_plotlyjs_version

    return get_plotlyjs_version()


def basic_fits(trace_types: Iterable[str], version: str | None = None) -> bool:
    """Whether the basic bundle can draw figures of ``trace_types`` written by plotly for ``version``."""
    version = version or installed_version()
    return version.split(".")[0] == BASIC_VERSION.split(".")[0] and set(trace_types) <= BASIC_TRACE_TYPES


@functools.cache
def _basic_source() -> str:
    return gzip.decompress(BASIC_BUNDLE.read_bytes()).decode("utf-8")


def _cdn_tag() -> str:
    import plotly.graph_objects as go
    import plotly.io as pio

    html = pio.to_html(go.Figure(), include_plotlyjs="cdn", full_html=False)
    m = re.search(r'<script[^>]*\bsrc="[^"]+"[^>]*></script>', html)
    if m is None:  # pragma: no cover - plotly changed how it writes the tag
        raise ConfigError("--plotly cdn: this plotly version does not say which CDN script to load")
    return m.group(0)


def plotly_script(mode: str = "inline", trace_types: Iterable[str] = ("bar",)) -> str:
    """The ``<script>`` element that gives the page plotly.js (see the module doc for ``mode``)."""
    if mode not in MODES:
        raise ConfigError(f"--plotly {mode!r}: choose one of {', '.join(MODES)}")
    if mode == "cdn":
        return _cdn_tag()
    if basic_fits(trace_types):
        src, which = _basic_source(), f"plotly.js basic {BASIC_VERSION}"
    else:
        from plotly.offline import get_plotlyjs

        src, which = get_plotlyjs(), f"plotly.js {installed_version()} (full bundle)"
    # the bundles hold no "</script"; guard anyway: the page must not end its script early
    src = src.replace("</script", "<\\/script")
    return f"<!-- {which} -->\n<script>{src}</script>"
