"""Workloads: SWF traces (plain or .gz) and inline jobs, turned into jobs the twin runs.

Two steps, so that a trace is parsed once and enriched per run:

1. `read_swf` parses a window of job lines into `RawJobs` (plain lists; shareable).
2. `build_jobs` applies the mode and the seeded enrichment for one run and one platform.

Modes (thesis section 3.1.3; DESIGN.md):
- `trace`: the job runs its recorded run time (field 4) on a core of the platform's
  reference speed; requested time = field 9, else the run time.
- `hdeeprm`: actual time = requested time x U, with U drawn per job from HDeepRM's
  approximation of Tsafrir et al. (2007); about 20% of jobs overrun their request.

Memory comes from requested memory (field 10), else used memory (field 7), KB -> MB. SWF defines
both per processor, so a job reserves that much on the node of each core it gets. Memory
bandwidth per core comes from an optional 19th field, else is drawn: U[4, 24] GB/s in `trace`
mode, HDeepRM's {4, 8, ..., 24} GB/s in `hdeeprm` mode. Jobs that cannot be valid are skipped
and counted in the load report, never silently.
"""

from __future__ import annotations

import gzip
import hashlib
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from paretosched.errors import UserError
from paretosched.sim.slurm.sacct import is_sacct_dump, sacct_as_swf

# HDeepRM's accuracy factors and probabilities (hdeeprm 0.3.1b1, approximating Tsafrir et al.)
ACCURACY_VALUES = tuple(round(0.05 * k, 2) for k in range(1, 26))
ACCURACY_PROBS = (0.15, 0.09, 0.07) + (0.04,) * 5 + (0.03,) * 5 + (0.02,) * 10 + (0.06, 0.08)
HDEEPRM_BW_VALUES = (4.0, 8.0, 12.0, 16.0, 20.0, 24.0)
BW_LOW, BW_HIGH = 4.0, 24.0

_FIELD_NAMES = ("job id", "submit time", "wait time", "run time", "allocated procs", "average cpu time",
                "used memory", "requested procs", "requested time", "requested memory", "status",
                "user id", "group id", "executable", "queue", "partition", "preceding job", "think time",
                "memory bandwidth")


@dataclass
class RawJobs:
    """A parsed window of a trace: one entry per job line, fields as in SWF."""

    source: str
    line_no: list[int] = field(default_factory=list)
    job_id: list[int] = field(default_factory=list)
    submit: list[float] = field(default_factory=list)
    run: list[float] = field(default_factory=list)
    alloc: list[int] = field(default_factory=list)
    used_mem_kb: list[float] = field(default_factory=list)
    req_procs: list[int] = field(default_factory=list)
    req_time: list[float] = field(default_factory=list)
    req_mem_kb: list[float] = field(default_factory=list)
    bw: list[float] = field(default_factory=list)  # -1 when the trace has none
    user: list[int] = field(default_factory=list)  # SWF field 12 (-1 unknown): Slurm fair-share
    digest: str = ""
    lines_read: int = 0  # job lines of the trace read, up to the window's end

    def __len__(self) -> int:
        return len(self.job_id)


class Job:
    """A job as the twin sees it. Static fields first, then the twin's run-time state."""

    __slots__ = ("id", "submit", "size", "req_time", "ops", "req_ops", "mem", "bw",
                 "ref_run", "start", "end", "groups", "version", "energy", "nodes", "seq", "user")

    def __init__(self, jid: int, submit: float, size: int, req_time: float, ops: float,
                 req_ops: float, mem: float, bw: float, seq: int, ref_run: float | None = None) -> None:
        self.id = jid
        self.submit = submit
        self.size = size
        self.req_time = req_time
        self.ops = ops            # actual operations per core (GFLOP)
        self.req_ops = req_ops    # requested operations per core, seen by the scheduler
        self.mem = mem            # MB per core
        self.bw = bw              # GB/s per core
        self.seq = seq            # arrival order, for stable tie-breaks
        # run time (s) at the platform's reference speed: what no scheduling decision changes
        # (DVFS, P1, a slow core only stretch `end - start`); slowdown is charged against it
        self.ref_run = req_time * ops / req_ops if ref_run is None and req_ops > 0 else (ref_run or 0.0)
        self.start = -1.0
        self.end = -1.0
        self.groups: list[Any] = []
        self.version = 0
        self.energy = 0.0
        self.nodes: tuple[int, ...] = ()
        self.user = -1  # SWF user id, for fair-share

    def __repr__(self) -> str:
        return f"Job({self.id}, submit={self.submit}, size={self.size}, req={self.req_time})"


def _open_text(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_swf(path: str | Path, first_job: int = 0, n_jobs: int | None = None) -> RawJobs:
    """Parse job lines [first_job, first_job + n_jobs) of an SWF file; errors name file:line."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: trace file not found")
    return _read_swf_cached(str(p.resolve()), p.stat().st_mtime_ns, first_job, n_jobs)


@lru_cache(maxsize=8)
def _read_swf_cached(path: str, _mtime: int, first_job: int, n_jobs: int | None) -> RawJobs:
    raw = RawJobs(source=path)
    seen = 0
    stop = math.inf if n_jobs is None else first_job + n_jobs
    try:
        # an sacct dump (detected by its header) is read through its SWF conversion
        fh = sacct_as_swf(path) if is_sacct_dump(path) else _open_text(Path(path))
        with fh:
            for line_no, line in enumerate(fh, start=1):
                s = line.strip()
                if not s or s.startswith(";"):
                    continue
                if seen >= stop:
                    break
                seen += 1
                if seen <= first_job:
                    continue
                _parse_line(raw, s, path, line_no)
    except (OSError, EOFError) as exc:
        raise UserError(f"{path}: cannot read trace: {exc}") from None
    raw.lines_read = seen
    raw.digest = hashlib.sha256(f"{_file_digest(Path(path))}:{first_job}:{n_jobs}".encode()).hexdigest()
    return raw


def require_jobs(raw: RawJobs, first_job: int) -> RawJobs:
    """`raw`, or a UserError when the window holds no job (it would simulate nothing and
    report zeros for every metric). Not in `read_swf`: RL training windows may be empty."""
    if not raw.job_id:
        raise UserError(f"{raw.source}: skipping {first_job} job lines (first_job) leaves no job; "
                        f"the trace has {raw.lines_read} job lines")
    return raw


def short_window_note(raw: RawJobs, first_job: int, n_jobs: int | None) -> str | None:
    """A one-line note when the trace ends before the requested window does, else None."""
    if n_jobs is None or len(raw.job_id) >= n_jobs:
        return None
    return (f"{raw.source}: the window holds {len(raw.job_id)} jobs, fewer than n_jobs={n_jobs} "
            f"(the trace ends after job line {first_job + len(raw.job_id)})")


def _parse_line(raw: RawJobs, s: str, path: str, line_no: int) -> None:
    parts = s.split()
    if len(parts) not in (18, 19):
        raise UserError(f"{path}:{line_no}: expected 18 SWF fields, got {len(parts)}")
    vals = []
    for i, tok in enumerate(parts):
        try:
            v = float(tok)
        except ValueError:
            raise UserError(f"{path}:{line_no}: field {i + 1} ({_FIELD_NAMES[i]}) is not a number: {tok!r}") from None
        if not math.isfinite(v):
            raise UserError(f"{path}:{line_no}: field {i + 1} ({_FIELD_NAMES[i]}) is not finite: {tok!r}")
        vals.append(v)
    raw.line_no.append(line_no)
    raw.job_id.append(int(vals[0]))
    raw.submit.append(vals[1])
    raw.run.append(vals[3])
    raw.alloc.append(int(vals[4]))
    raw.used_mem_kb.append(vals[6])
    raw.req_procs.append(int(vals[7]))
    raw.req_time.append(vals[8])
    raw.req_mem_kb.append(vals[9])
    raw.bw.append(vals[18] if len(vals) == 19 else -1.0)
    raw.user.append(int(vals[11]))


def raw_from_inline(jobs: list[Any]) -> RawJobs:
    """Inline jobs (config `workload.jobs`) as a RawJobs window."""
    raw = RawJobs(source="<inline>")
    for i, j in enumerate(jobs):
        raw.line_no.append(i + 1)
        raw.job_id.append(j.id if j.id is not None else i + 1)
        raw.submit.append(j.submit_s)
        raw.run.append(j.run_s)
        raw.alloc.append(j.cores)
        raw.used_mem_kb.append(-1.0)
        raw.req_procs.append(j.cores)
        raw.req_time.append(j.req_s if j.req_s is not None else -1.0)
        raw.req_mem_kb.append(j.mem_mb * 1024.0)
        raw.bw.append(j.bw_gbs if j.bw_gbs is not None else -1.0)
    raw.digest = hashlib.sha256(repr([j.model_dump() for j in jobs]).encode()).hexdigest()
    return raw


@dataclass
class LoadReport:
    """What happened to each job line of the window."""

    source: str
    lines: int
    loaded: int
    skipped: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "lines": self.lines, "loaded": self.loaded, "skipped": dict(self.skipped)}


def build_jobs(raw: RawJobs, mode: str, ref_speed: float, rng: np.random.Generator,
               fits: Any = None) -> tuple[list[Job], LoadReport]:
    """Enrich a raw window for one run. `fits(size, mem)` says whether the empty platform can host a job."""
    n = len(raw)
    accuracy = rng.choice(np.array(ACCURACY_VALUES), p=np.array(ACCURACY_PROBS), size=n)
    if mode == "hdeeprm":
        bw_draw = rng.choice(np.array(HDEEPRM_BW_VALUES), size=n)
    else:
        bw_draw = rng.uniform(BW_LOW, BW_HIGH, size=n)
    skipped = {"run_time_negative": 0, "size_not_positive": 0, "larger_than_platform": 0}
    jobs: list[Job] = []
    for i in range(n):
        run = raw.run[i]
        if run < 0:
            skipped["run_time_negative"] += 1
            continue
        size = raw.req_procs[i] if raw.req_procs[i] > 0 else raw.alloc[i]
        if size <= 0:
            skipped["size_not_positive"] += 1
            continue
        req = raw.req_time[i] if raw.req_time[i] > 0 else run
        actual = req * float(accuracy[i]) if mode == "hdeeprm" else run
        mem_kb = raw.req_mem_kb[i] if raw.req_mem_kb[i] > 0 else max(raw.used_mem_kb[i], 0.0)
        mem = mem_kb / 1024.0
        if fits is not None and not fits(size, mem):
            skipped["larger_than_platform"] += 1
            continue
        bw = raw.bw[i] if raw.bw[i] >= 0 else float(bw_draw[i])
        jobs.append(Job(raw.job_id[i], raw.submit[i], size, req, actual * ref_speed,
                        req * ref_speed, mem, bw, len(jobs), ref_run=actual))
        jobs[-1].user = raw.user[i] if raw.user else -1
    jobs.sort(key=lambda j: (j.submit, j.seq))
    # submit times become relative to the window's first submission, whatever its absolute
    # value (HDeepRM skipped this when the first job submitted at t = 0); seq keeps arrival order
    t0 = jobs[0].submit if jobs else 0.0
    for k, j in enumerate(jobs):
        j.submit -= t0
        j.seq = k
    return jobs, LoadReport(raw.source, n, len(jobs), skipped)
