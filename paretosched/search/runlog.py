"""The run directory on disk (format: docs/rundir.md): the evaluation log and the front.

This module owns the records a run directory stores and is the only code that turns them into
bytes and back: `Evaluation` (one line of evaluations.jsonl, with its `SeedResult`s), the
`Generation` records and the front.csv rows (the checkpoint is `checkpoint.py`'s). Every other
module reads their fields.

Crash safety rests on two rules: every file but the log is replaced atomically
(`search/files.py`), and the log is only appended to and fsync'ed, so a SIGKILL can at worst tear its last line, which
`read_evaluations` drops and `repair_log` truncates before a resumed run appends.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterable

from paretosched.search.blocks import FrontCheck
from paretosched.search.files import atomic_write_text, finite, loads, open_file

LOG = "evaluations.jsonl"
FRONT = "front.csv"
SUMMARY = "summary.json"
POPULATION = "population.json"

# ---------------------------------------------------------------------------------------------
# the records

def _bad(why: str) -> ValueError:
    return ValueError(f"not an evaluation ({why})")


def _opt(d: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    v = d.get(key, default)
    if v is not None and (isinstance(v, bool) or not isinstance(v, kind)):  # no field of a row is a bool
        raise _bad(f"{key}: expected {getattr(kind, '__name__', kind)}, got {type(v).__name__}")
    return v


def _numbers(d: dict[str, Any], key: str, nullable: bool = False) -> None:
    """`d[key]`, when there, maps names to finite numbers (or null, when `nullable`)."""
    v = _opt(d, key, dict)
    for k, x in (v or {}).items():
        if not (finite(x) or (nullable and x is None)):
            raise _bad(f"{key}.{k}: expected a finite number, got {str(x)[:30]}")


@dataclass(frozen=True)
class SeedResult:
    """One simulation's outcome; `metrics` as logged (JSON null for a non-finite value)."""

    seed: int
    status: str  # "ok" | "failed"
    metrics: dict[str, float | None] | None
    error: str | None
    wall_s: float
    cached: bool  # from the cache, or copied from the row a resampled row supersedes

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "status": self.status, "metrics": self.metrics,
                "error": self.error, "wall_s": self.wall_s, "cached": self.cached}

    @classmethod
    def from_json(cls, d: Any) -> SeedResult:
        if not isinstance(d, dict) or not isinstance(d.get("seed"), int):
            raise _bad("per_seed: expected objects with an integer seed")
        _numbers(d, "metrics", nullable=True)  # JSON null for a non-finite metric (ledger._json_safe)
        return cls(d["seed"], str(d.get("status", "ok")), _opt(d, "metrics", dict), _opt(d, "error", str),
                   float(_opt(d, "wall_s", (int, float), 0.0)), bool(d.get("cached", False)))


@dataclass(frozen=True)
class Evaluation:
    """One evaluation: a genome (kind `search`), a named config (`baseline`) or a re-check of
    either (`recheck`) on a list of seeds; one line of evaluations.jsonl (docs/rundir.md).

    Format 1 rows carry no version key (every log written so far); a later format adds
    `format` to its rows, and a reader meeting a format it does not know refuses the row."""

    FORMAT: ClassVar[int] = 1

    eval_id: int
    kind: str  # search | baseline | recheck | screen
    generation: int
    seeds: list[int]
    per_seed: list[SeedResult]
    status: str  # ok | failed
    genome: dict[str, Any] = field(default_factory=dict)  # gene path -> decoded value (config overrides)
    x: dict[str, Any] = field(default_factory=dict)  # the optimiser's raw gene values
    config: dict[str, Any] = field(default_factory=dict)  # the complete decoded SimConfig
    name: str | None = None  # baselines (and their re-checks)
    recheck_of: int | None = None
    supersedes: int | None = None  # resampled search rows: the genome's previous row
    metrics: dict[str, float] | None = None  # mean over seeds (finite values only)
    objectives: dict[str, float] | None = None  # objective -> mean over seeds, natural sign
    error: str | None = None
    wall_s: float = 0.0
    # the study's constraints (search/constraints.py), in its order; None: no constraints or failed
    constraints: list[float | None] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def feasible(self) -> bool:
        """Meets every judged constraint (rows of a study without constraints always do)."""
        return all(v is None or v <= 0 for v in self.constraints or [])

    def objective_values(self, names: list[str]) -> list[float]:
        """The objectives in `names` order (natural sign); only for a successful evaluation."""
        assert self.objectives is not None, f"evaluation {self.eval_id} has no objectives"
        return [float(self.objectives[o]) for o in names]

    def to_json(self) -> dict[str, Any]:
        """The log line's object, keys in the documented order."""
        return {"eval_id": self.eval_id, "kind": self.kind, "generation": self.generation, "name": self.name,
                "recheck_of": self.recheck_of, "supersedes": self.supersedes, "genome": self.genome, "x": self.x,
                "config": self.config, "seeds": self.seeds, "per_seed": [s.to_json() for s in self.per_seed],
                "metrics": self.metrics, "objectives": self.objectives, "status": self.status,
                "error": self.error, "wall_s": self.wall_s,
                # only with constraints: the logs of studies without them stay as they were
                **({} if self.constraints is None else {"constraints": self.constraints})}

    @classmethod
    def from_json(cls, d: Any) -> Evaluation:
        """A row from its JSON object; ValueError saying what is wrong with it."""
        if not isinstance(d, dict) or not isinstance(d.get("eval_id"), int) or isinstance(d["eval_id"], bool):
            raise _bad("a JSON object with an integer eval_id")
        fmt = d.get("format", 1)
        if fmt != cls.FORMAT:
            raise _bad(f"row format {fmt!r}, this paretosched reads format {cls.FORMAT}")
        seeds = _opt(d, "seeds", list, [])
        if not all(isinstance(s, int) for s in seeds):
            raise _bad("seeds: expected integers")
        status = str(_opt(d, "status", str, "failed"))
        if status not in ("ok", "failed"):
            raise _bad(f"status: expected ok or failed, got {status!r}")
        # a failed evaluation is logged with status failed and objectives null: a success's numbers
        # are finite (make_row), so a NaN or a string here is damage, not a convention
        _numbers(d, "metrics")
        _numbers(d, "objectives")
        cons = _opt(d, "constraints", list)
        if cons is not None and not all(v is None or finite(v) for v in cons):
            raise _bad("constraints: expected finite numbers or null")
        return cls(constraints=cons, eval_id=d["eval_id"], kind=str(_opt(d, "kind", str, "search")),
                   generation=int(_opt(d, "generation", int, -1)), seeds=list(seeds),
                   per_seed=[SeedResult.from_json(s) for s in _opt(d, "per_seed", list, [])],
                   status=status, genome=_opt(d, "genome", dict) or {},
                   x=_opt(d, "x", dict) or {}, config=_opt(d, "config", dict) or {}, name=_opt(d, "name", str),
                   recheck_of=_opt(d, "recheck_of", int), supersedes=_opt(d, "supersedes", int),
                   metrics=_opt(d, "metrics", dict), objectives=_opt(d, "objectives", dict),
                   error=_opt(d, "error", str), wall_s=float(_opt(d, "wall_s", (int, float), 0.0)))


# ---------------------------------------------------------------------------------------------
# the evaluation log

def append_rows(run_dir: Path, rows: Iterable[Evaluation]) -> None:
    """Append rows (one JSON line each) in one write, then fsync; never through a link."""
    text = "".join(json.dumps(r.to_json(), allow_nan=False, separators=(",", ":")) + "\n" for r in rows)
    if not text:
        return
    fd = open_file(run_dir / LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, root=run_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def current_rows(rows: list[Evaluation]) -> list[Evaluation]:
    """The rows no later row supersedes (each resampled genome once, with all its seeds).

    Every reader that ranks genomes (the search's front, analysis, the API) must use these rows:
    a superseded row holds the same genome on fewer seeds."""
    gone = {r.supersedes for r in rows if r.supersedes is not None}
    return [r for r in rows if r.eval_id not in gone]


def read_evaluations(path: str | Path, objectives: list[str] | None = None) -> list[Evaluation]:
    """Rows of an evaluation log (a run dir or the jsonl itself); a torn last line is dropped.
    A damaged line before it is a ValueError naming the file and the line; so is a successful
    row without one of `objectives` (the run's, when the caller knows them)."""
    p = Path(path)
    if p.is_dir():
        p = p / LOG
    if not p.exists():
        return []
    rows: list[Evaluation] = []
    lines = p.read_bytes().split(b"\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except (ValueError, RecursionError) as exc:
            if i == len(lines) - 1:  # only the unterminated last line may be torn (killed mid-append)
                break
            why = "" if isinstance(exc, json.JSONDecodeError) else f" ({str(exc)[:60]})"
            raise ValueError(f"{p}:{i + 1}: corrupt log line{why}") from None
        try:
            row = Evaluation.from_json(obj)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{p}:{i + 1}: {exc}") from None
        absent = [o for o in objectives or [] if row.ok and o not in (row.objectives or {})]
        if absent:
            raise ValueError(f"{p}:{i + 1}: not an evaluation (objectives: a successful evaluation lacks {absent[0]})")
        rows.append(row)
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
        with os.fdopen(open_file(p, os.O_RDWR, root=run_dir), "r+b") as f:
            f.truncate(good)
            f.flush()
            os.fsync(f.fileno())
    return len(data) - good


# ---------------------------------------------------------------------------------------------
# progress

@dataclass
class Generation:
    """One generation's progress: a line of the progress display and of summary.json's
    `generations` (docs/rundir.md); `failures_total` and `n_rows` are the checkpoint's own."""

    generation: int
    evaluations: int  # genomes told so far
    new_evaluations: int  # rows this generation added
    failures: int  # of those, failed
    hv: float | None
    front_size: int
    best: dict[str, float]  # best value so far per objective, natural sign
    resampled: int = 0  # seed results resampling added
    failures_total: int = 0  # failed current search rows so far
    n_rows: int = 0  # rows logged once this generation was done
    # one front point (pareto.balanced) with its own values: eval_id, each objective (and feasible,
    # with constraints); `best` pairs values of different points
    point: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry of summary.json's `generations`."""
        return {"generation": self.generation, "evaluations": self.evaluations,
                "new_evaluations": self.new_evaluations, "failures": self.failures, "hv": self.hv,
                "front_size": self.front_size, "best": self.best, "resampled": self.resampled,
                **({} if self.point is None else {"point": self.point})}


# ---------------------------------------------------------------------------------------------
# front.csv

@dataclass(frozen=True)
class Front:
    """The front: its evaluations in front order (`pareto.front`), each with its entry of
    summary.json's `recheck.front` once re-checked; stored as front.csv (docs/rundir.md).

    front.csv has no room for a version key: its header is format 1 (`FORMAT`); a later format
    changes the header, and `read_front` reads by column name."""

    FORMAT: ClassVar[int] = 1

    points: list[Evaluation]
    recheck: dict[int, FrontCheck] = field(default_factory=dict)  # eval id -> re-check entry

    @property
    def eval_ids(self) -> list[int]:
        return [p.eval_id for p in self.points]

    def to_csv(self, genes: list[str], objectives: list[str]) -> str:
        header = ["eval_id", "generation", *genes, *objectives, "n_seeds",
                  *[f"recheck_{o}" for o in objectives], *[f"recheck_std_{o}" for o in objectives],
                  "dominated_by_baseline", "recheck_eval_id"]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        for r in self.points:
            rc = self.recheck.get(r.eval_id) or FrontCheck()
            rc_obj, rc_std = rc.objectives or {}, rc.std or {}
            w.writerow([r.eval_id, r.generation,
                        *[_cell(r.genome[g]) for g in genes],
                        *[repr(v) for v in r.objective_values(objectives)], len(r.seeds),
                        *[repr(float(rc_obj[o])) if o in rc_obj else "" for o in objectives],
                        *[repr(float(rc_std[o])) if o in rc_std else "" for o in objectives],
                        ";".join(rc.dominated_by_baseline),
                        "" if rc.recheck_eval_id is None else rc.recheck_eval_id])
        return buf.getvalue()


def write_front(run_dir: Path, front: Front, genes: list[str], objectives: list[str]) -> None:
    """front.csv, atomically."""
    atomic_write_text(run_dir / FRONT, front.to_csv(genes, objectives), root=run_dir)


def read_front(run_dir: Path) -> Any:
    """front.csv as a pandas DataFrame, floats bit for bit; None when there is none yet."""
    import pandas as pd  # here, not at the top: evaluation workers import this module for SeedResult

    path = run_dir / FRONT
    if not path.is_file():
        return None
    # the python engine parses floats with float(), exact on every pandas version
    front = pd.read_csv(path, engine="python", keep_default_na=False, na_values=[""])
    for col in ("eval_id", "generation", "n_seeds", "recheck_eval_id"):
        if col in front:
            front[col] = front[col].astype("Int64")
    return front


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)
