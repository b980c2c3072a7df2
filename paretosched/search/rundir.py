"""Opening a run directory, new or resumed, with the guards that keep one run's log whole:
one session at a time, the same study, the same twin, a usable path."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Any

from paretosched.errors import UserError
from paretosched.search.guards import check_log
from paretosched.search.runlog import read_evaluations
from paretosched.search.study import STUDY_FILE, Study, load_study
from paretosched.search.summary import read_summary

LOCK = ".lock"  # held (flock) by the session writing the run; ignored when deciding "empty"

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no cross-session guard
    fcntl = None  # type: ignore[assignment]


def open_run(path: Path, out: str | None, resume: bool) -> tuple[Study, Path, str | None]:
    """(study, run dir, note for the user) for `paretosched optimise PATH [--out] [--resume]`."""
    if path.is_dir():
        if not (path / STUDY_FILE).exists():
            raise UserError(f"{path}: is a directory, neither a study file nor a run directory (no {STUDY_FILE})")
        if not resume:
            raise UserError(f"{path}: is a run directory; add --resume to continue it")
        if out is not None and Path(out).resolve() != path.resolve():
            raise UserError(f"--out {out}: a run directory resumes in place; drop --out (or resume the study "
                            f"file with --out)")
        check_log(read_evaluations, path)
        return load_study(path), path, None
    study = load_study(path)
    run_dir = Path(out) if out is not None else Path("runs") / study.name
    if run_dir.exists() and not run_dir.is_dir():
        raise UserError(f"{run_dir}: exists and is not a directory; choose another --out")
    if not _has_content(run_dir):
        note = f"nothing to resume in {run_dir}: starting a new run" if resume else None
        return study, run_dir, note
    if not resume:
        raise UserError(f"{run_dir}: run directory exists and is not empty; use --resume or another --out")
    check_log(read_evaluations, run_dir)
    if (run_dir / STUDY_FILE).exists():
        before = load_study(run_dir).model_dump(mode="json", exclude={"parallel"})
        diff = first_difference(before, study.model_dump(mode="json", exclude={"parallel"}))
        if diff is not None:
            raise UserError(f"{path}: differs from the study of {run_dir} at '{diff}' "
                            "(only 'parallel' may change on resume)")
    return study, run_dir, None


def _has_content(run_dir: Path) -> bool:
    try:
        return run_dir.is_dir() and any(p.name != LOCK for p in run_dir.iterdir())
    except OSError as exc:
        raise UserError(f"{run_dir}: cannot read the run directory: {exc.strerror or exc}") from None


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """Dotted path of the first place two JSON-like values differ (None when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{where}{k}"
            sub = first_difference(a[k], b[k], f"{where}{k}.")
            if sub is not None:
                return sub
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            sub = first_difference(x, y, f"{where}{i}.")
            if sub is not None:
                return sub
        return None
    return None if a == b else (where.rstrip(".") or "<root>")


def make_run_dir(run_dir: Path) -> None:
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{run_dir}: cannot create the run directory: {exc.strerror or exc}") from None


class RunLock:
    """An exclusive lock on the run directory for one session (released by the OS if the
    process dies, even by SIGKILL), so a second `optimise --resume` of a live run, e.g. a
    requeued batch job, refuses instead of interleaving rows into the same log."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        if fcntl is None:  # pragma: no cover
            return self
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise UserError(f"{self.path.parent}: cannot write in the run directory: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise UserError(f"{self.path.parent}: in use by another paretosched session (pid {holder}); "
                            "wait for it to end or stop it first") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the flock
            self._fd = None


def check_same_twin(run_dir: Path, started: str | None, current: str) -> None:
    """Refuse to resume a run another twin version (`started`, the checkpoint's) started: its front
    would mix two models' numbers (the cache is keyed by twin version, so new evaluations would not
    match old ones)."""
    if started is None:  # no checkpoint, or one from before the field: the summary written with it
        try:
            summary = read_summary(run_dir)
        except UserError:
            return
        started = None if summary is None else summary.twin
        if started is None:
            return
    if started != current:
        raise UserError(f"{run_dir}: started with twin {started}, this paretosched is {current}; resuming "
                        "would mix the two twins' numbers in one front. Finish it with the version that "
                        "started it, or start a new run (another --out)")

