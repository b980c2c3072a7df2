"""The study file: what to search, for which objectives, on how many seeds, with which budget.

`load_study(path)` reads a study YAML (or a run directory's resolved copy), validates it and
returns a *resolved* `Study`: `base` is the complete scheduler config with absolute paths,
`seeds` and `recheck` are explicit seed lists, so a resolved study alone reproduces a run.
Every error is a one-line `UserError` naming the file and the key.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import numpy as np
from pydantic import AfterValidator, Discriminator, Field, Tag, field_validator, model_validator
from pydantic_core import PydanticCustomError

from paretosched.config import config_from_dict, load_config
from paretosched.errors import UserError
from paretosched.search.constraints import Constraint, check_constraints
from paretosched.search.current import resolve_baseline
from paretosched.search.genes import Gene, StrictModel as _Strict, check_gene
from paretosched.search.options import (AlgorithmSpec, Budget, FocusSpec, ParallelSpec, ResamplingSpec,
                                        ScreeningSpec)
from paretosched.search.guards import MAX_SEEDS, require_evaluator
from paretosched.yamlio import did_you_mean, read_yaml, register_union_tags, validate
from paretosched.sim.engine.metrics import METRIC_NAMES  # the twin's: objectives must be among them

STUDY_FILE = "study.yaml"
MAX_REFERENCE = 1e12  # |reference point| per objective: see Study._bounded_reference  # name of the resolved copy inside a run directory


def metric_names() -> tuple[str, ...]:
    """The names an objective may take: the twin's metric keys (sim/metrics.py owns the list)."""
    return METRIC_NAMES


_OBJECTIVE_FORMS = "an objective is a metric name, {min: <metric>} or {max: <metric>}"


class Objective(_Strict):
    """`energy_kwh` or `{max: utilisation}` or `{min: mean_bsld}` (or the resolved `{name, sense}`)."""

    name: str
    sense: Literal["min", "max"] = "min"

    @model_validator(mode="before")
    @classmethod
    def _forms(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"name": value, "sense": "min"}
        if isinstance(value, dict):
            unknown = [k for k in value if k not in ("name", "sense", "min", "max")]
            if unknown:
                raise PydanticCustomError("objective_form", "unknown key {key} (" + _OBJECTIVE_FORMS + ")",
                                          {"key": repr(unknown[0])})
            senses = [k for k in value if k in ("min", "max")]
            if senses and len(value) > 1:
                raise PydanticCustomError("objective_form", _OBJECTIVE_FORMS + ", one key only (got {keys})",
                                          {"keys": ", ".join(map(str, value))})
            if senses:
                sense, name = next(iter(value.items()))
                if not isinstance(name, str):
                    raise PydanticCustomError("objective_form", "{sense}: expected a metric name (got {name})",
                                              {"sense": sense, "name": repr(name)})
                return {"name": name, "sense": sense}
            return value
        if isinstance(value, Objective):
            return value
        raise PydanticCustomError("objective_form", "expected " + _OBJECTIVE_FORMS.removeprefix("an objective is "))


def _seed_kind(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return "seed-count"
    return "seed-list" if isinstance(value, list) else None


# a seed lands in int64 columns (the per-seed tables, numpy): a larger one would turn them to objects
MAX_SEED = 2**63 - 1
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]


def _no_repeats(seeds: list[int], what: str) -> None:
    """A seed listed twice would count as two replications of one run: noise of 0, a mean of one."""
    seen: set[int] = set()
    for s in seeds:
        if s in seen:
            raise ValueError(f"seed {s} is listed twice ({what} must be distinct seeds)")
        seen.add(s)


def _replication_seeds(v: int | list[int]) -> int | list[int]:
    if isinstance(v, int) and v < 1:
        raise ValueError("seeds must be >= 1 (a count) or a non-empty list")
    if isinstance(v, list):
        if not v:
            raise ValueError("seeds must be a non-empty list of distinct seeds")
        _no_repeats(v, "seeds")
    if (v if isinstance(v, int) else len(v)) > MAX_SEEDS:
        raise ValueError(f"at most {MAX_SEEDS} seeds")
    return v


def _recheck_seeds(v: int | list[int]) -> int | list[int]:
    if isinstance(v, int) and v < 0:
        raise ValueError("recheck must be >= 0 (0 = no re-check)")
    if isinstance(v, list):
        _no_repeats(v, "re-check seeds")
    if (v if isinstance(v, int) else len(v)) > MAX_SEEDS:
        raise ValueError(f"at most {MAX_SEEDS} re-check seeds")
    return v


_SEED_UNION = Union[Annotated[int, Tag("seed-count")], Annotated[list[Seed], Tag("seed-list")]]
# a number of seeds or an explicit list (a bool or a string is neither); the one rule of a seeds
# value, for study files and the Python API alike (`paretosched.arguments`)
Seeds = Annotated[_SEED_UNION, Discriminator(
    _seed_kind, custom_error_type="seeds_type", custom_error_message="expected a number of seeds or a list of seeds"),
    AfterValidator(_replication_seeds)]
Recheck = Annotated[_SEED_UNION, Discriminator(
    _seed_kind, custom_error_type="seeds_type",
    custom_error_message="expected a number of fresh seeds (0 = no re-check), a list of seeds, or null"),
    AfterValidator(_recheck_seeds)]


def _base_kind(value: Any) -> str | None:
    return "base-mapping" if isinstance(value, dict) else "base-file" if isinstance(value, str) else None


register_union_tags("seed-count", "seed-list", "base-mapping", "base-file")
BaseConfig = Annotated[
    Union[Annotated[dict[str, Any], Tag("base-mapping")], Annotated[str, Tag("base-file")]],
    Discriminator(_base_kind, custom_error_type="base_type",
                  custom_error_message="expected a scheduler config (a mapping) or the path of a config file"),
]


class Study(_Strict):
    """A validated study. After `load_study` it is resolved (see module docstring)."""

    name: str = Field(..., min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    base: BaseConfig
    search: dict[str, Gene] = Field(..., min_length=1)
    objectives: list[Objective] = Field(
        default_factory=lambda: [Objective(name="energy_kwh"), Objective(name="mean_bsld")], min_length=2)
    seeds: Seeds = 1
    seed: int = Field(0, ge=0, le=MAX_SEED, description="study seed: algorithm RNG and derived seeds")
    budget: Budget
    algorithm: AlgorithmSpec = Field(default_factory=AlgorithmSpec)
    parallel: ParallelSpec = Field(default_factory=ParallelSpec)
    baselines: dict[str, dict[str, Any]] = Field(default_factory=dict)
    recheck: Recheck | None = Field(
        None, description="fresh seeds for the final re-check: count or list; null = max(3, number of seeds)")
    resampling: ResamplingSpec | None = Field(None, description="extra seeds near the front during the search; "
                                              "null = off (the default: the front's verdicts come from the re-check)")
    reference_point: dict[str, float] | None = Field(None, description="hypervolume reference, natural sign")
    screening: ScreeningSpec | None = Field(None, description="surrogate pre-screening of offspring; null = off")
    focus: FocusSpec | None = Field(None, description="search the trade-offs that beat this baseline; null = off")
    constraints: list[Constraint] = Field(default_factory=list, description="limits on metrics (constraints.py)")
    reference: str | None = Field(None, description="the baseline the verdicts, % columns and hypervolume reference "
                                  "point are measured against; null = the baseline named `current`, if any")
    slurm_confs: dict[str, dict[str, str]] = Field(default_factory=dict, description="written by resolution: the slurm.conf "
                                        "each `from_slurm_conf` baseline was decoded from")
    evaluator: str | None = Field(None, description="'module:function' (config dict, seed) -> metrics; null = the twin")
    cache: bool = True
    cache_dir: str | None = None

    @field_validator("search")
    @classmethod
    def _no_nested_genes(cls, v: dict[str, Any]) -> dict[str, Any]:
        # refused, not merged: the field's value would overwrite the section's choice or be
        # overwritten by it (by study order), so two genomes would make one config, and the log,
        # the cache and the population (which key on configs) would no longer agree
        for outer in v:
            inner = next((p for p in v if p.startswith(outer + ".")), None)
            if inner is not None:
                raise ValueError(f"genes {outer!r} and {inner!r} both set {inner}: search a section or its "
                                 "fields, not both (to search whole sections, list every variant as a choice)")
        return v

    @field_validator("reference_point")
    @classmethod
    def _bounded_reference(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        # the hypervolume is a product of one (reference - value) per objective: bounded values
        # keep it, and the JSON it is written to, finite (1e308 gave inf and a crash)
        if v is None:
            return v
        for name, x in v.items():
            if abs(x) > MAX_REFERENCE:
                raise ValueError(f"{name}: {x:g} is beyond +-{MAX_REFERENCE:g} (the hypervolume would overflow)")
        if sum(math.log10(2 * max(abs(x), 1.0)) for x in v.values()) > 300:
            raise ValueError("these values make a hypervolume beyond 1e300 (a float overflows at 1.8e308); "
                             "give smaller ones")
        return v

    @field_validator("name")
    @classmethod
    def _not_a_dot(cls, v: str) -> str:
        # runs/. is runs itself, runs/.. its parent, runs/.cache the evaluation cache (search/rundir.py)
        if v.startswith("."):
            raise ValueError(f"a study name names its run folder (runs/<name>): {v!r} would be "
                             f"{'runs itself or its parent' if v in ('.', '..') else 'hidden'}"
                             f"{' (runs/.cache is the evaluation cache)' if v == '.cache' else ''}; "
                             "start it with a letter or a digit")
        return v

    @field_validator("evaluator")
    @classmethod
    def _evaluator(cls, v: str | None) -> str | None:
        if v is not None and v.count(":") != 1:
            raise ValueError("expected 'module:function'")
        return v

    # convenience -------------------------------------------------------------------------
    @property
    def objective_names(self) -> list[str]:
        return [o.name for o in self.objectives]

    @property
    def signs(self) -> np.ndarray:
        """+1 for minimised, -1 for maximised objectives (minimisation form = sign * value)."""
        return np.array([1.0 if o.sense == "min" else -1.0 for o in self.objectives])


# ---------------------------------------------------------------------------------------------
# loading and resolution

def load_study(path: str | Path) -> Study:
    """Read, validate and resolve a study file, or the study copy of a run directory."""
    p = Path(path)
    if p.is_dir():
        if not (p / STUDY_FILE).is_file():
            raise UserError(f"{p}: not a study file nor a run directory (no {STUDY_FILE})")
        p = p / STUDY_FILE
    study = validate(Study, read_yaml(p), str(p))
    return resolve_study(study, p)


def resolve_study(study: Study, path: Path) -> Study:
    """Check everything the schema cannot see and make the study self-contained."""
    src = str(path)
    base = _resolve_base(study.base, path)
    names = metric_names()
    unknown = [f"objectives.{i}: unknown metric {o.name!r}{did_you_mean(o.name, names)}"
               for i, o in enumerate(study.objectives) if o.name not in names]
    if unknown:  # every one of them, each with its nearest metric
        raise UserError(f"{src}: {'; '.join(unknown)} (expected one of {', '.join(names)})")
    if len(set(study.objective_names)) != len(study.objectives):
        raise UserError(f"{src}: objectives: an objective is listed twice")
    if study.reference_point is not None and set(study.reference_point) != set(study.objective_names):
        raise UserError(f"{src}: reference_point: give one value per objective ({', '.join(study.objective_names)})")
    for gene_path, gene in study.search.items():
        check_gene(base, gene_path, gene, src)
    confs = dict(study.slurm_confs)
    baselines = {b: resolve_baseline(b, o, path.parent, src, confs) for b, o in study.baselines.items()}
    for bname, override in baselines.items():
        merged = baseline_config(base, override)
        try:
            config_from_dict(merged, f"{src}: baselines.{bname}")
        except UserError as exc:
            raise UserError(str(exc).replace(f"{src}: baselines.{bname}: ", f"{src}: baselines.{bname}.", 1)) from None
    if study.focus is not None and study.focus.baseline not in study.baselines:
        raise UserError(f"{src}: focus.baseline: {study.focus.baseline!r} is not one of the study's baselines"
                        f"{did_you_mean(study.focus.baseline, study.baselines) or _known(study.baselines)}")
    check_constraints(study.constraints, list(study.baselines), study.focus is not None, names, src)
    if study.reference is not None and study.reference not in study.baselines:
        raise UserError(f"{src}: reference: {study.reference!r} is not one of the study's baselines"
                        f"{did_you_mean(study.reference, study.baselines) or _known(study.baselines)}")
    if study.focus is not None and len(study.objectives) > 2:  # NSGA-III's survival would freeze the population
        raise UserError(f"{src}: focus: needs 2 objectives (NSGA-II); this study has {len(study.objectives)}")
    if study.evaluator is not None:
        _import_evaluator(study.evaluator, src)
    if study.algorithm.schedule == "steady" and study.screening is not None:
        raise UserError(f"{src}: screening: screens a generation's offspring; not with algorithm.schedule: steady")
    w = base.get("workload") or {}
    if study.screening is not None and study.screening.by == "prefix" and w.get("jobs") is None \
            and w.get("n_jobs") is None and "workload.n_jobs" not in study.search:
        raise UserError(f"{src}: screening.by: prefix runs candidates on a share of the window's jobs; give the "
                        "window's length as base.workload.n_jobs")

    try:
        seeds, recheck = derive_seeds(study)
    except UserError as exc:
        raise UserError(f"{src}: {exc}") from None
    cache_dir = study.cache_dir
    if cache_dir is not None and not Path(cache_dir).is_absolute():
        cache_dir = str((path.parent / cache_dir).resolve())
    return study.model_copy(update={"base": base, "seeds": seeds, "recheck": recheck, "cache_dir": cache_dir,
                                    "baselines": baselines, "slurm_confs": confs})


def reference_baseline(study: Study) -> str | None:
    """The baseline results are measured against: `reference`, else the one named `current`."""
    return study.reference or ("current" if "current" in study.baselines else None)



def _known(names: Any) -> str:
    return f" ({', '.join(map(repr, names))})" if names else " (the study names none: add it under baselines)"


def derive_seeds(study: Study) -> tuple[list[int], list[int]]:
    """Replication and re-check seeds from the study seed (SeedSequence children 1 and 2).

    Child 0 drives the algorithm (see `algorithm_seed`). Explicit lists are kept as given;
    re-check seeds are always distinct from the replication seeds (they must be fresh).
    """
    children = np.random.SeedSequence(study.seed).spawn(3)
    if isinstance(study.seeds, list):
        seeds = list(study.seeds)
    else:
        seeds = _distinct(children[1], study.seeds, set())
    if isinstance(study.recheck, list):
        recheck = list(study.recheck)
        clash = set(recheck) & set(seeds)
        if clash:
            raise UserError(f"recheck: seeds {sorted(clash)} are also replication seeds (re-check seeds must be fresh)")
    else:
        n = max(3, len(seeds)) if study.recheck is None else study.recheck
        recheck = _distinct(children[2], n, set(seeds))
    return seeds, recheck


def extra_seeds(study: Study) -> list[int]:
    """Seeds a resampled genome gets beyond `seeds`, in order (SeedSequence child 3 of the
    study seed; disjoint from the replication and the re-check seeds). Needs a resolved study."""
    spec, seeds = study.resampling, list(study.seeds)  # type: ignore[arg-type]
    if spec is None or spec.max_seeds <= len(seeds):
        return []
    child = np.random.SeedSequence(study.seed).spawn(4)[3]  # children 0-2 are derive_seeds' and the algorithm's
    return _distinct(child, spec.max_seeds - len(seeds), set(seeds) | set(study.recheck or []))  # type: ignore[arg-type]


def algorithm_seed(study: Study) -> int:
    """Seed of the optimiser's RNG (SeedSequence child 0 of the study seed)."""
    child = np.random.SeedSequence(study.seed).spawn(3)[0]
    return int(child.generate_state(1, dtype=np.uint32)[0])


def _distinct(ss: np.random.SeedSequence, n: int, avoid: set[int]) -> list[int]:
    out: list[int] = []
    k = n
    while len(out) < n:  # collisions are astronomically rare; loop keeps the result exact anyway
        for s in ss.generate_state(k + len(avoid) + 4, dtype=np.uint32):
            s = int(s) & 0x7FFFFFFF
            if s not in avoid and s not in out:
                out.append(s)
            if len(out) == n:
                break
        k *= 2
    return out


def _resolve_base(base: dict[str, Any] | str, path: Path) -> dict[str, Any]:
    if isinstance(base, str):
        ref = Path(base)
        ref = ref if ref.is_absolute() else path.parent / ref
        try:
            cfg = load_config(ref)
        except UserError as exc:  # the config file's own message, said to come from the study's base
            raise UserError(f"{path}: base: {exc}") from None
    else:
        cfg = config_from_dict(base, f"{path}: base").resolved(path.parent)
    return cfg.model_dump(mode="json")


def baseline_config(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A baseline's config: its override merged onto the study's base config.

    A baseline of another scheduler kind (a classic FCFS beside an RL study) gets its own
    scheduler section, not the base's fields of the other kind merged into it.
    """
    sched = override.get("scheduler")
    base_kind = (base.get("scheduler") or {}).get("kind", "classic")
    if isinstance(sched, dict) and sched.get("kind", base_kind) != base_kind:
        merged = deep_merge({k: v for k, v in base.items() if k != "scheduler"},
                           {k: v for k, v in override.items() if k != "scheduler"})
        merged["scheduler"] = dict(sched)
        return merged
    return deep_merge(base, override)


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`base` with `override` merged in recursively (override wins; both left untouched)."""
    out = copy.deepcopy(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _import_evaluator(ref: str, src: str) -> Any:
    import importlib

    require_evaluator(ref, src)  # before importing: a study must not run arbitrary code
    module, _, func = ref.partition(":")
    try:
        fn = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"{src}: evaluator: cannot import {ref!r} ({exc})") from None
    if not callable(fn):
        raise UserError(f"{src}: evaluator: {ref!r} is not callable")
    return fn
