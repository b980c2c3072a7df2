"""Files of a run directory and of the cache, written so that a crash never leaves half a file.

Every file but the evaluation log is replaced atomically: a temporary file in the same
directory, fsync, os.replace, fsync of the directory, so readers see the old or the new file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from paretosched.errors import UserError


# mkstemp creates 0600 files; run directories and the shared cache are often read by a
# group (a colleague opening the front, a second user's run reusing the cache), so atomic
# files get the permissions a plain open() would give them.
def _umask() -> int:
    # /proc first: os.umask(0) to read it would briefly change it for every thread of the process
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes, fsync: bool = True) -> None:
    """Replace `path` with `data` so that readers see the old or the new file, never half."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if fsync:
        _fsync_dir(p.parent)


def atomic_write_text(path: str | Path, text: str, fsync: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync)


def write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=1, allow_nan=False) + "\n")


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file of the run (summary, population); None when missing (older or killed
    runs), a one-line UserError when damaged: the search writes these files atomically, so an
    unreadable one is damage, not a write in progress, and ignoring it would silently drop the
    re-check and the verdicts from the report."""
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text (the file is damaged)") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg}; the file is damaged)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror})") from None
    if not isinstance(value, dict):
        raise UserError(f"{path}: expected a JSON object, got {type(value).__name__} (the file is damaged)")
    return value
