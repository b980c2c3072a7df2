"""Checks of the paths a command will write, and JSON a strict reader accepts, for the CLI glue."""

from __future__ import annotations

import errno
import math
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from paretosched.errors import UserError


def require_writable(path: str | Path, option: str, folder: bool | None) -> None:
    """A one-line UserError, before any work, when `path` (a file, a folder with `folder`, either
    with None) cannot be written: its nearest existing ancestor is a file or not writable, or the
    path itself is a folder where a file is expected (or the reverse)."""
    p = Path(path)
    if str(path) == "":
        raise UserError(f"{option}: empty path")
    if p.exists():
        if folder and not p.is_dir():
            raise UserError(f"{option} {p}: is a file, expected a folder")
        if folder is False and p.is_dir():
            raise UserError(f"{option} {p}: is a folder, expected a file name")
        target = p if p.is_dir() else p.parent
        if not os.access(target, os.W_OK):
            raise UserError(f"{option} {p}: not writable")
        return
    ancestor = p.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UserError(f"{option} {p}: {ancestor} is a file, not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UserError(f"{option} {p}: cannot create it in {ancestor} (not writable)")


def refuse_existing(paths: Iterable[str | Path], option: str, force: bool) -> list[Path]:
    """The files among `paths` that exist and will be replaced; without `force`, a one-line
    UserError naming the first one instead (before any work, so nothing is touched)."""
    existing = [Path(p) for p in paths if Path(p).is_file()]
    if existing and not force:
        more = f" (and {len(existing) - 1} other file(s) it would write)" if len(existing) > 1 else ""
        raise UserError(f"{option} {existing[0]}: exists{more}; add --force to replace it")
    return existing


def say_replaced(paths: Iterable[Path]) -> None:
    """One line on stderr naming the files a command replaced (stdout stays for its results)."""
    names = [str(p) for p in paths]
    if names:
        print(f"paretosched: replaced {', '.join(names)}", file=sys.stderr)


STDOUT = "standard output"  # `output_errors`' name for a command's printed output


def _drop_stdout() -> None:
    """Point standard output at the null device: what is left in its buffer would fail again when
    the interpreter flushes it at exit (exit code 120 after our one-line error)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, AttributeError, ValueError):  # no real stdout: nothing will be flushed to it
        pass


@contextmanager
def output_errors(option: str, again: str = "run the command again") -> Iterator[None]:
    """OSError while writing a command's output as one line naming the file (a full disk says so)."""
    try:
        yield
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        where = exc.filename or option
        if option == STDOUT and exc.filename is None:
            _drop_stdout()
        if exc.errno == errno.ENOSPC:
            raise UserError(f"{where}: no space left on the device; free some and {again}") from None
        if exc.filename is None:  # e.g. pandas' own OSError: the message says what
            raise UserError(f"{option}: {exc.strerror or exc}") from None
        raise UserError(f"{option}: {where}: {exc.strerror or exc}") from None


def json_safe(obj: Any) -> Any:
    """`obj` with NaN and infinities as null: JSON has no such numbers (`json.dumps` would write
    bare NaN, which strict parsers refuse)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def end_process(code: int) -> None:
    """End a `simulate` process at once: its output is written, no other thread runs and the package
    registers no exit handler, so the interpreter's teardown (freeing every module and object one by
    one: ~20 ms of a 0.7 s process) is skipped. Returns only when the output cannot be flushed (a
    closed pipe, a full disk): the caller then exits the usual way, which reports it as Python does.
    A stream Python has none of (its descriptor closed, `>&-`: sys.stdout is None) has nothing to flush.
    Also returns when a profiler, tracer or coverage tool watches the process (`python -m cProfile -m
    paretosched.cli simulate ...`): it reports after the command returns, which os._exit would prevent."""
    if _watched():
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # (ValueError: a stream closed by the program)
        return
    os._exit(code)


def _watched() -> bool:
    """Whether a profiler or tracer runs in this process (sys.setprofile/settrace, or sys.monitoring
    from Python 3.12, which cProfile and coverage may use instead)."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(i) is not None for i in range(6))
