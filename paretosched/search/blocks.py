"""summary.json's nested blocks (docs/rundir.md) as typed records: the baselines' search-seed
verdicts, the re-check (front points and baselines on fresh seeds) and resampling (the
generations are `runlog.Generation`s).

`summary.Summary` parses them once when summary.json is read and writes them back with their
`to_json`, key for key as the search wrote them. Reading is tolerant, as Summary's is: a key
missing or of the wrong type reads as "not recorded" (None or empty), so runs written before a
key existed (and hand-edited ones) still analyse. Older runs' re-check block has only `seeds`
and `eval_ids`: the re-check keys a block lacks read as None and are not written back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

Values = dict[str, "float | None"]  # objective -> value (None: JSON null, a non-finite value)


def is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def as_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def as_values(d: Any) -> Values | None:
    """A name -> number map; None when not a mapping (entries of another type are dropped)."""
    if not isinstance(d, dict):
        return None
    return {str(k): v for k, v in d.items() if v is None or is_num(v)}


def _ints(v: Any) -> list[int]:
    return [i for i in v if as_int(i) is not None] if isinstance(v, list) else []


def _strs(v: Any) -> list[str]:
    return [str(s) for s in v if isinstance(s, (str, int))] if isinstance(v, list) else []


class _Record:
    """A block written back to summary.json key for key, nested records as their JSON objects."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]  # every subclass is a dataclass


@dataclass
class SeedValues(_Record):
    """One re-check seed of a point: its status and objective values (None when it failed)."""

    seed: int | None = None
    status: str = "ok"
    objectives: Values | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_json(cls, d: Any) -> SeedValues | None:
        if not isinstance(d, dict):
            return None
        status = d.get("status", "ok")
        # {"seed", "status", "objectives"}; a plain value map in early re-check blocks
        values = d.get("objectives") if "objectives" in d else d.get("metrics") if "metrics" in d else {
            k: v for k, v in d.items() if k not in ("seed", "status")}
        return cls(as_int(d.get("seed")), status if isinstance(status, str) else "ok", as_values(values))


def _seed_values(v: Any) -> list[SeedValues]:
    out = [SeedValues.from_json(e) for e in v] if isinstance(v, list) else []
    return [s for s in out if s is not None]


@dataclass
class PointCheck(_Record):
    """A point re-simulated on the re-check seeds: its search and re-check means, per-seed values."""

    eval_id: int | None = None
    recheck_eval_id: int | None = None  # None: not re-checked
    search: Values | None = None  # mean over the search seeds
    n_search_seeds: int = 0
    objectives: Values | None = None  # mean over the re-check seeds
    per_seed: list[SeedValues] = field(default_factory=list)
    std: Values | None = None  # None below two re-check seeds
    # a study's constraints (search/constraints.py), written only when it has some: the values on
    # the search seeds and on the re-check seeds, and whether the point meets them on the seeds
    # the verdicts are on (the re-check's when re-checked)
    constraints: list[float | None] | None = None
    recheck_constraints: list[float | None] | None = None
    feasible: bool | None = None
    # (value - the reference baseline's) / |the reference baseline's| per objective, on the verdicts' seeds
    vs_reference: Values | None = None

    _OPTIONAL: ClassVar[tuple[str, ...]] = ("constraints", "recheck_constraints", "feasible", "vs_reference")

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None or k not in self._OPTIONAL}

    @staticmethod
    def _common(d: dict[str, Any]) -> dict[str, Any]:
        n = as_int(d.get("n_search_seeds"))
        feasible = d.get("feasible")
        return {"eval_id": as_int(d.get("eval_id")), "recheck_eval_id": as_int(d.get("recheck_eval_id")),
                "search": as_values(d.get("search")), "n_search_seeds": 0 if n is None else n,
                "objectives": as_values(d.get("objectives")), "per_seed": _seed_values(d.get("per_seed")),
                "std": as_values(d.get("std")), "constraints": _limits(d.get("constraints")),
                "recheck_constraints": _limits(d.get("recheck_constraints")),
                "feasible": feasible if isinstance(feasible, bool) else None,
                "vs_reference": as_values(d.get("vs_reference"))}


def _limits(v: Any) -> list[float | None] | None:
    return [x if is_num(x) else None for x in v] if isinstance(v, list) else None


@dataclass
class FrontCheck(PointCheck):
    """A front point's entry of `recheck.front`, with its verdicts."""

    rel_change: Values | None = None  # (re-check - search) / |search|
    dominated_by_baseline: list[str] = field(default_factory=list)
    dominated_by_front: list[int] = field(default_factory=list)  # eval ids, on the re-check seeds

    @classmethod
    def from_json(cls, d: Any) -> FrontCheck | None:
        if not isinstance(d, dict):
            return None
        return cls(**cls._common(d), rel_change=as_values(d.get("rel_change")),
                   dominated_by_baseline=_strs(d.get("dominated_by_baseline")),
                   dominated_by_front=_ints(d.get("dominated_by_front")))


@dataclass
class BaselineCheck(PointCheck):
    """A baseline's entry of `recheck.baselines`, with the front points that dominate it."""

    dominated_by: list[int] = field(default_factory=list)

    @classmethod
    def from_json(cls, d: Any) -> BaselineCheck | None:
        if not isinstance(d, dict):
            return None
        return cls(**cls._common(d), dominated_by=_ints(d.get("dominated_by")))


@dataclass
class RecheckBlock(_Record):
    """summary.json's `recheck` (`verdict.recheck_block` builds it); None: not in the file."""

    seeds: list[int] | None = None
    verdicts_on: str | None = None  # "re-check seeds" | "search seeds"
    front: list[FrontCheck] | None = None
    baselines: dict[str, BaselineCheck] | None = None
    dominated_baselines: list[str] | None = None
    median_rel_change: Values | None = None
    median_rel_stderr: Values | None = None
    eval_ids: dict[str, int] | None = None  # str(re-checked eval id) -> its re-check eval id

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None}  # an absent key stays absent
        if self.front is not None:
            out["front"] = [p.to_json() for p in self.front]
        if self.baselines is not None:
            out["baselines"] = {n: b.to_json() for n, b in self.baselines.items()}
        return out

    @classmethod
    def from_json(cls, d: Any) -> RecheckBlock:
        if not isinstance(d, dict):
            return cls()
        front = d.get("front")
        base = d.get("baselines")
        verdicts_on, dom, ids = d.get("verdicts_on"), d.get("dominated_baselines"), d.get("eval_ids")
        return cls(
            seeds=_ints(d["seeds"]) if isinstance(d.get("seeds"), list) else None,
            verdicts_on=verdicts_on if isinstance(verdicts_on, str) else None,
            front=[p for p in map(FrontCheck.from_json, front) if p is not None] if isinstance(front, list) else None,
            baselines={str(n): b for n, b in ((n, BaselineCheck.from_json(e)) for n, e in base.items())
                       if b is not None} if isinstance(base, dict) else None,
            dominated_baselines=_strs(dom) if isinstance(dom, list) else None,
            median_rel_change=as_values(d.get("median_rel_change")),
            median_rel_stderr=as_values(d.get("median_rel_stderr")),
            eval_ids={str(k): v for k, v in ids.items() if as_int(v) is not None} if isinstance(ids, dict) else None)


@dataclass
class BaselineResult(_Record):
    """A baseline's entry of summary.json's `baselines`: its search-seed values and verdict."""

    eval_id: int | None = None
    status: str | None = None
    objectives: Values | None = None
    # dominated by the front on the SEARCH seeds (which flatter the front); None: not said
    dominated_on_search_seeds: bool | None = None
    dominated_by_on_search_seeds: list[int] = field(default_factory=list)

    @classmethod
    def from_json(cls, d: Any) -> BaselineResult | None:
        if not isinstance(d, dict):
            return None
        status = d.get("status")
        # `dominated` in runs written before the name said which seeds
        dom = d.get("dominated_on_search_seeds", d.get("dominated"))
        return cls(as_int(d.get("eval_id")), status if isinstance(status, str) else None,
                   as_values(d.get("objectives")), dom if isinstance(dom, bool) else None,
                   _ints(d.get("dominated_by_on_search_seeds")))


def baselines_from_json(d: Any) -> dict[str, BaselineResult]:
    if not isinstance(d, dict):
        return {}
    return {str(n): b for n, b in ((n, BaselineResult.from_json(e)) for n, e in d.items()) if b is not None}


@dataclass
class Resampling(_Record):
    """summary.json's `resampling`: the study's resampling settings (docs/search.md)."""

    max_seeds: int
    step: int
    tolerance: float

    @classmethod
    def from_json(cls, d: Any) -> Resampling | None:
        """None when absent or incomplete (resampling off, or a run from before it)."""
        if not isinstance(d, dict):
            return None
        m, s, t = as_int(d.get("max_seeds")), as_int(d.get("step")), d.get("tolerance")
        return cls(m, s, t) if m is not None and s is not None and is_num(t) else None


@dataclass
class Speculation(_Record):
    """summary.json's `speculation` (schedule steady; TaskPool.speculate): the simulations idle workers
    ran ahead, those a task then took (logged as simulations of the run), and the worker-seconds of
    the others, spent for nothing."""

    speculated: int = 0
    used: int = 0
    unused_s: float = 0.0

    def __add__(self, other: Speculation) -> Speculation:
        return Speculation(self.speculated + other.speculated, self.used + other.used,
                           round(self.unused_s + other.unused_s, 3))

    @classmethod
    def from_json(cls, d: Any) -> Speculation | None:
        """None when absent (another schedule, or a run from before it); a count of the wrong type reads 0."""
        if not isinstance(d, dict):
            return None
        unused = d.get("unused_s")
        return cls(as_int(d.get("speculated")) or 0, as_int(d.get("used")) or 0, unused if is_num(unused) else 0.0)
