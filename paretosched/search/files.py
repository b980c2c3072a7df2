"""Files of a run directory and of the cache: written so that a crash never leaves half a file,
never through a symbolic link, and read as strict JSON.

Every file but the evaluation log is replaced atomically: a temporary file in the same
directory, fsync, os.replace, fsync of the directory, so readers see the old or the new file.

A run directory is data people copy and share: a link planted in it (`.lock`, `analysis/`,
`explorer.html` pointing elsewhere) must not make paretosched write outside it. Every write
below a `root` (the run directory, the cache folder) therefore walks from the root one
directory at a time with O_NOFOLLOW (through directory file descriptors, so a link swapped in
between a check and the write is refused too) and refuses a link at the file itself; the root
may be a link (a `runs/` folder on scratch space is the user's choice). Without a root, only
the file itself is checked (a path the user names, such as `export -o`).
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from paretosched.errors import UserError

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def link_error(path: Path) -> UserError:
    return UserError(f"{path}: is a symbolic link; paretosched writes nothing through a link in a run directory "
                     "(replace it by a real file or folder, or remove it)")


def _is_link(name: str, dfd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _relative(path: Path, root: Path) -> tuple[str, ...]:
    """`path`'s components below `root`, lexically (no link is followed to decide)."""
    rel = Path(os.path.normpath(Path(path).absolute())).relative_to(os.path.normpath(Path(root).absolute()))
    return rel.parts


def dir_fd(directory: Path, root: Path | None = None, create: bool = False) -> int:
    """An open descriptor of `directory`, reached from `root` (default: itself) without following
    a link below the root; `create` makes the missing folders. The caller closes it."""
    directory = Path(directory)
    root = directory if root is None else Path(root)
    if create:
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, _DIR_FLAGS)
    where = root
    try:
        for part in _relative(directory, root):
            where = where / part
            try:
                nfd = os.open(part, _DIR_FLAGS | NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:  # made by another process meanwhile
                    pass
                nfd = os.open(part, _DIR_FLAGS | NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if _is_link(part, fd):
                    raise link_error(where) from None
                if exc.errno == errno.ENOTDIR:
                    raise UserError(f"{where}: is not a folder") from None
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_dirs(directory: Path, root: Path | None = None) -> None:
    """`mkdir -p directory` below `root`, refusing a link on the way (`dir_fd`)."""
    os.close(dir_fd(directory, root if root is not None else Path(directory).parent, create=True))


def open_file(path: Path, flags: int, root: Path | None = None, mode: int = 0o666) -> int:
    """os.open of `path` (below `root`, default its folder) refusing a link at it or on the way."""
    p = Path(path)
    dfd = dir_fd(p.parent, root if root is not None else p.parent)
    try:
        return os.open(p.name, flags | NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(p.name, dfd):
            raise link_error(p) from None
        raise
    finally:
        os.close(dfd)


def atomic_write_bytes(path: str | Path, data: bytes, fsync: bool = True, root: Path | None = None) -> None:
    """Replace `path` with `data` so that readers see the old or the new file, never half; a link
    at `path` or below `root` on the way to it is refused (a one-line UserError naming it)."""
    p = Path(path)
    dfd = dir_fd(p.parent, root if root is not None else p.parent)
    try:
        if _is_link(p.name, dfd):
            raise link_error(p)
        tmp = f".{p.name}.{secrets.token_hex(6)}.tmp"
        # mode 0o666 less the umask: the permissions a plain open() gives (run dirs and the cache are
        # often read by a group)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666,
                     dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, p.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
        if fsync:
            os.fsync(dfd)
    finally:
        os.close(dfd)


def atomic_write_text(path: str | Path, text: str, fsync: bool = True, root: Path | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync, root=root)


def dumps(obj: Any, indent: int | None = 1) -> str:
    """JSON of a result file: a non-finite number is a bug upstream, refused here (ValueError)
    rather than written as NaN or Infinity, which no strict JSON reader accepts."""
    return json.dumps(obj, indent=indent, allow_nan=False)


def write_json(path: str | Path, obj: Any, root: Path | None = None) -> None:
    atomic_write_text(path, dumps(obj) + "\n", root=root)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: valid JSON syntax, but inf in Python
        raise ValueError(f"{text[:30]} is out of a float's range")
    return value


def loads(text: str | bytes) -> Any:
    """Strict JSON: NaN, Infinity and numbers beyond a float (1e999) are refused (ValueError), as
    `dumps` never writes them."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)


def finite(value: Any) -> bool:
    """A finite JSON number (a bool is not a number here)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond a float (10**400): no metric is one
        return False


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file of the run (summary, population); None when missing (older or killed
    runs), a one-line UserError when damaged: the search writes these files atomically, so an
    unreadable one is damage, not a write in progress, and ignoring it would silently drop the
    re-check and the verdicts from the report."""
    if not path.is_file():
        return None
    try:
        value = loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text (the file is damaged)") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg}; the file is damaged)") from None
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{path}: not valid JSON ({exc}; the file is damaged)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror})") from None
    if not isinstance(value, dict):
        raise UserError(f"{path}: expected a JSON object, got {type(value).__name__} (the file is damaged)")
    return value


# ---------------------------------------------------------------------------------------------
# outputs of the analysis layer: in the run directory (the default) or where the user says

def run_root(path: Path, run_dir: Path | None) -> Path | None:
    """The run directory when `path` is in it (lexically: a link below the root is what must not be
    followed), else None: a place the user chose, written as they name it."""
    if run_dir is None:
        return None
    where = os.path.normpath(Path(path).absolute())
    for root in (Path(run_dir), Path(run_dir).resolve()):
        top = os.path.normpath(root.absolute())
        if where == top or where.startswith(top.rstrip(os.sep) + os.sep):
            return root
    return None


def write_output(path: Path, data: str | bytes, run_dir: Path | None) -> None:
    """An output file: in the run directory atomically and never through a link (`atomic_write_bytes`),
    elsewhere a plain write of the path the user gave."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    root = run_root(path, run_dir)
    if root is None:
        Path(path).write_bytes(raw)
    else:
        atomic_write_bytes(path, raw, root=root)


def make_output_dir(directory: Path, run_dir: Path | None) -> None:
    """`mkdir -p` of an output folder, refusing a link on the way when it is in the run directory."""
    root = run_root(directory, run_dir)
    if root is None:
        Path(directory).mkdir(parents=True, exist_ok=True)
    else:
        make_dirs(directory, root=root)
