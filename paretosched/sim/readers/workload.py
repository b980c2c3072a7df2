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

import hashlib
import math
import re
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from paretosched.errors import UserError
from paretosched.sim.readers.tracefile import (
    MAX_FIELD,
    bar_separated,
    file_digest,
    in_swf_range,
    open_text,
    path_is_gzip,
    require_intact_gzip,
)
from paretosched.sim.seeds import Pcg64

# HDeepRM's accuracy factors and probabilities (hdeeprm 0.3.1b1, approximating Tsafrir et al.)
ACCURACY_VALUES = tuple(round(0.05 * k, 2) for k in range(1, 26))
ACCURACY_PROBS = (0.15, 0.09, 0.07) + (0.04,) * 5 + (0.03,) * 5 + (0.02,) * 10 + (0.06, 0.08)
HDEEPRM_BW_VALUES = (4.0, 8.0, 12.0, 16.0, 20.0, 24.0)
BW_LOW, BW_HIGH = 4.0, 24.0
# The shortest run a job gets (s). SWF records whole seconds, so a run time of 0 is a job that ran
# under a second; run as 0 s, a trace of such jobs gave energy, makespan, power and utilisation all 0
# and a slowdown of 0, below its floor of 1. The slowdown already charges a job at least 1 s
# (turnaround / max(reference run, 1 s), metrics.py): the twin runs it that long too.
MIN_RUN_S = 1.0

_FIELD_NAMES = ("job id", "submit time", "wait time", "run time", "allocated procs", "average cpu time",
                "used memory", "requested procs", "requested time", "requested memory", "status",
                "user id", "group id", "executable", "queue", "partition", "preceding job", "think time",
                "memory bandwidth")
# The SWF definition has integers everywhere but average CPU time and used memory (fields 6-7);
# requested memory (10) and our bandwidth extension (19) are amounts, read as decimals too.
# Python's float() would also take '1_000', ' nan', '2.7' for a processor count: not SWF.
_DECIMAL_FIELDS = frozenset({5, 6, 9, 18})  # 0-based
_INT = re.compile(r"-?[0-9]+")

_DECIMAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
# a whole job line of 18 or 19 fields, joined by single spaces, each field as `_field` wants it
_LINE = {n: re.compile(" ".join(_DECIMAL.pattern if i in _DECIMAL_FIELDS else _INT.pattern for i in range(n)))
         for n in (18, 19)}


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
    partition: list[int] = field(default_factory=list)  # SWF field 16 (-1 unknown): Slurm partitions
    # field 16 -> partition name, from an `; Partitions: 1=low 2=high` header (what `trace import` writes)
    partition_names: dict[int, str] = field(default_factory=dict)
    digest: str = ""
    lines_read: int = 0  # job lines of the trace read, up to the window's end

    def __len__(self) -> int:
        return len(self.job_id)


class Job:
    """A job as the twin sees it. Static fields first, then the twin's run-time state."""

    __slots__ = ("id", "submit", "size", "req_time", "ops", "req_ops", "mem", "bw",
                 "ref_run", "start", "end", "groups", "version", "energy", "nodes", "seq", "user",
                 "partition", "partition_name")

    def __init__(self, jid: int, submit: float, size: int, req_time: float, ops: float,
                 req_ops: float, mem: float, bw: float, seq: int, ref_run: float) -> None:
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
        self.ref_run = ref_run
        self.start = -1.0
        self.end = -1.0
        self.groups: list[Any] = []
        self.version = 0
        self.energy = 0.0
        self.nodes: tuple[int, ...] = ()
        self.user = -1  # SWF user id, for fair-share
        self.partition = -1  # SWF partition number (field 16), for the slurm kind's partitions
        self.partition_name = ""  # its name, when the trace's header names it

    def __repr__(self) -> str:
        return f"Job({self.id}, submit={self.submit}, size={self.size}, req={self.req_time})"


def read_swf(path: str | Path, first_job: int = 0, n_jobs: int | None = None) -> RawJobs:
    """Parse job lines [first_job, first_job + n_jobs) of an SWF file; errors name file:line."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: trace file not found")
    return _read_swf_cached(str(p.resolve()), p.stat().st_mtime_ns, first_job, n_jobs)


def _sacct_swf(path: str) -> Any:
    """An sacct dump's SWF conversion, or None (the sacct reader is loaded for a |-separated file only)."""
    if not bar_separated(path):
        return None
    from paretosched.sim.readers.slurm.sacct import is_sacct_dump, sacct_as_swf

    return sacct_as_swf(path) if is_sacct_dump(path) else None


@lru_cache(maxsize=8)
def _read_swf_cached(path: str, _mtime: int, first_job: int, n_jobs: int | None) -> RawJobs:
    raw = RawJobs(source=path)
    seen = line_no = 0
    stop = math.inf if n_jobs is None else first_job + n_jobs
    try:
        # an sacct dump (detected by its header) is read through its SWF conversion
        fh = _sacct_swf(path) or open_text(Path(path))
        # an sacct dump's conversion: its SWF line -> the dump's line, so errors name the user's file
        line_map: dict[int, int] = getattr(fh, "line_map", {})
        with fh:
            for line_no, line in enumerate(fh, start=1):
                s = line.strip()
                if not s or s.startswith(";"):
                    if s.startswith("; Partitions:"):
                        raw.partition_names = _partition_names(s)
                    continue
                if seen >= stop:
                    break
                seen += 1
                if seen <= first_job:
                    continue
                try:
                    _parse_line(raw, s, path, line_map.get(line_no, line_no))
                except UserError:
                    # gzip checks its CRC only at the end: damage in the middle first shows as
                    # garbage lines, which are the damage's symptom, not the trace's content
                    require_intact_gzip(Path(path), line_no)
                    raise
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        where = f"{path}:{line_no + 1}" if line_no else path
        kind = "corrupt or truncated gzip data" if path_is_gzip(Path(path)) else "cannot read trace"
        raise UserError(f"{where}: {kind} ({exc})") from None
    raw.lines_read = seen
    raw.digest = hashlib.sha256(f"{file_digest(Path(path))}:{first_job}:{n_jobs}".encode()).hexdigest()
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


def _partition_names(s: str) -> dict[int, str]:
    """`; Partitions: 1=low 2=high` (what `trace import` writes) -> {1: "low", 2: "high"}; any other
    text (SWF's header holds free-text partition notes too) -> {}: field 16 is then a position."""
    items = s.split(":", 1)[1].split()
    pairs = [re.fullmatch(r"([0-9]{1,9})=(\S+)", item) for item in items]
    if not items or not all(pairs):
        return {}
    return {int(m.group(1)): m.group(2) for m in pairs if m}


def _parse_line(raw: RawJobs, s: str, path: str, line_no: int) -> None:
    parts = s.split()
    if len(parts) not in (18, 19):
        raise UserError(f"{path}:{line_no}: expected 18 SWF fields, got {len(parts)}")
    # the usual line, checked whole: one match of the joined tokens (they hold no whitespace, so
    # it accepts exactly the lines whose every token `_field` accepts) and one range test; any
    # other line takes the per-field path, which names the first bad field
    vals = list(map(float, parts)) if _LINE[len(parts)].fullmatch(" ".join(parts)) else None
    if vals is None or max(vals) > MAX_FIELD or min(vals) < -MAX_FIELD:
        vals = [_field(tok, i, path, line_no) for i, tok in enumerate(parts)]
    if vals[1] < 0:
        raise UserError(f"{path}:{line_no}: field 2 (submit time) is negative: {parts[1]!r} (seconds since "
                        "the start of the trace)")
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
    raw.partition.append(int(vals[15]))


def _field(tok: str, i: int, path: str, line_no: int) -> float:
    """Field `i` (0-based) of a job line as SWF defines it: an integer, or a finite decimal."""
    where = f"{path}:{line_no}: field {i + 1} ({_FIELD_NAMES[i]})"
    shown = tok if len(tok) <= 24 else tok[:20] + f"... ({len(tok)} characters)"
    decimal = i in _DECIMAL_FIELDS
    if (_DECIMAL if decimal else _INT).fullmatch(tok) is None:
        if not decimal and _DECIMAL.fullmatch(tok):
            raise UserError(f"{where} must be an integer (SWF), got {shown!r}")
        low = tok.lower().lstrip("+-")
        if low in ("nan", "inf", "infinity"):
            raise UserError(f"{where} is not finite: {shown!r}")
        raise UserError(f"{where} is not a number: {shown!r}")
    v = float(tok)
    if not in_swf_range(v):  # 1e999 is well-formed, and infinite as a float
        raise UserError(f"{where} is out of range: {shown!r} (at most {MAX_FIELD:.0e} in magnitude)")
    return v


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
    raised_to_min_run: int = 0  # jobs whose run time was below MIN_RUN_S, run for MIN_RUN_S

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "lines": self.lines, "loaded": self.loaded, "skipped": dict(self.skipped),
                "raised_to_min_run": self.raised_to_min_run}


def min_run_note(load: dict[str, Any]) -> str | None:
    """A one-line note when jobs ran MIN_RUN_S instead of their shorter run time, else None."""
    n = load.get("raised_to_min_run", 0)
    if not n:
        return None
    return (f"{load['source']}: {n} job(s) with a run time below {MIN_RUN_S:g} s (0 in SWF: under a second) "
            f"run {MIN_RUN_S:g} s")


SKIP_REASONS = ("run_time_negative", "size_not_positive", "larger_than_platform")
_SKIP_TEXT = {"run_time_negative": "a negative (unknown) run time", "size_not_positive": "no processor count",
              "larger_than_platform": "more cores or memory than the platform has"}


def _size(raw: RawJobs, i: int) -> int:
    return raw.req_procs[i] if raw.req_procs[i] > 0 else raw.alloc[i]


def _mem_mb(raw: RawJobs, i: int) -> float:
    mem_kb = raw.req_mem_kb[i] if raw.req_mem_kb[i] > 0 else max(raw.used_mem_kb[i], 0.0)
    # a memory below 1 KB (SWF's unit; 5e-324 is a valid decimal) is 1 KB: the twin divides a node's
    # free memory by it to count the cores a job may take there, which overflowed to inf
    return max(mem_kb, 1.0) / 1024.0 if mem_kb > 0 else 0.0


def skip_reason(raw: RawJobs, i: int, fits: Any = None) -> str | None:
    """Why job `i` of the window cannot run (a key of SKIP_REASONS), or None. Seed-independent."""
    if raw.run[i] < 0:
        return "run_time_negative"
    size = _size(raw, i)
    if size <= 0:
        return "size_not_positive"
    if fits is not None and not fits(size, _mem_mb(raw, i)):
        return "larger_than_platform"
    return None


def require_runnable(raw: RawJobs, fits: Any = None) -> None:
    """A UserError naming why when no job of the window can run: simulating nothing would
    report zeros (a mean bounded slowdown of 0, below its floor of 1) that look like results."""
    if any(skip_reason(raw, i, fits) is None for i in range(len(raw))):
        return
    inline = raw.source == "<inline>"
    name = "workload.jobs" if inline else raw.source
    if not len(raw):
        raise UserError(f"{name}: the workload has no job")
    counts: dict[str, int] = {}
    for i in range(len(raw)):
        reason = skip_reason(raw, i, fits)
        assert reason is not None
        counts[reason] = counts.get(reason, 0) + 1
    why = ", ".join(f"{n} with {_SKIP_TEXT[r]}" for r, n in counts.items())
    first = raw.line_no[0]
    where = f"workload.jobs.{first - 1}" if inline else f"{raw.source}:{first}"
    raise UserError(f"{name}: no job can run ({len(raw)} job(s): {why}; the first: {where})")


def _draws(rng: Any, mode: str, n: int) -> tuple[Any, Any]:
    """The enrichment's draws, in this order: accuracy factors (used in `hdeeprm` mode), bandwidths."""
    if isinstance(rng, Pcg64):  # numpy's stream without numpy (sim/seeds.py), for `trace` mode
        if mode == "hdeeprm":
            raise ValueError("hdeeprm mode draws with a numpy Generator")
        rng.skip(n)  # the n doubles `choice` takes for the accuracy factors, unused in `trace` mode
        return None, rng.uniform(BW_LOW, BW_HIGH, n)
    import numpy as np

    accuracy = rng.choice(np.array(ACCURACY_VALUES), p=np.array(ACCURACY_PROBS), size=n)
    if mode == "hdeeprm":
        return accuracy, rng.choice(np.array(HDEEPRM_BW_VALUES), size=n)
    return accuracy, rng.uniform(BW_LOW, BW_HIGH, size=n)


def build_jobs(raw: RawJobs, mode: str, ref_speed: float, rng: Any,
               fits: Any = None) -> tuple[list[Job], LoadReport]:
    """Enrich a raw window for one run. `fits(size, mem)` says whether the empty platform can host a job.

    `rng` is a numpy Generator, or (`trace` mode) a `seeds.Pcg64` on the same stream: the same numbers."""
    n = len(raw)
    accuracy, bw_draw = _draws(rng, mode, n)
    skipped = dict.fromkeys(SKIP_REASONS, 0)
    jobs: list[Job] = []
    raised = 0
    for i in range(n):
        reason = skip_reason(raw, i, fits)
        if reason is not None:
            skipped[reason] += 1
            continue
        run = raw.run[i]
        size = _size(raw, i)
        # no request: the run time, as long as the job will run (a 0 s job runs MIN_RUN_S)
        req = raw.req_time[i] if raw.req_time[i] > 0 else max(run, MIN_RUN_S)
        actual = req * float(accuracy[i]) if mode == "hdeeprm" else run
        if actual < MIN_RUN_S:
            actual = MIN_RUN_S
            raised += 1
        mem = _mem_mb(raw, i)
        bw = raw.bw[i] if raw.bw[i] >= 0 else float(bw_draw[i])
        jobs.append(Job(raw.job_id[i], raw.submit[i], size, req, actual * ref_speed,
                        req * ref_speed, mem, bw, len(jobs), ref_run=actual))
        jobs[-1].user = raw.user[i] if raw.user else -1
        jobs[-1].partition = raw.partition[i] if raw.partition else -1
        jobs[-1].partition_name = raw.partition_names.get(jobs[-1].partition, "")
    jobs.sort(key=lambda j: (j.submit, j.seq))
    # submit times become relative to the window's first submission, whatever its absolute
    # value (HDeepRM skipped this when the first job submitted at t = 0); seq keeps arrival order
    t0 = jobs[0].submit if jobs else 0.0
    for k, j in enumerate(jobs):
        j.submit -= t0
        j.seq = k
    return jobs, LoadReport(raw.source, n, len(jobs), skipped, raised)
