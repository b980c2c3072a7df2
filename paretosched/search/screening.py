"""Pre-screening of offspring (issue 17): the `screening` key, and its surrogate strategy.

With `screening: {factor: k}`, NSGA-II's mating proposes k times the offspring a generation
simulates, and a cheap judge picks which are simulated in full. `by: forest` (lever 2,
pysamoo's SSA-NSGA-II shape; this module): a random forest fitted on the evaluation log (gene
values -> minimised objectives) predicts each candidate, and NSGA-II's own rank-and-crowding
survival, applied to the predictions made optimistic by `explore` x the forest's spread, keeps
as many as are simulated. `by: prefix` (lever 1, multi-fidelity; `fidelity.py`): every candidate
is simulated on the first `prefix` share of the window's jobs and the same survival keeps the
best on those runs. Only the kept offspring are evaluated in full and told, so survival and
the front see full simulations only; the forest's guesses and the prefix runs never enter them.

Invariants: the choice depends only on the logged rows and the study seed (the forest and the
survival's tie-breaks are seeded), so it is the same whatever the worker count, and a generation
redone on resume chooses the same offspring. Generation 0 (pymoo's initial sampling) is never
screened, nor any generation while the log holds fewer than `min_log` successful genomes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pymoo.core.population import Population

from paretosched.search.evaluate import Engine
from paretosched.search.genes import BoolGene, ChoiceGene, FloatGene, GeneSpec, IntGene
from paretosched.search.ledger import Ledger
from paretosched.search.options import ScreeningSpec


def room(spec: ScreeningSpec, off: int, left: float | None) -> int:
    """Offspring a generation keeps when `left` evaluations remain (None: no evaluations budget):
    each costs one evaluation plus its `factor` screening runs' share, and the budget must hold
    both (0: no room for screening; the generation then takes its last evaluations unscreened)."""
    if left is None:
        return off
    return min(off, int(left / (1 + spec.factor * spec.budget_share) + 1e-9))


def widened(spec: Any, screening: ScreeningSpec | None) -> Any:
    """The algorithm spec whose mating proposes `factor` x the simulated offspring."""
    if screening is None:
        return spec
    return spec.model_copy(update={"n_offsprings": screening.factor * (spec.n_offsprings or spec.pop_size)})


def features(genes: dict[str, GeneSpec], xs: list[dict[str, Any]]) -> np.ndarray:
    """Gene values as forest inputs: numbers as pymoo holds them (log genes in log space),
    bools as 0/1, choices one-hot (their indices are not an order)."""
    cols: list[np.ndarray] = []
    for path, g in genes.items():
        v = np.array([float(x[path]) for x in xs])
        if isinstance(g, ChoiceGene):
            cols.extend((np.rint(v) == k).astype(float) for k in range(len(g.values)))
        elif isinstance(g, (FloatGene, IntGene, BoolGene)):
            cols.append(v)
    return np.column_stack(cols) if cols else np.zeros((len(xs), 0))


class Screener:
    """Keeps the offspring a surrogate of the log predicts best (see the module doc)."""

    def __init__(self, spec: ScreeningSpec, genes: dict[str, GeneSpec], n_keep: int, seed: int,
                 signs: np.ndarray) -> None:
        self.spec, self.genes, self.n_keep, self.seed, self.signs = spec, genes, n_keep, seed, signs

    def stage(self, generation: int, n: int) -> str | None:
        return None

    def screen(self, pop: Population, n_keep: int, ledger: Ledger, search_ids: list[int], engine: Engine,
               generation: int) -> tuple[Population, int, str | None]:
        """The `n_keep` candidates kept, the screening runs this cost and a note (none: the forest
        runs nothing)."""
        ok = [i for i in search_ids if ledger.ok(i)]
        F = np.array([ledger.objective_vector(i, self.signs) for i in ok])
        return self.select(pop, [ledger.rows[i].x for i in ok], F, n_keep), 0, None

    def select(self, pop: Population, xs: list[dict[str, Any]], F: np.ndarray, n_keep: int | None = None) -> Population:
        """`n_keep` (default: the constructor's) of the candidates `pop`, given the log's
        successful genomes `xs` and their minimised objectives `F`."""
        n_keep = self.n_keep if n_keep is None else n_keep
        if len(pop) <= n_keep:
            return pop
        if len(xs) < self.spec.min_log:
            return pop[:n_keep]  # the candidates are i.i.d. offspring: the first n are a fair draw
        from pymoo.core.problem import Problem
        from pymoo.operators.survival.rank_and_crowding import RankAndCrowding
        from sklearn.ensemble import RandomForestRegressor

        scale = np.where(F.std(axis=0) > 0, F.std(axis=0), 1.0)
        forest = RandomForestRegressor(n_estimators=self.spec.trees, min_samples_leaf=2, random_state=self.seed)
        forest.fit(features(self.genes, xs), F / scale)
        cand = features(self.genes, [{p: x[p] for p in self.genes} for x in pop.get("X")])
        per_tree = np.stack([t.predict(cand) for t in forest.estimators_])
        guess = per_tree.mean(axis=0) - self.spec.explore * per_tree.std(axis=0)
        trial = Population.new(X=np.arange(len(pop)).reshape(-1, 1), F=guess)
        kept = RankAndCrowding().do(Problem(n_var=1, n_obj=F.shape[1]), trial, n_survive=n_keep,
                                    random_state=np.random.default_rng(self.seed))
        return pop[sorted(int(i) for i in kept.get("X")[:, 0])]
