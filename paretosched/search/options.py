"""The search levers' keys of a study (docs/search.md): dynamic resampling and offspring screening.

Kept apart from study.py so that the modules that act on them (resample.py, screening.py,
fidelity.py) can import their settings without importing the whole study.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_serializer, model_validator

from paretosched.search.genes import StrictModel
from paretosched.search.guards import MAX_SEEDS

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
