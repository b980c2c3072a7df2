"""Text for plotly: names written by users (baselines, gene paths, processor types) shown literally.

Plotly renders a subset of HTML in trace text, legend names, titles, annotations and hover
labels (<b>, <br>, <a href>, <span style=...>); a baseline named `<span style="font-size:90px">`
would draw a 90 px label, an `<a href>` a link. Plotly decodes `&lt;`, `&gt;` and `&amp;`
back to the characters, so escaping those three shows the name exactly as written.
"""

from __future__ import annotations

import html
from typing import Any


def plotly_text(value: Any) -> str:
    """`value` as text plotly shows literally (None as an empty string)."""
    return "" if value is None else html.escape(str(value), quote=False)
