"""plotly.js for the HTML pages: one `plotly.min.js` shared by the pages of a folder.

Every page (report.html, explorer.html, run.html, training.html) inlined its own 4.6 MB copy.
Now a page loads `plotly.min.js` from its own folder, written there once; a page opened without
it says so instead of staying blank. plotly's own `include_plotlyjs="directory"` writes the same
tag but only from `write_html` of a single figure, and never replaces a stale file: our pages
hold several figures and outlive plotly upgrades. `standalone` inlines plotly.js for a page
that must travel alone (mailed, attached).
"""

from __future__ import annotations

import os
from pathlib import Path

from plotly.offline import get_plotlyjs

from paretosched.search.files import atomic_write_bytes, link_error

PLOTLY_FILE = "plotly.min.js"

# shown when the shared file is missing (the page was copied without it)
_MISSING = ("<script>if (!window.Plotly) document.addEventListener('DOMContentLoaded', () => "
            "document.body.insertAdjacentHTML('afterbegin', '<p style=\"color:#b00\">The charts need " + PLOTLY_FILE
            + " next to this page: copy it along.</p>'));"
            "</script>")


def plotly_script(folder: Path, standalone: bool = False, shared_in: Path | None = None) -> str:
    """The <script> elements that load plotly.js for a page in `folder` (writing the shared file
    there, or in `shared_in`, a folder above it: RUN/analysis/ pages share RUN/plotly.min.js)."""
    js = get_plotlyjs()
    if standalone:
        return f"<script type=\"text/javascript\">{js}</script>"
    where = Path(folder) if shared_in is None else Path(shared_in)
    write_shared(where, js)
    src = Path(os.path.relpath(where / PLOTLY_FILE, Path(folder))).as_posix()
    return f"<script src=\"{src}\" charset=\"utf-8\"></script>{_MISSING}"


def write_shared(folder: Path, js: str | None = None) -> Path:
    """`folder/plotly.min.js`, written when missing or from another plotly version."""
    js = get_plotlyjs() if js is None else js
    path = Path(folder) / PLOTLY_FILE
    data = js.encode("utf-8")
    if path.is_symlink():  # even to the same bytes: nothing in a run directory may be a link we write
        raise link_error(path)
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return path
    except FileNotFoundError:
        pass
    # a temporary file of its own (another command may write it at once), never through a link
    atomic_write_bytes(path, data, fsync=False)
    return path
