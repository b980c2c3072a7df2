"""`Run`: a run directory (docs/rundir.md) as pandas tables, typed picks and exportable configs.

The model is Optuna's `Study.trials_dataframe()`: one call hands every evaluation to pandas.
Nothing here decides what the front is or parses the log by itself: the log, the study and
the summary are read by `analysis.rundata.load_run`, `.front` is the search's own front.csv,
the picks come from `analysis.front` (which ranks the same points) and exported configs from
`analysis.export`, so a `Run` always agrees with `paretosched analyse` and `export`.

`.evaluations` has one row per logged evaluation (search, baseline and recheck rows alike,
in eval id order), so `len(run.evaluations)` is the number of lines in evaluations.jsonl. A
genome the search resampled on more seeds has several rows; only its last is `current` (the
others are `superseded` by it), and only current rows enter the front and the picks.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from paretosched.analysis.export import config_document, to_yaml
from paretosched.analysis.front import Pick, choose, front_of, standard_picks
from paretosched.analysis.recheck import load_recheck, search_seed_verdicts
# _tidy: analysis' one builder of the evaluation table (its RunData.frame keeps current rows only)
from paretosched.analysis.rundata import META_COLUMNS, RunData, _tidy
from paretosched.analysis.rundata import load_run as _load_run_data
from paretosched.arguments import OPTIONAL_PATH, PATH, PICK, checked
from paretosched.commands.outputs import require_writable
from paretosched.config import config_from_dict
from paretosched.search.files import make_output_dir, write_output
from paretosched.errors import UserError
from paretosched.search.runlog import FRONT, current_rows, read_front
from paretosched.search.summary import Summary

TABLE_FORMATS = (".csv", ".parquet")


@dataclass(frozen=True)
class Recheck:
    """The final front re-run on fresh seeds: one `table` row per re-checked evaluation.

    `table` columns: `eval_id` (the re-checked evaluation), `kind`, `name`, `recheck_eval_id`,
    `status` (of the re-check), each objective at the search seeds and `recheck_<objective>` at
    the fresh `seeds`. `dominated_baselines` (decided on the re-check seeds) is None when the
    run has no such verdict: no re-check, baselines not re-checked yet, or a summary that does
    not say (`Run.baselines` then carries the search-seed verdict, labelled so).
    """

    seeds: list[int]
    table: pd.DataFrame = field(repr=False)
    dominated_baselines: list[str] | None = None


class Run:
    """A run directory read once; tables are built on first access and kept."""

    def __init__(self, data: RunData) -> None:
        self.data = data

    def __repr__(self) -> str:
        return (f"Run({str(self.path)!r}, study={self.study_name!r}, evaluations={len(self.data.rows)}, "
                f"status={self.summary.status or '?'!r})")

    # identity ---------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self.data.run_dir

    @property
    def study_name(self) -> str:
        return self.data.study_name

    @property
    def objectives(self) -> list[str]:
        return list(self.data.objectives)

    @property
    def senses(self) -> dict[str, str]:
        """Objective -> "min" or "max"."""
        return dict(zip(self.data.objectives, self.data.senses))

    @property
    def genes(self) -> list[str]:
        """Gene dotted paths, in study order (the gene columns of the tables)."""
        return list(self.data.genes)

    @property
    def summary(self) -> Summary:
        """summary.json as written by the search (every field at its default if missing)."""
        return self.data.summary

    # tables -----------------------------------------------------------------------------
    @cached_property
    def evaluations(self) -> pd.DataFrame:
        """One row per logged evaluation: meta, genes, objectives, other metrics, then `seeds`,
        `current` (False: superseded by a resampled row, or a screen row), `supersedes` and `error`."""
        rows = [self.data.rows[i] for i in sorted(self.data.rows)]
        frame = _tidy(rows, self.data.genes, self.objectives).reset_index(drop=True)
        _fill_genes_from_config(frame, rows, list(self.genes))
        first = [*META_COLUMNS, *self.genes, *self.objectives]
        frame = frame[[*first, *(c for c in frame.columns if c not in first)]].copy()
        # a screen row ran a prefix of the window (prefix screening): never a genome's standing values
        current = {r.eval_id for r in current_rows(rows) if r.kind != "screen"}
        frame["seeds"] = [list(r.seeds) for r in rows]
        frame["current"] = [r.eval_id in current for r in rows]
        frame["supersedes"] = pd.array([r.supersedes for r in rows], dtype="Int64")
        frame["error"] = [r.error for r in rows]
        frame["recheck_of"] = frame["recheck_of"].astype("Int64")
        return frame

    @cached_property
    def per_seed(self) -> pd.DataFrame:
        """One row per evaluation x seed: eval_id, kind, generation, name, current, seed, status,
        cached, wall_s, error, then every metric the twin reported for that seed."""
        records: list[dict[str, Any]] = []
        current = set(self.evaluations["eval_id"][self.evaluations["current"]])
        for eval_id in sorted(self.data.rows):
            row = self.data.rows[eval_id]
            for s in row.per_seed:
                rec = {"eval_id": eval_id, "kind": row.kind, "generation": row.generation, "name": row.name,
                       "current": eval_id in current, "seed": s.seed, "status": s.status, "cached": s.cached,
                       "wall_s": s.wall_s, "error": s.error}
                rec.update(s.metrics or {})
                records.append(rec)
        if not records:  # a run that has logged nothing yet: the columns all the same
            return pd.DataFrame(columns=["eval_id", "kind", "generation", "name", "current", "seed", "status",
                                         "cached", "wall_s", "error"])
        return pd.DataFrame.from_records(records)

    @cached_property
    def front(self) -> pd.DataFrame:
        """front.csv, the search's front with its re-check columns (docs/rundir.md); floats bit
        for bit. `analysis.front.front_of` ranks the same points (a test holds them equal)."""
        front = read_front(self.path)
        if front is None:
            raise UserError(f"{self.path}: no {FRONT} yet (no generation has finished)")
        return front

    @cached_property
    def baselines(self) -> pd.DataFrame:
        """One row per baseline: name, eval_id, status, objectives (search seeds), then the verdict.

        `dominated`: dominated by a front point on the fresh re-check seeds (issue 13: verdicts
        are decided there), or, when the run has no such verdict (`recheck: 0`, or baselines
        not re-checked yet), the search-seed verdict; `judged_on` says which ("recheck seeds",
        "search seeds", or NA when summary.json says nothing). `dominated_on_search_seeds`:
        summary.json's verdict on the seeds the front was selected on, which flatters the front.
        """
        ev = self.evaluations
        out = ev[ev["kind"] == "baseline"][["name", "eval_id", "status", *self.objectives]].reset_index(drop=True)
        rc = load_recheck(self.data)
        on_search = search_seed_verdicts(self.data)
        searched = [on_search.get(str(n)) for n in out["name"]]
        if rc.judged:
            out["dominated"] = pd.array([str(n) in (rc.dominated_baselines or []) for n in out["name"]],
                                        dtype="boolean")
            out["judged_on"] = pd.array(["recheck seeds"] * len(out), dtype="string")
        else:
            out["dominated"] = pd.array(searched, dtype="boolean")
            out["judged_on"] = pd.array([None if v is None else "search seeds" for v in searched], dtype="string")
        out["dominated_on_search_seeds"] = pd.array(searched, dtype="boolean")
        return out

    @cached_property
    def recheck(self) -> Recheck:
        """The re-check of the final front (and of baselines, when the run re-checked them)."""
        rows = self.data.rows
        records = []
        for r in (rows[i] for i in sorted(rows)):
            if r.kind != "recheck" or r.recheck_of not in rows:
                continue
            orig = rows[r.recheck_of]
            rec: dict[str, Any] = {"eval_id": orig.eval_id, "kind": orig.kind, "name": orig.name,
                                   "recheck_eval_id": r.eval_id, "status": r.status}
            for o in self.objectives:
                rec[o] = (orig.objectives or {}).get(o)
                rec[f"recheck_{o}"] = (r.objectives or {}).get(o)
            records.append(rec)
        cols = ["eval_id", "kind", "name", "recheck_eval_id", "status", *self.objectives,
                *(f"recheck_{o}" for o in self.objectives)]
        table = pd.DataFrame.from_records(records, columns=cols)
        seeds = self.summary.recheck.seeds
        if seeds is None:  # runs before the block recorded its seeds
            seeds = next((list(r.seeds) for r in rows.values() if r.kind == "recheck"), [])
        return Recheck(seeds=[int(s) for s in seeds], table=table,
                       dominated_baselines=load_recheck(self.data).dominated_baselines)

    # picks and export -------------------------------------------------------------------
    @cached_property
    def picks(self) -> pd.DataFrame:
        """The standard picks (best of each objective, balanced, knee), indexed by pick name:
        eval_id, note and the objectives."""
        chosen = standard_picks(self.data, front_of(self.data))
        ev = self.evaluations.set_index("eval_id")
        return pd.DataFrame.from_records(
            [{"pick": p.name, "eval_id": p.eval_id, "note": p.note,
              **{o: ev.at[p.eval_id, o] for o in self.objectives}} for p in chosen]).set_index("pick")

    @checked(expr=PICK)
    def pick(self, expr: str = "balanced") -> Pick:
        """One point by a pick expression (as `paretosched export --pick`), e.g. "knee",
        "min:energy_kwh", "weights:0.7,0.3", "index:0", "eval:42", or "baseline:NAME"."""
        try:
            return choose(self.data, expr)
        except UserError as exc:  # e.g. "weights: ..." alone would not say which argument
            raise UserError(str(exc) if repr(expr) in str(exc) else f"pick {expr!r}: {exc}") from None

    @checked(pick=PICK, path=OPTIONAL_PATH)
    def export(self, pick: str = "balanced", path: str | Path | None = None) -> dict[str, Any]:
        """The picked point's scheduler config with its provenance (what `paretosched simulate`
        and `ps.simulate` read); also written as YAML to `path` when given."""
        if path is not None:  # before the work: a folder, or a place that cannot be written
            require_writable(path, "path", folder=False)
        chosen = self.pick(pick)
        doc = config_document(self.data, chosen.eval_id, chosen.name)
        config_from_dict(doc, f"export of eval {chosen.eval_id}")  # what simulate would refuse, refused here
        if path is not None:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_text(to_yaml(doc), encoding="utf-8")
            except OSError as exc:  # a full disk (/dev/full), a vanished folder: one line naming the file
                raise UserError(f"path {path}: cannot write the exported config: {exc.strerror or exc}") from None
        return doc


@checked(path=PATH)
def load_run(path: str | Path) -> Run:
    """Read a run directory; a missing directory or log is a one-line UserError."""
    return Run(_load_run_data(path))


def write_table(run_dir: str | Path, out: str | Path, force: bool = False, per_seed: bool = False) -> Path:
    """Write a run's evaluations (or its per-seed rows) to a .csv or .parquet file; returns it."""
    p = Path(out)
    suffix = p.suffix.lower()
    if suffix not in TABLE_FORMATS:
        raise UserError(f"--output {out}: unknown table format {suffix or '(no suffix)'!r} (expected "
                        f"{' or '.join(TABLE_FORMATS)})")
    if p.exists() and not force:
        raise UserError(f"--output {out}: exists; add --force to overwrite it")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401 - pandas writes parquet through it
        except ImportError:
            raise UserError(f"--output {out}: writing parquet needs pyarrow: pip install 'paretosched[parquet]'") from None
    run = load_run(run_dir)
    table = run.per_seed if per_seed else run.evaluations
    make_output_dir(p.parent, Path(run_dir))  # in the run dir, never through a link (search/files.py)
    if suffix == ".csv":
        write_output(p, table.to_csv(index=False), Path(run_dir))
    else:
        buf = io.BytesIO()
        _arrow_safe(table).to_parquet(buf, index=False)
        write_output(p, buf.getvalue(), Path(run_dir))
    return p


def _arrow_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns mixing value types (a choice gene of [null, 60, "x"]) as strings:
    parquet columns have one type, and pyarrow refuses the mix."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype != object or col == "seeds":
            continue
        types = {type(v) for v in out[col] if v is not None and v == v}
        if len(types) > 1 and not types <= {int, float}:
            out[col] = [None if v is None or v != v else str(v) for v in out[col]]
    return out


_UNSET = object()


def _fill_genes_from_config(frame: pd.DataFrame, rows: list[Any], genes: list[str]) -> None:
    """A row without a genome (a baseline, its re-check) gets each gene whose path its config sets."""
    for i, r in enumerate(rows):
        if r.genome or not r.config:
            continue
        for g in genes:
            value: Any = r.config
            for part in g.split("."):
                value = value.get(part, _UNSET) if isinstance(value, dict) else _UNSET
            if value is _UNSET or value is None:
                continue
            if frame[g].dtype.kind in "fiub" and not isinstance(value, (int, float)):
                frame[g] = frame[g].astype(object)  # a choice of strings in a column still all NaN
            frame.at[i, g] = value
