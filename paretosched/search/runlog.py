"""The run directory on disk (format: docs/rundir.md): atomic files, log, checkpoint.

Crash safety rests on two rules: every file but the log is replaced atomically (temp file
in the same directory, fsync, os.replace, fsync of the directory), and the log is only
appended to and fsync'ed, so a SIGKILL can at worst tear its last line, which
`read_evaluations` drops and `repair_log` truncates before a resumed run appends.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Iterable

from paretosched.errors import UserError

LOG = "evaluations.jsonl"
FRONT = "front.csv"
SUMMARY = "summary.json"
POPULATION = "population.json"
CHECKPOINT = "checkpoint.pkl"

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


# ---------------------------------------------------------------------------------------------
# the evaluation log

def append_rows(run_dir: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Append rows (one JSON line each) in one write, then fsync."""
    text = "".join(json.dumps(r, allow_nan=False, separators=(",", ":")) + "\n" for r in rows)
    if not text:
        return
    with open(run_dir / LOG, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def current_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows no later row supersedes (each resampled genome once, with all its seeds).

    Every reader that ranks genomes (the search's front, analysis, the API) must use these rows:
    a superseded row holds the same genome on fewer seeds."""
    gone = {r["supersedes"] for r in rows if r.get("supersedes") is not None}
    return [r for r in rows if r["eval_id"] not in gone]


def read_evaluations(path: str | Path) -> list[dict[str, Any]]:
    """Rows of an evaluation log (a run dir or the jsonl itself); a torn last line is dropped."""
    p = Path(path)
    if p.is_dir():
        p = p / LOG
    if not p.exists():
        return []
    rows: list[dict[str, Any]] = []
    lines = p.read_bytes().split(b"\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            if i == len(lines) - 1:  # only the unterminated last line may be torn (killed mid-append)
                break
            raise ValueError(f"{p}:{i + 1}: corrupt log line") from None
    return rows


def repair_log(run_dir: Path) -> int:
    """Truncate a torn tail so appends start on a fresh line; returns bytes dropped."""
    p = run_dir / LOG
    if not p.exists():
        return 0
    data = p.read_bytes()
    good = data.rfind(b"\n") + 1  # 0 when there is no complete line at all
    if good < len(data):
        # the tail after the last newline is torn by construction (rows end with '\n')
        with open(p, "r+b") as f:
            f.truncate(good)
            f.flush()
            os.fsync(f.fileno())
    return len(data) - good


# ---------------------------------------------------------------------------------------------
# checkpoint

def save_checkpoint(run_dir: Path, state: dict[str, Any]) -> None:
    atomic_write_bytes(run_dir / CHECKPOINT, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))


def load_checkpoint(run_dir: Path) -> dict[str, Any] | None:
    p = run_dir / CHECKPOINT
    if not p.exists():
        return None
    try:
        with open(p, "rb") as f:
            return pickle.load(f)  # noqa: S301 - our own file, written by save_checkpoint
    except Exception as exc:  # noqa: BLE001 - truncated, corrupt, or pickled by other code
        # the log alone is enough: a resume without checkpoint replays it, simulating nothing logged
        raise UserError(f"{p}: unreadable ({type(exc).__name__}: {exc}); delete it and resume again: "
                        "the run restarts from its evaluation log") from None


# ---------------------------------------------------------------------------------------------
# front.csv

def write_front(run_dir: Path, rows: list[dict[str, Any]], genes: list[str], objectives: list[str],
                recheck: dict[int, dict[str, Any]] | None = None) -> None:
    """front.csv: one line per front point (see docs/rundir.md), atomically. `recheck` maps a
    front eval id to its entry of summary.json's `recheck.front`."""
    recheck = recheck or {}
    header = ["eval_id", "generation", *genes, *objectives, "n_seeds",
              *[f"recheck_{o}" for o in objectives], *[f"recheck_std_{o}" for o in objectives],
              "dominated_by_baseline", "recheck_eval_id"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        rc = recheck.get(r["eval_id"]) or {}
        rc_obj, rc_std = rc.get("objectives") or {}, rc.get("std") or {}
        w.writerow([r["eval_id"], r["generation"],
                    *[_cell(r["genome"][g]) for g in genes],
                    *[repr(float(r["objectives"][o])) for o in objectives], len(r["seeds"]),
                    *[repr(float(rc_obj[o])) if o in rc_obj else "" for o in objectives],
                    *[repr(float(rc_std[o])) if o in rc_std else "" for o in objectives],
                    ";".join(rc.get("dominated_by_baseline") or []),
                    "" if rc.get("recheck_eval_id") is None else rc["recheck_eval_id"]])
    atomic_write_text(run_dir / FRONT, buf.getvalue())


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)
