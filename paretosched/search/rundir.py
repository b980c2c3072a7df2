"""Opening a run directory, new or resumed, with the guards that keep one run's log whole:
one session at a time, the same study and inputs, the same twin, a usable path."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Any

from paretosched.errors import UserError
from paretosched.search.files import open_file, read_json, write_json
from paretosched.search.guards import check_log
from paretosched.search.runlog import read_evaluations
from paretosched.search.study import STUDY_FILE, Study, load_study
from paretosched.search.summary import read_summary

LOCK = ".lock"  # held (flock) by the session writing the run; ignored when deciding "empty"
FINGERPRINT = "fingerprint.json"  # what the run's numbers depend on, recorded when it began
CACHE = ".cache"  # the evaluation cache beside the run directories (`cache_dir`)
# study keys that change how a run is computed, never what: a resume may change them
OPERATIONAL = ("parallel", "cache", "cache_dir")

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
        _not_the_cache(path)
        check_log(read_evaluations, path)
        study = load_study(path)
        check_fingerprint(path, study)
        return study, path, None
    study = load_study(path)
    run_dir = Path(out) if out is not None else Path("runs") / study.name
    _not_the_cache(run_dir)
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
    check_fingerprint(run_dir, study)
    return study, run_dir, None


def _not_the_cache(run_dir: Path) -> None:
    if run_dir.name == CACHE:
        raise UserError(f"{run_dir}: '{CACHE}' is the name of the evaluation cache's folder beside the run "
                        "directories; name the study (or --out) otherwise")


def fingerprint(study: Study) -> dict[str, Any]:
    """What the run's numbers depend on: the study (but its operational keys) and the sha256 of the
    trace and platform files its base config reads (None: inline, built in by name, or missing)."""
    from paretosched.search.cache import file_digest  # the cache's memoised digest: one read per file
    from paretosched.sim.readers.inputs import input_files

    files: dict[str, Any] = {}
    for kind, p in input_files(study.base).items():  # type: ignore[arg-type]
        files[kind] = None if p is None else {"path": p, "sha256": file_digest(p)}
    return {"format": 1, "study": study.model_dump(mode="json", exclude=set(OPERATIONAL)), "files": files}


def record_fingerprint(run_dir: Path, study: Study) -> None:
    """Record the fingerprint when the run begins (or, for a run from before the file, now)."""
    if not (run_dir / FINGERPRINT).exists():
        write_json(run_dir / FINGERPRINT, fingerprint(study), root=run_dir)


def check_fingerprint(run_dir: Path, study: Study) -> None:
    """Refuse to resume a run whose trace, platform file or study changed since it began: its log
    would mix numbers of two workloads (the cache key covers the files' bytes; so must resume)."""
    path = run_dir / FINGERPRINT
    saved = read_json(path)
    if saved is None:
        return
    if not isinstance(saved.get("study"), dict) or not isinstance(saved.get("files"), dict):
        raise UserError(f"{path}: expected the study and files the run began with (the file is damaged)")
    now = fingerprint(study)
    for kind, what, key in (("trace", "the trace", "workload.path"), ("platform", "the platform file", "platform")):
        old, new = saved["files"].get(kind), now["files"][kind]
        if old != new:
            o, n = (d if isinstance(d, dict) else {} for d in (old, new))
            raise UserError(f"{run_dir}: {what} changed since the run began ({key} {n.get('path') or o.get('path')}: "
                            f"sha256 {str(o.get('sha256', 'none'))[:12]} then, {str(n.get('sha256', 'none'))[:12]} "
                            "now); start a new run (another --out)")
    diff = first_difference(saved["study"], now["study"])
    if diff is not None:
        raise UserError(f"{run_dir}: the study changed since the run began (at '{diff}'; only "
                        f"{', '.join(OPERATIONAL)} may change on resume); restore it, or start a new run "
                        "(another --out)")


def cache_dir(study: Study, run_dir: Path) -> Path:
    """The evaluation cache of a study's run: `cache_dir`, else <parent of the run dir>/.cache/<study>."""
    if study.cache_dir is not None:
        return Path(study.cache_dir)
    return run_dir.resolve().parent / ".cache" / study.name


def cache_note(run_dir: Path, hits: int, simulated: int) -> str:
    """What a run whose seed results partly came from the cache says (it outlives `rm -rf RUN`)."""
    try:
        where = str(cache_dir(load_study(run_dir), run_dir))
    except UserError:  # a run dir without a readable study: the default place
        where = str(Path(run_dir).resolve().parent / ".cache" / "<study>")
    return (f"{hits} of {hits + simulated} seed results came from the evaluation cache {where} "
            f"(delete that folder, or set `cache: false` in the study, to recompute them)")


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
            fd = open_file(self.path, os.O_RDWR | os.O_CREAT, root=self.path.parent)
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

