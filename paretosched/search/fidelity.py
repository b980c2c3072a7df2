"""Multi-fidelity screening (issue 17, lever 1): offspring judged on a prefix of the window.

With `screening: {by: prefix, factor: k, prefix: p}`, NSGA-II's mating proposes k times the
offspring a generation simulates; each candidate is simulated on the first p share of the
window's jobs (the same seeds; an RL scheduler keeps the training windows of the whole window),
logged as a `screen` row, and NSGA-II's rank-and-crowding survival on those runs keeps as many
as are simulated in full, best first. A run's cost grows with its jobs (plus a fixed part per
run), so a prefix run costs a little more than p of a full one, and on a window where the prefix
ranks genomes as the whole does (docs/performance.md measures it) the search sees k times the
candidates for about (1 + k p) times the simulation.

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

from paretosched.config import config_from_dict
from paretosched.errors import UserError
from paretosched.search.evaluate import Engine
from paretosched.search.ledger import Ledger, Spec
from paretosched.search.options import ScreeningSpec
from paretosched.search.problem import FAILED_PENALTY
from paretosched.search.screening import Screener
from paretosched.search.space import SearchSpace


def prefix_config(config: dict[str, Any], share: float) -> dict[str, Any]:
    """`config` with its workload cut to the first `share` of its jobs (at least one, rounded
    half up); an RL scheduler keeps the training windows the whole window gives it."""
    out = copy.deepcopy(config)
    w = out.get("workload") or {}
    sched = out.get("scheduler") or {}
    if sched.get("kind") == "rl" and w.get("path") is not None and not sched.get("train_windows"):
        from paretosched.sim.rl.training import training_spans  # only RL studies pay its import

        spans = training_spans(config_from_dict(config))  # derived from n_jobs, which is about to change
        sched["train_windows"] = [{"first_job": f, "n_jobs": n} for f, n in spans]
    if w.get("jobs") is not None:
        w["jobs"] = w["jobs"][:max(1, int(share * len(w["jobs"]) + 0.5))]
    elif w.get("n_jobs") is not None:
        w["n_jobs"] = max(1, int(share * int(w["n_jobs"]) + 0.5))
    else:  # the study check refuses this before a run starts; a gene could still remove n_jobs
        raise UserError("screening.by: prefix needs workload.n_jobs (or inline jobs) in every config")
    return out


class PrefixScreener:
    """Keeps the candidates that do best on a prefix of the window (see the module doc)."""

    def __init__(self, spec: ScreeningSpec, space: SearchSpace, seeds: list[int], signs: np.ndarray,
                 seed: int) -> None:
        self.spec, self.space, self.seeds, self.signs, self.seed = spec, space, seeds, signs, seed

    def stage(self, generation: int, n: int) -> str:
        return f"generation {generation}: {n} candidates on the first {self.spec.prefix:.0%} of the jobs"

    def screen(self, pop: Population, n_keep: int, ledger: Ledger, search_ids: list[int], engine: Engine,
               generation: int) -> tuple[Population, int, str | None]:
        """The `n_keep` candidates kept, best first; how many new screen rows this logged; a line
        to say when some failed."""
        from pymoo.core.problem import Problem
        from pymoo.operators.survival.rank_and_crowding import RankAndCrowding

        specs = []
        for x in pop.get("X"):
            genome = self.space.decode(x)
            specs.append(Spec("screen", prefix_config(self.space.config(genome), self.spec.prefix), self.seeds,
                              genome=genome, x=self.space.raw(x)))
        before = ledger.next_id
        ids = ledger.submit(specs, engine, generation)
        bad = [i for i in ids if not ledger.ok(i)]
        first = ledger.rows[bad[0]].error if bad else None
        if len(bad) == len(ids):
            raise UserError(f"screening: every candidate of generation {generation} failed on the first "
                            f"{self.spec.prefix:.0%} of the jobs (the first: {first}); raise "
                            "screening.prefix, or set screening: null")
        note = (f"generation {generation}: {len(bad)} screening run(s) failed and were not kept (the first: "
                f"{first})") if bad else None
        F = np.array([ledger.objective_vector(i, self.signs) if ledger.ok(i) else
                      np.full(len(self.signs), FAILED_PENALTY) for i in ids])
        trial = Population.new(X=np.arange(len(pop)).reshape(-1, 1), F=F)
        kept = RankAndCrowding().do(Problem(n_var=1, n_obj=F.shape[1]), trial, n_survive=n_keep,
                                    random_state=np.random.default_rng([self.seed, generation]))
        # best first: by front, then by crowding (pymoo sorts only the split front by crowding)
        order = np.lexsort((-kept.get("crowding"), kept.get("rank")))
        return pop[[int(kept[i].X[0]) for i in order]], sum(1 for i in set(ids) if i >= before), note


def make_screener(spec: ScreeningSpec, space: SearchSpace, seeds: list[int], signs: np.ndarray,
                  n_keep: int, seed: int) -> Screener | PrefixScreener:
    """The strategy `screening.by` names."""
    if spec.by == "forest":
        return Screener(spec, space.genes, n_keep, seed, signs)
    return PrefixScreener(spec, space, seeds, signs, seed)
