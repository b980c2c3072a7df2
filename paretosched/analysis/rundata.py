"""Load a run directory (docs/rundir.md) into one tidy table for the analysis layer.

`load_run(run_dir)` returns a `RunData`: the log's `Evaluation` records by eval id (exact JSON
values, used for export so numbers round-trip bit for bit) and a pandas frame with one row per evaluation:
meta columns (`eval_id`, `kind`, `generation`, `name`, `status`, `recheck_of`), one column per
gene (its dotted path), one per objective and one per other recorded metric (metric names).

The resolved `study.yaml` is read here with the safe loader rather than through
`paretosched.search.study.load_study`: that function re-resolves the study (imports a custom
evaluator, re-validates genes against the base config), which analysis does not need and which
would make analysing an old run fail when, say, an evaluator module is no longer importable.
Analysis only needs the study's name, objectives and gene types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from paretosched.errors import UserError
from paretosched.search.constraints import violation
from paretosched.search.files import read_json
from paretosched.search.genes import ChoiceGene, FloatGene, GeneSpec, StudyGenes
from paretosched.search.runlog import LOG, POPULATION, SUMMARY, Evaluation, current_rows, read_evaluations
from paretosched.search.study import STUDY_FILE, Objective
from paretosched.search.summary import Summary, read_summary
from paretosched.yamlio import describe_validation_error, read_yaml

META_COLUMNS = ("eval_id", "kind", "generation", "name", "status", "recheck_of")
# with constraints (search/constraints.py): each row's total violation, 0 when it meets them all
VIOLATION = "violation"


@dataclass
class RunData:
    run_dir: Path
    study_name: str
    objectives: list[str]
    senses: list[str]  # "min" | "max", one per objective
    genes: dict[str, GeneSpec]  # the study's genes (search/genes.py), by dotted path
    rows: dict[int, Evaluation]  # eval_id -> the log row, values exactly as parsed from JSON
    frame: pd.DataFrame
    summary: Summary = field(default_factory=Summary)
    population: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    rechecks: dict[int, Evaluation] = field(default_factory=dict)  # re-checked eval id -> its recheck row

    @property
    def signs(self) -> np.ndarray:
        """+1 for minimised, -1 for maximised objectives: minimisation form = sign * value."""
        return np.array([1.0 if s == "min" else -1.0 for s in self.senses])

    @property
    def metric_columns(self) -> list[str]:
        """Every recorded metric (objectives first), as frame columns."""
        skip = set(META_COLUMNS) | set(self.genes) | {VIOLATION}
        return [c for c in self.frame.columns if c not in skip]

    def infeasible(self, eval_id: int) -> str | None:
        """Why the evaluation `eval_id` does not meet the study's constraints, on the fresh seeds when
        it was re-checked (summary.json), else on its search seeds; None when it meets them."""
        row = self.rows.get(eval_id)
        rc = self.rechecks.get(eval_id)
        judged, seeds = (rc, "fresh") if rc is not None and rc.constraints is not None else (row, "search")
        if judged is None or judged.feasible:
            return None
        values = judged.constraints or []
        labels = self.summary.constraints or [f"constraint {k}" for k in range(len(values))]
        unmet = ", ".join(f"{lab} by {100 * v:.1f}% of the limit" for lab, v in zip(labels, values) if v is not None and v > 0)
        return f"eval {eval_id} exceeds {unmet} on its {seeds} seeds"

    def search_ok(self) -> pd.DataFrame:
        """Successful search evaluations: what the front and the clusters are made of."""
        f = self.frame
        return f[(f["kind"] == "search") & (f["status"] == "ok")]


def read_log(path: Path, objectives: list[str] | None = None) -> list[Evaluation]:
    """The log's rows via the search layer's reader: a torn last line is dropped, a damaged line
    before it, or a success without a finite value of one of `objectives`, is a one-line error."""
    try:
        return read_evaluations(path, objectives)
    except ValueError as exc:  # a damaged line before the last one
        raise UserError(f"{exc} (the log is damaged)") from None


def _objectives(study: dict[str, Any], summary: Summary, d: Path) -> tuple[list[str], list[str]]:
    """Names and senses, parsed by the study's own `Objective` (every form a study file accepts)."""
    src, raw = (SUMMARY, summary.objectives) if summary.objectives else (STUDY_FILE, study.get("objectives"))
    parsed: list[Objective] = []
    for k, o in enumerate(raw if isinstance(raw, list) else []):
        try:
            parsed.append(Objective.model_validate(o))
        except ValidationError as exc:
            raise UserError(f"{d / src}: objectives.{k}: {exc.errors()[0]['msg']}") from None
    return [o.name for o in parsed], [o.sense for o in parsed]


def _genes(study: dict[str, Any], src: Path) -> dict[str, GeneSpec]:
    try:
        return StudyGenes.model_validate(study).search
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, str(src), StudyGenes)) from None


def _guessed_genes(rows: list[Evaluation]) -> dict[str, GeneSpec]:
    """Without study.yaml: every genome key, a float gene over its logged range when every value
    is a finite number, else a choice of its logged values (inferred, so not validated)."""
    genes: dict[str, GeneSpec] = {}
    for k in sorted({k for r in rows for k in r.genome}):
        vals = [r.genome[k] for r in rows if k in r.genome]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in vals):
            genes[k] = FloatGene.model_construct(low=min(vals), high=max(vals))
        else:
            genes[k] = ChoiceGene.model_construct(values=list({repr(v): v for v in vals}.values()))
    return genes


def _tidy(rows: list[Evaluation], genes: dict[str, GeneSpec], objectives: list[str]) -> pd.DataFrame:
    records: list[dict[str, Any]] = []
    for r in rows:
        rec: dict[str, Any] = {k: getattr(r, k) for k in META_COLUMNS}
        for g in genes:
            rec[g] = r.genome.get(g)
        objs = r.objectives or {}
        for o in objectives:
            v = objs.get(o)
            rec[o] = float(v) if isinstance(v, (int, float)) else math.nan
        for k, v in (r.metrics or {}).items():
            if k not in rec and isinstance(v, (int, float)):
                rec[k] = float(v)
        records.append(rec)
    frame = pd.DataFrame.from_records(records)
    if any(r.constraints is not None for r in rows):  # a study with constraints; old runs stay as they were
        frame[VIOLATION] = [violation(r.constraints) for r in rows]
    if frame.empty:
        frame = pd.DataFrame(columns=[*META_COLUMNS, *genes, *objectives])
    frame["generation"] = pd.to_numeric(frame["generation"], errors="coerce").fillna(-1).astype(int)
    frame["eval_id"] = frame["eval_id"].astype(int)
    return frame.set_index("eval_id", drop=False).rename_axis(None)


def load_run(run_dir: str | Path) -> RunData:
    """Read a run directory; a missing directory or log is a one-line UserError."""
    d = Path(run_dir)
    if not d.is_dir():
        raise UserError(f"{d}: run directory not found")
    log = d / LOG
    if not log.is_file():
        raise UserError(f"{d}: not a run directory (no {LOG})")
    study_path = d / STUDY_FILE
    study = read_yaml(study_path) if study_path.is_file() else {}
    if not isinstance(study, dict):
        raise UserError(f"{study_path}: expected a mapping (the resolved study)")
    summary = read_summary(d) or Summary()
    population = read_json(d / POPULATION)
    notes: list[str] = []
    if not study_path.is_file():
        notes.append(f"{STUDY_FILE} is missing: gene types are guessed from the values")
    names, senses = _objectives(study, summary, d)
    rows = read_log(log, names if len(names) >= 2 else None)
    genes = _genes(study, study_path) or _guessed_genes(rows)
    if len(names) < 2:
        obj_keys = [k for r in rows for k in (r.objectives or {})]
        names = list(dict.fromkeys(obj_keys))
        senses = ["min"] * len(names)
        rows = read_log(log, names) if len(names) >= 2 else rows  # every success must hold them all
    if len(names) < 2:
        raise UserError(f"{d}: cannot tell the objectives (need at least two, in summary.json or study.yaml)")
    name = str(summary.study or study.get("name") or d.name)
    # a resampled genome's earlier rows (fewer seeds) would otherwise compete with its current one
    frame = _tidy(current_rows(rows), genes, names)
    by_id = {r.eval_id: r for r in rows}
    rechecks = {r.recheck_of: r for r in rows if r.kind == "recheck" and r.recheck_of is not None and r.ok}
    return RunData(run_dir=d.resolve(), study_name=name, objectives=names, senses=senses, genes=genes,
                   rows=by_id, frame=frame, summary=summary, population=population, notes=notes, rechecks=rechecks)


def require_ok(run: RunData) -> pd.DataFrame:
    """The successful search evaluations, or a UserError when there are none."""
    ok = run.search_ok()
    if ok.empty:
        n = int((run.frame["kind"] == "search").sum())
        raise UserError(f"{run.run_dir}: no successful search evaluations ({n} search evaluations logged, all failed)"
                        if n else f"{run.run_dir}: no search evaluations logged yet")
    return ok
