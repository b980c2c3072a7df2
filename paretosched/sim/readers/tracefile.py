"""Opening trace files: plain or gzip text (a byte-order mark dropped), an sacct dump read through its
SWF conversion, damage in a gzip stream reported as such, and a file's content digest."""

from __future__ import annotations

import gzip
import hashlib
import zlib
from pathlib import Path
from typing import Any

from paretosched.errors import UserError


def open_text(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    # utf-8-sig: a byte-order mark (editors on Windows write one) is not part of the first line
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def sacct_reader(path: str) -> Any:
    """An sacct dump's SWF conversion, or None. An sacct -P header is |-separated: other files
    never load the sacct reader (its module and regular expressions cost a `simulate` ~5 ms)."""
    try:
        with open_text(Path(path)) as fh:
            first = next((line for line in fh if line.strip()), "")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error):
        return None  # (reading the trace itself reports it)
    if "|" not in first:
        return None
    from paretosched.sim.readers.slurm.sacct import is_sacct_dump, sacct_as_swf

    return sacct_as_swf(path) if is_sacct_dump(path) else None


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
