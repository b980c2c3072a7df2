"""A study's option sections (docs/search.md): the budget, the algorithm, the workers, and the
search levers (dynamic resampling, offspring screening, focus).

Kept apart from study.py (the study as a whole: objectives, seeds, base config, baselines) so
that the modules that act on them (problem.py, resample.py, screening.py, fidelity.py) can import
their settings without importing the whole study.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_serializer, model_validator

from paretosched.search.genes import StrictModel
from paretosched.search.guards import MAX_POP_SIZE, MAX_SEEDS, MAX_WORKERS

# the keys that belong to the other screening strategy
_OTHER_KEYS = {"forest": ("prefix",), "prefix": ("explore", "min_log", "trees")}


class ResamplingSpec(StrictModel):
    """Dynamic resampling (docs/search.md): genomes near the front get extra seeds before they are admitted."""

    max_seeds: int = Field(6, ge=1, le=MAX_SEEDS, description="seeds a genome may reach in all (<= seeds: no resampling)")
    step: int = Field(2, ge=1, le=MAX_SEEDS, description="extra seeds a near-front genome gets per round")
    tolerance: float = Field(0.05, ge=0, le=1, description="'near the front': within this fraction of each "
                             "objective's range (0 = the non-dominated genomes only)")


class ScreeningSpec(StrictModel):
    """The `screening` key of a study (null = off)."""

    by: Literal["forest", "prefix"] = Field("forest", description="forest: a surrogate of the log; prefix: "
                                            "simulate every candidate on the first `prefix` share of the jobs")
    factor: int = Field(3, ge=2, le=20, description="offspring proposed per offspring simulated")
    prefix: float = Field(0.25, gt=0, lt=1, description="by prefix: share of the window's jobs the candidates run "
                          "(each such run counts as this share of an evaluation in the budget)")
    explore: float = Field(1.0, ge=0, le=10, description="by forest: prediction minus this many forest spreads")
    min_log: int = Field(20, ge=2, le=100_000, description="by forest: successful genomes in the log before "
                         "screening starts")
    trees: int = Field(64, ge=1, le=1000, description="by forest: random-forest trees")

    @model_validator(mode="after")
    def _keys_of_its_strategy(self) -> ScreeningSpec:
        given = [k for k in _OTHER_KEYS[self.by] if k in self.model_fields_set]
        if given:
            raise ValueError(f"{', '.join(given)}: not a setting of by: {self.by}")
        return self

    @model_serializer(mode="wrap")
    def _own_keys(self, handler: Any) -> dict[str, Any]:
        # the run's study copy holds its strategy's keys only, so that it validates again on resume
        return {k: v for k, v in handler(self).items() if k not in _OTHER_KEYS[self.by]}

    @property
    def budget_share(self) -> float:
        """What one screening run costs in evaluations of the budget (forest: no simulation)."""
        return self.prefix if self.by == "prefix" else 0.0


class FocusSpec(StrictModel):
    """The `focus` key of a study (null = off): search the trade-offs that beat a baseline."""

    baseline: str = Field(description="the study baseline (a key of `baselines`): the genomes that beat it on every "
                          "objective come first in NSGA-II's selection (docs/search.md)")


class Budget(StrictModel):
    """Stop at the first limit reached. Evaluations count genomes told to the algorithm."""

    evaluations: int | None = Field(None, ge=1)
    generations: int | None = Field(None, ge=1)
    wall_time_s: float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _some_limit(self) -> Budget:
        if self.evaluations is None and self.generations is None and self.wall_time_s is None:
            raise ValueError("give at least one of evaluations, generations, wall_time_s")
        return self


# The default variation is gentle (docs/search.md, "The default search"): half the pairs are
# recombined and each gene mutates with probability 0.1, so offspring make small moves from good
# parents instead of recombining policies at random (pymoo's defaults, 0.9 and up to 0.5 per gene,
# scored lower on the paired benchmark, docs/performance.md, "Search quality").
class Crossover(StrictModel):
    prob: float = Field(0.5, ge=0, le=1, description="probability that a pair is recombined (SBX/UX)")
    eta: float = Field(15.0, gt=0, description="SBX distribution index (real and integer genes)")


class Mutation(StrictModel):
    prob: float = Field(0.9, ge=0, le=1, description="probability that an offspring is mutated")
    eta: float = Field(20.0, gt=0, description="polynomial-mutation distribution index")
    prob_var: float | None = Field(0.1, gt=0, le=1, description="per-gene probability; null = pymoo's default "
                                   "(1 / the genes of a type, at most 0.5)")


class AlgorithmSpec(StrictModel):
    """NSGA-II (NSGA-III automatically for 3+ objectives) settings."""

    pop_size: int = Field(20, ge=4, le=MAX_POP_SIZE)
    n_offsprings: int | None = Field(None, ge=1, le=MAX_POP_SIZE, description="offspring per generation; null = pop_size")
    crossover: Crossover = Field(default_factory=Crossover)
    mutation: Mutation = Field(default_factory=Mutation)
    start_from: list[Literal["base", "baselines"]] = Field(
        default_factory=list, description="configs whose genomes open generation 0 (when the genes can hold their "
        "values): the study's base, its baselines")

    schedule: Literal["generational", "steady"] = Field(
        "generational", description="generational: evaluate a generation, then survival; steady: tell results in "
        "index order and breed one offspring per result, so workers never wait for a generation (docs/search.md)")
    lag: int | None = Field(None, ge=1, le=MAX_POP_SIZE, description="schedule steady: offspring j is bred once "
                            "results 0 .. j-lag-1 are told; null = 2 x parallel.workers")

    @field_validator("start_from")
    @classmethod
    def _once_each(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("name base and baselines once each")
        return v

    @model_validator(mode="after")
    def _steady_keys(self) -> AlgorithmSpec:
        if self.schedule == "generational" and self.lag is not None:
            raise ValueError("lag: only with schedule: steady")
        if self.schedule == "steady" and self.n_offsprings is not None:
            raise ValueError("n_offsprings: schedule: steady breeds one offspring per result told; leave it out")
        return self


class ParallelSpec(StrictModel):
    workers: int = Field(1, ge=1, le=MAX_WORKERS)
    backend: Literal["local", "dask"] = "local"
    address: str | None = Field(None, description="Dask scheduler address (backend dask)")
    speculate: bool = Field(True, description="schedule steady: idle workers run seeds resampling is likely to ask "
                            "for next (results unchanged; docs/search.md)")
