"""Opening trace files: plain or gzip text (a byte-order mark dropped), whether a file may be an sacct
dump (then read through its SWF conversion, `slurm/sacct.py`), damage in a gzip stream reported
as such, a file's content digest, and the range of an SWF field."""

from __future__ import annotations

import gzip
import hashlib
import math
import zlib
from pathlib import Path

from paretosched.errors import UserError

MAX_FIELD = 1e12  # seconds (30,000 years), KB (1 PB per core), ids: sums of energy and time stay finite


def open_text(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    # utf-8-sig: a byte-order mark (editors on Windows write one) is not part of the first line
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def in_swf_range(v: float) -> bool:
    """Whether a value fits an SWF field (the one rule of the SWF reader and of `trace import`)."""
    try:
        return math.isfinite(v) and abs(v) <= MAX_FIELD
    except OverflowError:  # an int beyond any float (NCPUS of 400 digits)
        return False


def bar_separated(path: str) -> bool:
    """Whether the first non-blank line has a `|`, as an sacct -P header has: other files never load
    the sacct reader (its module and regular expressions cost a `simulate` ~5 ms)."""
    try:
        with open_text(Path(path)) as fh:
            first = next((line for line in fh if line.strip()), "")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error):
        return False  # (reading the trace itself reports it)
    return "|" in first


def path_is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def require_intact_gzip(path: Path, line_no: int) -> None:
    """A UserError naming the damage when `path` is a gzip file that does not decompress whole."""
    if not path_is_gzip(path):
        return
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
    except (OSError, EOFError, zlib.error) as exc:
        raise UserError(f"{path}:{line_no}: corrupt or truncated gzip data ({exc})") from None


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
