"""sacct dumps (`sacct -a -X -P -o JobIDRaw,Submit,Start,End,...`) to SWF job lines.

Columns are found by header name (case-insensitive; any order, extra columns ignored). Required:
an id (JobID or JobIDRaw), Submit, Start, End, NCPUS (or AllocCPUS), State. Used when present:
Timelimit, ReqMem, NNodes, User, Group, Partition. What each record becomes:

- a job step (`123.batch`, `123.extern`, `123.0`; sacct without -X): skipped, the allocation's own
  record is the job;
- an array task (`123_4`) is a job; a pending array (`123_[1-5]`) is skipped with the pending jobs;
- the components of a heterogeneous job (`123+0`, `123+1`) become one job: cores added, memory per
  core the largest, submit and start the earliest, end the latest (the twin cannot co-schedule parts);
- the same id twice (`sacct -D` lists every run of a requeued job): the last record that ran is the
  job, the earlier ones are skipped and counted under their own reason;
- NCPUS 0: skipped; a negative NCPUS or NNodes is a malformed record (file:line error);
- Start or End `Unknown`/`None` (pending, running): skipped; a cancelled job that never ran
  (no start, or start = end and CANCELLED): skipped;
- State -> SWF status (field 11): COMPLETED 1; FAILED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, DEADLINE,
  BOOT_FAIL 0 (they ran and failed); CANCELLED (by N), PREEMPTED, REQUEUED 5 (stopped from outside);
  any other state is skipped and named in the report;
- Timelimit `[D-]HH:MM:SS`, `MM:SS`, `D-HH[:MM]`, minutes -> requested time; `UNLIMITED`,
  `Partition_Limit` -> -1 (unknown: the loader then uses the run time) and counted in the notes;
- ReqMem `4000M`, `4G` (per node), `16000Mn` (per node), `2000Mc` (per CPU); K/M/G/T are binary
  units -> SWF requested memory per processor in KB; a suffix-free value is read per node (sacct
  since 21.08 prints no n/c) and counted in the notes; `0` or empty -> -1;
- User and Group names -> SWF ids 1, 2, ... in order of first appearance (kept for fair-share);
- Partition -> SWF field 16: with the slurm.conf's partition names (`trace import --slurm-conf`),
  the partition's 1-based position among them, as `scheduler.partitions` numbers them (a name the
  slurm.conf lacks is a file:line error); without, 1, 2, ... in order of first appearance. The
  SWF header names them (`; Partitions: 1=low 2=high`): the slurm kind matches them by name.

Jobs are numbered 1..N in submit order; times are seconds from the earliest submit. A dump that
yields no job is an error naming the file and the skip reasons (never an empty SWF).
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from paretosched.errors import UserError
from paretosched.sim.readers.tracefile import MAX_FIELD, in_swf_range, open_text, path_is_gzip

STATUS = {"COMPLETED": 1, "FAILED": 0, "TIMEOUT": 0, "OUT_OF_MEMORY": 0, "NODE_FAIL": 0, "DEADLINE": 0,
          "BOOT_FAIL": 0, "CANCELLED": 5, "PREEMPTED": 5, "REQUEUED": 5}
_ID = re.compile(r"^(\d+)(?:_(\d+|\[[^\]]*\]))?(?:\+(\d+))?(?:\.(\S+))?$")
_MEM = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)([nc]?)$", re.IGNORECASE)
_UNIT_MB = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 ** 2, "": 1.0}
_NO_TIME = ("UNKNOWN", "NONE", "")
_ALIASES = {"id": ("jobid", "jobidraw"), "submit": ("submit",), "start": ("start",), "end": ("end",),
            "ncpus": ("ncpus", "alloccpus"), "state": ("state",), "timelimit": ("timelimit",),
            "reqmem": ("reqmem",), "nnodes": ("nnodes", "allocnodes"), "user": ("user",), "group": ("group",),
            "partition": ("partition",)}
_REQUIRED = ("id", "submit", "start", "end", "ncpus", "state")
DUPLICATE = "earlier run of a requeued job (same job id again; the last record kept)"


@dataclass
class SacctReport:
    records: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    @property
    def notes(self) -> list[str]:
        return [f"{n} {what}" for what, n in self.counts.items()]


@dataclass
class _Rec:
    line: int
    submit: float
    start: float
    end: float
    cores: int
    mem_kb_per_core: float
    req_s: float
    status: int
    user: str
    group: str
    partition: str


@dataclass
class Conversion:
    source: str
    jobs: list[list[float]]  # SWF fields 1-18 per job
    report: SacctReport
    t0: float = 0.0
    lines: list[int] = field(default_factory=list)  # the dump's line of each job
    partitions: list[str] = field(default_factory=list)  # SWF field 16 k -> partitions[k - 1]
    partitions_from: str = ""  # the slurm.conf that numbered them ("": order of first appearance)


def is_sacct_dump(path: str | Path) -> bool:
    """True when the file's first non-empty line is an sacct -P header (it names JobID and is |-separated)."""
    try:
        with open_text(Path(path)) as fh:
            for line in fh:
                if line.strip():
                    cols = [c.strip().lower() for c in line.split("|")]
                    return len(cols) > 1 and ("jobid" in cols or "jobidraw" in cols)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error):
        return False
    return False


def parse_timelimit(text: str) -> float | None:
    """Seconds of a Slurm time limit; None for UNLIMITED/Partition_Limit; ValueError if malformed."""
    t = text.strip()
    if t.upper() in ("UNLIMITED", "PARTITION_LIMIT", "INFINITE", "NONE", ""):
        return None
    days, has_days = 0, "-" in t
    if has_days:
        d, t = t.split("-", 1)
        days = int(d)
        parts = [int(x) for x in t.split(":")]  # D-HH, D-HH:MM, D-HH:MM:SS
        if len(parts) > 3:
            raise ValueError(text)
        h, m, s = (parts + [0, 0])[:3]
        if not 0 <= h <= 23:
            raise ValueError(f"hours {h} not in 0-23 after a day part")
    else:
        parts = [int(x) for x in t.split(":")]  # MM, MM:SS, HH:MM:SS
        if len(parts) == 1:
            h, m, s = 0, parts[0], 0
        elif len(parts) == 2:
            h, (m, s) = 0, parts
        elif len(parts) == 3:
            h, m, s = parts
        else:
            raise ValueError(text)
    if min(days, h, m, s) < 0:
        raise ValueError(text)
    # the leading field may be any size (300 minutes, 100:00:00); a field after a ':' is 0-59
    if s > 59 or (m > 59 and (has_days or len(parts) == 3)):
        raise ValueError(f"minutes and seconds must be 0-59, got {m}:{s:02d}")
    try:
        return float(((days * 24 + h) * 60 + m) * 60 + s)
    except OverflowError:  # a number of hundreds of digits: beyond any float
        raise ValueError(f"{text[:24]}...: too large") from None


def parse_reqmem(text: str, cores: int, nodes: int) -> tuple[float, bool]:
    """(KB per core, read per node without a suffix) of a ReqMem value; -1 when none requested."""
    t = text.strip()
    if t in ("", "0", "0n", "0c", "0M", "0Mn", "0Mc"):
        return -1.0, False
    m = _MEM.match(t)
    if not m:
        raise ValueError(text)
    mb = float(m.group(1)) * _UNIT_MB[m.group(2).upper()]
    per = m.group(3).lower()
    if mb <= 0:
        return -1.0, False
    if per == "c":
        return mb * 1024.0, False
    per_node_cores = max(cores / max(nodes, 1), 1.0)
    return mb * 1024.0 / per_node_cores, per == ""


def _time(text: str) -> float | None:
    t = text.strip()
    if t.upper() in _NO_TIME:
        return None
    when = datetime.fromisoformat(t)
    # sacct prints local wall-clock times without a zone: read them as UTC so that the differences
    # (all that SWF keeps) do not depend on this machine's zone or a DST change
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def read_sacct(path: str | Path, partitions: list[str] | None = None, conf: str = "slurm.conf") -> Conversion:
    """Convert an sacct -P dump; malformed records are one-line errors naming file:line. `partitions`:
    the partition names SWF field 16 numbers from 1 (those of `conf`, the slurm.conf they come from)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: sacct dump not found")
    rep = SacctReport()
    recs: dict[str, dict[str, _Rec]] = {}
    header = _read_records(p, rep, recs)
    if header is None:
        raise UserError(f"{p}: empty sacct dump")
    if not recs:
        why = "; ".join(f"{n} {reason}" for reason, n in rep.skipped.items()) or "no records"
        raise UserError(f"{p}: no job to import from {rep.records} record(s) (skipped: {why})")
    return _to_swf(str(p), recs, rep, partitions, conf)


class _Damaged(Exception):
    """The file could not be read past `line` (a gzip stream cut short, a read error)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _lines(fh: io.TextIOBase) -> Iterator[tuple[int, str]]:
    """(line number, text) of `fh`; a read that fails raises _Damaged naming the line it was reading."""
    no = 0
    while True:
        try:
            raw = fh.readline()
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise _Damaged(no + 1) from exc
        if not raw:
            return
        no += 1
        yield no, raw


def _read_records(p: Path, rep: SacctReport, recs: dict[str, dict[str, _Rec]]) -> list[str] | None:
    """Read the dump's records into `recs`; the header (None for an empty dump)."""
    try:
        with open_text(p) as fh:
            return _read_lines(fh, p, rep, recs)
    except _Damaged as exc:
        kind = "corrupt or truncated gzip data" if path_is_gzip(p) else "cannot read the dump"
        raise UserError(f"{p}:{exc.line}: {kind} ({exc.__cause__})") from None


def _read_lines(fh: io.TextIOBase, p: Path, rep: SacctReport, recs: dict[str, dict[str, _Rec]]) -> list[str] | None:
    header: list[str] | None = None
    col: dict[str, int] = {}
    for no, raw in _lines(fh):
        line = raw.rstrip("\n\r")
        if not line.strip():
            continue
        fields = line.split("|")
        if header is None or [f.strip().lower() for f in fields] == header:
            header = [f.strip().lower() for f in fields]
            col = {k: next(header.index(a) for a in names if a in header)
                   for k, names in _ALIASES.items() if any(a in header for a in names)}
            missing = [k for k in _REQUIRED if k not in col]
            if missing:
                raise UserError(f"{p}:{no}: sacct header lacks {', '.join(missing)} "
                                "(dump with sacct -P -o JobIDRaw,Submit,Start,End,NCPUS,State,...)")
            continue
        if len(fields) != len(header):
            raise UserError(f"{p}:{no}: {len(fields)} fields, the header has {len(header)} "
                            "(a '|' inside a value? dump with --parsable2)")
        rep.records += 1
        _record(fields, col, p, no, rep, recs)
    return header


def _in_range(value: float, p: Path, no: int, what: str) -> float:
    """`value`, or a UserError when the SWF reader would refuse it (tracefile.MAX_FIELD, the one bound)."""
    if not in_swf_range(value):
        raise UserError(f"{p}:{no}: {what} is out of range for SWF (at most {MAX_FIELD:.0e} seconds, KB or "
                        "processors)")
    return value


def _record(fields: list[str], col: dict[str, int], p: Path, no: int, rep: SacctReport,
            recs: dict[str, dict[str, _Rec]]) -> None:
    def get(key: str, default: str = "") -> str:
        return fields[col[key]].strip() if key in col else default

    jid = get("id")
    m = _ID.match(jid)
    if not m:
        raise UserError(f"{p}:{no}: job id {jid!r} is not a Slurm job id (123, 123_4, 123+0, 123.batch)")
    if m.group(4) is not None:
        return rep.skip("job step (dump with -X)")
    if m.group(2) is not None and m.group(2).startswith("["):
        return rep.skip("pending array (not yet split)")
    state_text = get("state")
    state = state_text.split()[0].upper() if state_text else ""
    try:
        submit, start, end = _time(get("submit")), _time(get("start")), _time(get("end"))
    except ValueError:
        raise UserError(f"{p}:{no}: Submit/Start/End must be ISO times (2024-01-31T12:00:00) or Unknown") from None
    if submit is None:
        return rep.skip("no submit time")
    if start is None:
        return rep.skip("never started (pending or cancelled)")
    if end is None:
        return rep.skip("still running (no end)")
    if state == "CANCELLED" and end <= start:
        return rep.skip("cancelled before it ran")
    if state not in STATUS:
        return rep.skip(f"state {state or 'empty'}")
    if start < submit or end < start:
        raise UserError(f"{p}:{no}: times out of order "
                        f"(Submit {get('submit')}, Start {get('start')}, End {get('end')})")
    try:
        cores = int(get("ncpus"))
        nodes = int(get("nnodes", "1") or "1")
    except ValueError:
        raise UserError(f"{p}:{no}: NCPUS/NNodes must be integers, got {get('ncpus')!r}/{get('nnodes')!r}") from None
    if cores < 0 or nodes < 0:
        raise UserError(f"{p}:{no}: NCPUS/NNodes must not be negative, got {cores}/{nodes}")
    if cores == 0:
        return rep.skip("no cores (NCPUS 0)")
    _in_range(cores, p, no, f"NCPUS {get('ncpus')}")
    _in_range(end - start, p, no, "the run time (End - Start)")
    if "nnodes" not in col:
        rep.count("records without NNodes read as one node")
    try:
        req = parse_timelimit(get("timelimit")) if "timelimit" in col else None
    except ValueError:
        raise UserError(f"{p}:{no}: Timelimit {get('timelimit')!r} is not [D-]HH:MM:SS, MM:SS, UNLIMITED "
                        "(HH 0-23 after a day part, MM and SS 0-59)") from None
    if req is None:
        rep.count("jobs without a time limit (request = run time)")
    try:
        mem, guessed = parse_reqmem(get("reqmem"), cores, nodes)
    except ValueError:
        raise UserError(f"{p}:{no}: ReqMem {get('reqmem')!r} is not a size (4000M, 4G, 16000Mn, 2000Mc)") from None
    if req is not None:
        _in_range(req, p, no, f"Timelimit {get('timelimit')} ({req:.0f} s)")
    _in_range(mem, p, no, f"ReqMem {get('reqmem')[:24]} ({mem:.3g} KB per core)")
    if guessed:
        rep.count("ReqMem values without n/c read as per node")
    # a heterogeneous job's components (123+0, 123+1) share the job; the same id twice (sacct -D lists
    # each run of a requeued job) is one job run again: the last record is the run that counts
    het = m.group(3) is not None
    key = m.group(1) + (f"_{m.group(2)}" if m.group(2) else "") + ("+" if het else "")
    parts = recs.setdefault(key, {})
    comp = m.group(3) or ""
    if comp in parts:
        rep.skip(DUPLICATE)
    parts[comp] = _Rec(no, submit, start, end, cores, mem, req if req is not None else -1.0,
                       STATUS[state], get("user"), get("group"), get("partition"))


def _to_swf(source: str, recs: dict[str, dict[str, _Rec]], rep: SacctReport, partitions: list[str] | None = None,
            conf: str = "slurm.conf") -> Conversion:
    merged: list[_Rec] = []
    for by_comp in recs.values():
        parts = list(by_comp.values())
        if len(parts) > 1:
            rep.count("heterogeneous-job components merged", len(parts))
        if len(parts) == 1:
            merged.append(parts[0])
            continue
        first = min(parts, key=lambda r: r.line)
        merged.append(_Rec(first.line, min(r.submit for r in parts), min(r.start for r in parts),
                           max(r.end for r in parts), sum(r.cores for r in parts),
                           max(r.mem_kb_per_core for r in parts), max(r.req_s for r in parts),
                           min(r.status for r in parts), first.user, first.group, first.partition))
    merged.sort(key=lambda r: (r.submit, r.line))
    t0 = merged[0].submit if merged else 0.0
    ids: dict[str, dict[str, int]] = {"user": {}, "group": {}, "partition": {}}
    if partitions is not None:
        ids["partition"] = {name: k for k, name in enumerate(partitions, start=1)}
        for r in merged:
            if r.partition and r.partition not in ids["partition"]:
                raise UserError(f"{source}:{r.line}: Partition {r.partition[:40]!r} is not a partition of {conf} "
                                f"({', '.join(partitions) or 'none'})")

    def num(kind: str, name: str) -> int:
        if not name:
            return -1
        table = ids[kind]
        return table.setdefault(name, len(table) + 1)

    jobs = []
    for k, r in enumerate(merged, start=1):
        jobs.append([k, round(r.submit - t0), round(r.start - r.submit), round(r.end - r.start), r.cores, -1, -1,
                     r.cores, r.req_s, round(r.mem_kb_per_core) if r.mem_kb_per_core > 0 else -1, r.status,
                     num("user", r.user), num("group", r.group), -1, -1, num("partition", r.partition), -1, -1])
    return Conversion(source, jobs, rep, t0, [r.line for r in merged], list(ids["partition"]),
                      conf if partitions is not None else "")


def swf_text(conv: Conversion) -> str:
    """The conversion as an SWF file (header comments say where it came from)."""
    start = datetime.fromtimestamp(conv.t0, UTC).replace(tzinfo=None).isoformat() if conv.jobs else "-"
    head = [f"; Converted by paretosched trace import from {Path(conv.source).name}",
            f"; UnixStartTime: {int(conv.t0)}", f"; StartTime: {start}",
            f"; MaxJobs: {len(conv.jobs)}", f"; MaxRecords: {conv.report.records}",
            "; Note: job ids renumbered 1..N in submit order; user, group and partition ids in order of "
            "first appearance" + (f" (partitions: in the order of {conv.partitions_from})"
                                  if conv.partitions_from else "")]
    if conv.partitions:
        head.append("; Partitions: " + " ".join(f"{k}={name}" for k, name in enumerate(conv.partitions, start=1)))
    head += [f"; Note: skipped {n} record(s): {why}" for why, n in conv.report.skipped.items()]
    head += [f"; Note: {note}" for note in conv.report.notes]
    body = [" ".join(str(int(v)) if float(v).is_integer() else str(v) for v in job) for job in conv.jobs]
    return "\n".join(head + body) + "\n"


def write_swf(conv: Conversion, out: str | Path) -> None:
    text = swf_text(conv)
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix == ".gz":
        with gzip.open(p, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        p.write_text(text, encoding="utf-8")


def sacct_as_swf(path: str | Path) -> io.StringIO:
    """An sacct dump read as SWF text (what `workload.path` gets when it names a dump). Its
    `line_map` takes a line of the text to the dump's line of that job, for errors."""
    conv = read_sacct(path)
    text = swf_text(conv)
    first = text.count("\n") - len(conv.jobs) + 1  # the job lines come last, one per job
    fh = io.StringIO(text)
    fh.line_map = {first + k: line for k, line in enumerate(conv.lines)}  # type: ignore[attr-defined]
    return fh
