"""summary.json (docs/rundir.md): a run's progress, results and verdicts, as one typed record.

This module is the only code that reads or writes the file. `Summary.from_json` reads every
run written so far: each key is optional, and one missing or of the wrong type reads as its
default, as in runs written before the key existed (analysis of an old or hand-edited run
shows what is there instead of failing). A summary of a later `format` is refused. The
nested blocks are typed records too (`blocks`), parsed here and written back in their JSON shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from paretosched.errors import UserError
from paretosched.search.blocks import (BaselineResult, RecheckBlock, Resampling, Speculation, as_int, as_values,
                                       baselines_from_json, is_num)
from paretosched.search.files import read_json, write_json
from paretosched.search.runlog import LOG, SUMMARY, Generation
from paretosched.search import pareto
from paretosched.sim import twin_version

_NUMBER = (int, float)
# the JSON type of each field, checked on reading (a bool is never a number here)
_TYPES: dict[str, type | tuple[type, ...]] = {
    "study": str, "status": str, "stop_reason": str, "objectives": list, "reference_point": dict,
    "reference_point_source": str, "generations": list, "n_evaluations": int, "n_told": int, "n_failed": int,
    "n_simulations": int, "n_cache_hits": int, "front": list, "hv": _NUMBER, "baselines": dict, "recheck": dict,
    "n_resampled": int, "n_screened": int, "resampling": dict, "speculation": dict, "seeds": list, "elapsed_s": _NUMBER, "versions": dict, "files": dict,
    "format": int, "reference": str, "constraints": list}


@dataclass
class Summary:
    """summary.json's fields, in the file's order (docs/rundir.md has their meaning)."""

    FORMAT: ClassVar[int] = 1

    study: str | None = None
    status: str | None = None  # running | interrupted | done
    stop_reason: str | None = None
    objectives: list[dict[str, str]] = field(default_factory=list)  # [{"name", "sense"}]
    reference_point: dict[str, float] | None = None  # natural sign
    reference_point_source: str | None = None
    generations: list[Generation] = field(default_factory=list)
    n_evaluations: int = 0
    n_told: int = 0
    n_failed: int = 0
    n_simulations: int = 0
    n_cache_hits: int = 0
    front: list[int] = field(default_factory=list)  # eval ids in front order
    hv: float | None = None
    baselines: dict[str, BaselineResult] = field(default_factory=dict)
    recheck: RecheckBlock = field(default_factory=RecheckBlock)
    n_resampled: int = 0
    n_screened: int = 0  # screen rows (prefix screening), each `screening.prefix` of an evaluation
    resampling: Resampling | None = None
    speculation: Speculation | None = None  # schedule steady
    seeds: list[int] = field(default_factory=list)
    elapsed_s: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    format: int = 1
    reference: str | None = None  # the baseline the verdicts' % columns and the reference point measure against
    constraints: list[str] = field(default_factory=list)  # the study's constraints, as labels

    @property
    def twin(self) -> str | None:
        """The twin version that wrote the run."""
        v = self.versions.get("twin")
        return v if isinstance(v, str) else None

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return out | {"generations": [g.to_json() for g in self.generations],
                      "baselines": {n: b.to_json() for n, b in self.baselines.items()},
                      "recheck": self.recheck.to_json(),
                      "resampling": None if self.resampling is None else self.resampling.to_json(),
                      "speculation": None if self.speculation is None else self.speculation.to_json()}

    @classmethod
    def from_json(cls, d: dict[str, Any], where: Path) -> Summary:
        fmt = d.get("format", 1)
        if fmt != cls.FORMAT:
            raise UserError(f"{where}: format {fmt!r}; this paretosched reads summary format {cls.FORMAT} "
                            "(analyse the run with the paretosched that wrote it)")
        values = {k: d[k] for k, kind in _TYPES.items() if isinstance(d.get(k), kind) and not isinstance(d[k], bool)}
        generations = [generation_from_json(g) for g in values.get("generations", [])]
        return cls(**values | {"generations": [g for g in generations if g is not None],
                               "baselines": baselines_from_json(values.get("baselines")),
                               "recheck": RecheckBlock.from_json(values.get("recheck")),
                               "resampling": Resampling.from_json(values.get("resampling")),
                               "speculation": Speculation.from_json(values.get("speculation"))})


def generation_from_json(d: Any) -> Generation | None:
    """An entry of summary.json's `generations`; None without its generation number."""
    if not isinstance(d, dict) or as_int(d.get("generation")) is None:
        return None
    counts = {k: as_int(d.get(k)) or 0 for k in ("evaluations", "new_evaluations", "failures", "front_size",
                                               "resampled")}
    hv = d.get("hv")
    point = d.get("point")
    return Generation(generation=d["generation"], hv=hv if is_num(hv) else None,
                      best=as_values(d.get("best")) or {}, point=point if isinstance(point, dict) else None,
                      **counts)  # type: ignore[arg-type]


def write_summary(run_dir: Path, summary: Summary) -> None:
    write_json(run_dir / SUMMARY, summary.to_json(), root=run_dir)


def read_summary(run_dir: Path) -> Summary | None:
    """The run's summary; None when it has none (a run killed before its first generation); a
    damaged file is a one-line UserError (`runlog.read_json`)."""
    path = run_dir / SUMMARY
    value = read_json(path)
    if value is None:
        return None
    return Summary.from_json(value, path)


def mark_interrupted(run_dir: Path, first: Summary) -> None:
    """Say in the summary that the session stopped early (the last complete summary otherwise); a
    run stopped before its first summary gets `first` (its name and versions) saying only that, so
    that no run directory a session touched is left without a status."""
    try:
        summary = read_summary(run_dir)
    except UserError:  # damaged: left as it is, for the user to see (analyse names it)
        return
    if summary is None:
        summary = first
    if summary.status == "running":
        summary.status = "interrupted"
        try:
            write_summary(run_dir, summary)
        except (OSError, UserError, ValueError):  # e.g. the full disk that stopped the run: report that error
            pass


def summary_of(run: Any, front: list[int], final: bool, recheck: RecheckBlock) -> Summary:
    """The summary of a session's run (`run`: optimise.SearchRun, typed Any as in steady.py: that
    module imports this one) with its front and re-check block; `final` once the run is done."""
    ref = run.state.ref
    rows = run.ledger.rows
    baselines = {}
    for name, bid in run.state.baseline_ids.items():
        dominated_by: list[int] = []
        if run.ledger.ok(bid):
            fb = run.ledger.objective_vector(bid, run.signs)
            dominated_by = [i for i in front if pareto.dominates(run.ledger.objective_vector(i, run.signs), fb)]
        # on the search seeds, where the front was selected: the verdict users act on is
        # recheck.dominated_baselines (fresh seeds)
        baselines[name] = BaselineResult(bid, rows[bid].status, rows[bid].objectives, bool(dominated_by),
                                         dominated_by)
    search = run._search_ids()
    # seeds a resampled row copied from the row it supersedes are neither simulations nor cache hits
    per_seed = [s for r in rows.values() for s in r.per_seed
                if r.supersedes is None or s.seed not in rows[r.supersedes].seeds]
    return Summary(
        study=run.study.name, status="done" if final else "running",
        stop_reason=run.state.stop_reason if final else None,
        objectives=[o.model_dump() for o in run.study.objectives],
        reference_point=None if ref is None else {o: float(run.signs[k] * ref[k]) for k, o in enumerate(run.names)},
        reference_point_source=run.state.ref_source,
        generations=list(run.state.generations),
        n_evaluations=len(search), n_told=run.state.n_told,
        n_failed=sum(1 for i in search if not run.ledger.ok(i)),
        n_simulations=sum(1 for s in per_seed if not s.cached),
        n_cache_hits=sum(1 for s in per_seed if s.cached),
        front=front, hv=run._hv(front), baselines=baselines,
        recheck=recheck, n_resampled=run.state.n_resampled, n_screened=run.state.n_screened,
        resampling=Resampling(**run.resampler.spec.model_dump()) if run.resampler.active else None,  # type: ignore[union-attr]
        speculation=Speculation.from_json((run.state.steady or {}).get("speculation")),
        seeds=run.seeds, elapsed_s=round(run._elapsed(), 3),
        versions=versions(),
        files={"log": LOG}, reference=run.reference,
        constraints=[c.label for c in run.study.constraints])


def versions() -> dict[str, str]:
    """The package and twin versions a run records (the twin's numbers depend on them)."""
    return {"paretosched": twin_version().split("+")[0], "twin": twin_version()}
