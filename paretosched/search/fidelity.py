"""Multi-fidelity screening (issue 17, lever 1): offspring judged on a prefix of the window.

With `screening: {by: prefix, factor: k, prefix: p}`, NSGA-II's mating proposes k times the
offspring a generation simulates; each candidate is simulated on the first p share of the
window's jobs (the same seeds), logged as a `screen` row, and NSGA-II's rank-and-crowding
survival on those runs keeps as many as are simulated in full. A run's cost grows with its
jobs (plus a fixed part per run), so a prefix run costs a little more than p of a full one, and
on a window where the prefix ranks genomes as the whole does (docs/performance.md measures
it) the search sees k times the candidates for about (1 + k p) times the simulation.

Invariants: the screen rows go through the ledger, so they are cached, logged once and
replayed on resume; the choice depends only on their values and the study seed, so it is the
same whatever the worker count. Screen rows never enter survival, the front or front.csv.
Each counts as p of an evaluation in the budget. Generation 0 is never screened.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from pymoo.core.population import Population

from paretosched.errors import UserError
from paretosched.search.evaluate import Engine
from paretosched.search.ledger import Ledger, Spec
from paretosched.search.problem import FAILED_PENALTY
from paretosched.search.space import SearchSpace
from paretosched.search.study import ScreeningSpec


def prefix_config(config: dict[str, Any], share: float) -> dict[str, Any]:
    """`config` with its workload cut to the first `share` of its jobs (at least one)."""
    out = copy.deepcopy(config)
    w = out.get("workload") or {}
    if w.get("jobs") is not None:
        w["jobs"] = w["jobs"][:max(1, round(share * len(w["jobs"])))]
    elif w.get("n_jobs") is not None:
        w["n_jobs"] = max(1, round(share * int(w["n_jobs"])))
    else:  # the study check refuses this before a run starts; a gene could still remove n_jobs
        raise UserError("screening.by: prefix needs workload.n_jobs (or inline jobs) in every config")
    return out


class PrefixScreener:
    """Keeps the candidates that do best on a prefix of the window (see the module doc)."""

    def __init__(self, spec: ScreeningSpec, space: SearchSpace, seeds: list[int], signs: np.ndarray,
                 n_keep: int, seed: int) -> None:
        self.spec, self.space, self.seeds, self.signs = spec, space, seeds, signs
        self.n_keep, self.seed = n_keep, seed

    def screen(self, pop: Population, ledger: Ledger, search_ids: list[int], engine: Engine,
               generation: int) -> tuple[Population, int]:
        """The kept candidates, and how many new screen rows this logged."""
        if len(pop) <= self.n_keep:
            return pop, 0
        from pymoo.core.problem import Problem
        from pymoo.operators.survival.rank_and_crowding import RankAndCrowding

        specs = []
        for x in pop.get("X"):
            genome = self.space.decode(x)
            specs.append(Spec("screen", prefix_config(self.space.config(genome), self.spec.prefix), self.seeds,
                              genome=genome, x=self.space.raw(x)))
        before = ledger.next_id
        ids = ledger.submit(specs, engine, generation)
        F = np.array([ledger.objective_vector(i, self.signs) if ledger.ok(i) else
                      np.full(len(self.signs), FAILED_PENALTY) for i in ids])
        trial = Population.new(X=np.arange(len(pop)).reshape(-1, 1), F=F)
        kept = RankAndCrowding().do(Problem(n_var=1, n_obj=F.shape[1]), trial, n_survive=self.n_keep,
                                    random_state=np.random.default_rng([self.seed, generation]))
        # best first (fronts in order, then crowding), so a budget that takes fewer keeps the best
        return pop[[int(i) for i in kept.get("X")[:, 0]]], sum(1 for i in set(ids) if i >= before)
