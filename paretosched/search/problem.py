"""The pymoo side: the mixed-variable problem and a real NSGA-II (or NSGA-III) for it.

pymoo's `MixedVariableGA` is a single-objective GA, and `MixedVariableMating` defaults to
*random* parent selection. To get NSGA-II proper on a mixed genome we combine:
NSGA2's rank-and-crowding survival + NSGA2's binary tournament (dominance, then crowding,
constraint violation first) passed as the mating's selection + pymoo's per-type
crossover/mutation and duplicate elimination, and a generation 0 that covers the categorical
genes' combinations (`sampling.py`) instead of pymoo's random draw.

Evaluation never happens inside pymoo: the optimiser asks for a population, evaluates it
itself (parallel, cached, logged) and tells the objectives back with `tell_objectives`.
A failed evaluation is infeasible (constraint violation 1), so it loses every tournament
and survival comparison against a successful one whatever its objective values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pymoo.algorithms.moo.nsga2 import NSGA2, RankAndCrowding, binary_tournament
from pymoo.algorithms.moo.nsga3 import NSGA3
from pymoo.core.algorithm import Algorithm
from pymoo.core.evaluator import Evaluator
from pymoo.core.mixed import MixedVariableDuplicateElimination, MixedVariableMating
from pymoo.core.population import Population
from pymoo.core.problem import Problem
from pymoo.core.termination import NoTermination
from pymoo.util.dominator import Dominator
from pymoo.core.variable import Binary, Choice, Integer, Real
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.crossover.ux import UX
from pymoo.operators.mutation.bitflip import BFM
from pymoo.operators.mutation.pm import PM
from pymoo.operators.mutation.rm import ChoiceRandomMutation
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.operators.selection.tournament import TournamentSelection
from pymoo.problems.static import StaticProblem
from pymoo.util.ref_dirs import get_reference_directions

from paretosched.search.sampling import CoveringSampling
from paretosched.search.space import SearchSpace
from paretosched.search.options import AlgorithmSpec

# Objective values pymoo sees for a failed evaluation. Finite, because crowding distance and
# normalisation choke on inf; irrelevant for selection since the point is infeasible.
FAILED_PENALTY = 1e30


class GenomeProblem(Problem):
    """A mixed-variable problem whose genes are the study's; evaluated outside pymoo."""

    def __init__(self, space: SearchSpace, n_obj: int) -> None:
        super().__init__(vars=space.pymoo_vars(), n_obj=n_obj, n_ieq_constr=1)

    def _evaluate(self, X: Any, out: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("GenomeProblem is evaluated by paretosched.search.optimise, not by pymoo")


def _operators(spec: AlgorithmSpec) -> tuple[dict[type, Any], dict[type, Any]]:
    """Per-variable-type crossover and mutation, as pymoo's defaults but configurable."""
    cx, mu = spec.crossover, spec.mutation
    crossover = {
        Real: SBX(prob=cx.prob, eta=cx.eta),
        Integer: SBX(prob=cx.prob, eta=cx.eta, vtype=float, repair=RoundingRepair()),
        Binary: UX(prob=cx.prob),
        Choice: UX(prob=cx.prob),
    }
    mutation = {
        Real: PM(prob=mu.prob, eta=mu.eta, prob_var=mu.prob_var),
        Integer: PM(prob=mu.prob, eta=mu.eta, prob_var=mu.prob_var, vtype=float, repair=RoundingRepair()),
        Binary: BFM(prob=mu.prob, prob_var=mu.prob_var),
        Choice: ChoiceRandomMutation(prob=mu.prob, prob_var=mu.prob_var),
    }
    return crossover, mutation


def build_algorithm(space: SearchSpace, n_obj: int, spec: AlgorithmSpec, seed: int,
                    first: list[dict[str, Any]] | None = None, focus: bool = False) -> Algorithm:
    """NSGA-II for 2 objectives, NSGA-III for 3+, set up for ask/tell on `space`; generation 0
    starts with the genomes `first` (raw pymoo values), then the covering design (sampling.py). `focus`: NSGA-II's
    tournament and survival take the genomes that beat the focus baseline first (focus.py)."""
    crossover, mutation = _operators(spec)
    dedup = MixedVariableDuplicateElimination()
    common: dict[str, Any] = dict(
        pop_size=spec.pop_size,
        n_offsprings=spec.n_offsprings,
        sampling=CoveringSampling(first or []),  # generation 0 covers the categorical combinations (sampling.py)
        eliminate_duplicates=dedup,  # the same rule for the initial sample and for offspring
        seed=seed,
    )
    algo: Algorithm
    if n_obj <= 2:
        mating = MixedVariableMating(selection=TournamentSelection(func_comp=feasible_first if focus else binary_tournament),
                                     crossover=crossover, mutation=mutation, eliminate_duplicates=dedup)
        algo = NSGA2(mating=mating, **common, **({"survival": FeasibleFirst()} if focus else {}))
    else:
        mating = MixedVariableMating(selection=TournamentSelection(func_comp=cv_then_random),
                                     crossover=crossover, mutation=mutation, eliminate_duplicates=dedup)
        algo = NSGA3(ref_dirs=reference_directions(n_obj, spec.pop_size), mating=mating, **common)
    algo.setup(GenomeProblem(space, n_obj), termination=NoTermination())
    return algo


def cv_then_random(pop: Population, P: np.ndarray, random_state: np.random.Generator, **kwargs: Any) -> np.ndarray:
    """NSGA-III's tournament (pymoo's `comp_by_cv_then_random`): lower constraint violation
    wins, otherwise a random one. Re-stated because pymoo's version breaks ties between two
    infeasible parents with an unseeded RNG (irreproducible runs) and cannot be pickled."""
    S = np.empty(P.shape[0], dtype=int)
    for i, (a, b) in enumerate(P[:, :2]):
        cv_a, cv_b = float(pop[a].CV[0]), float(pop[b].CV[0])
        if cv_a != cv_b and (cv_a > 0 or cv_b > 0):
            S[i] = a if cv_a < cv_b else b
        else:
            S[i] = a if random_state.random() < 0.5 else b
    return S[:, None]


def _cls(ind: Any) -> int:
    """0 = beats the focus baseline (or no focus), 1 = a success that does not, 2 = failed."""
    cv = float(ind.CV[0])
    return 0 if cv <= 0 else (2 if cv >= FAILED_PENALTY else 1)


def feasible_first(pop: Population, P: np.ndarray, algorithm: Any, **kwargs: Any) -> np.ndarray:
    """NSGA-II's binary tournament by class (`_cls`), then dominance, then crowding. Hand-written:
    pymoo's picks at random between two infeasible parents, which would leave the genomes that
    do not beat the baseline (all of them, early in a run) without selection pressure."""
    S = np.empty(P.shape[0], dtype=int)
    for i, (a, b) in enumerate(P[:, :2]):
        ca, cb = _cls(pop[a]), _cls(pop[b])
        rel = Dominator.get_relation(pop[a].F, pop[b].F) if ca == cb else (1 if ca < cb else -1)
        if rel != 0:
            S[i] = a if rel == 1 else b
        else:
            cd_a, cd_b = pop[a].get("crowding"), pop[b].get("crowding")
            if cd_a != cd_b and cd_a is not None and cd_b is not None:
                S[i] = a if cd_a > cd_b else b
            else:
                S[i] = a if algorithm.random_state.random() < 0.5 else b
    return S[:, None]


class FeasibleFirst(RankAndCrowding):
    """NSGA-II's rank-and-crowding survival run on each class in turn (`_cls`): the genomes that
    beat the focus baseline, then the other successes, then failures. pymoo's own constraint
    handling orders the infeasible by violation alone, which here (one violation value for every
    genome that does not beat the baseline) would drop NSGA-II's ranking among them."""

    def __init__(self) -> None:
        super().__init__()
        self.filter_infeasible = False

    def _do(self, problem: Problem, pop: Population, *args: Any, n_survive: int | None = None,
            **kwargs: Any) -> Population:
        cls = np.array([_cls(ind) for ind in pop])
        left = len(pop) if n_survive is None else n_survive
        kept = []
        for c in (0, 1, 2):
            idx = np.flatnonzero(cls == c)
            if len(idx) and left > 0:
                kept.append(super()._do(problem, pop[idx], *args, n_survive=min(left, len(idx)), **kwargs))
                left -= len(kept[-1])
        out = kept[0] if kept else Population()
        for part in kept[1:]:
            out = Population.merge(out, part)
        return out


def constraints(failed: np.ndarray, g: np.ndarray | None = None) -> np.ndarray:
    """Each row's constraint value: -1 for a success (or its value in `g`, focus.py: feasible when
    <= 0), and for a failure a violation above any success's (1, or FAILED_PENALTY with `g`)."""
    return np.where(failed, 1.0, -1.0) if g is None else np.where(failed, FAILED_PENALTY, g).astype(float)


def reference_directions(n_obj: int, pop_size: int) -> np.ndarray:
    """Das-Dennis directions: as many partitions as fit in the population (NSGA-III)."""
    from math import comb

    p = 1
    while comb(p + 1 + n_obj - 1, n_obj - 1) <= pop_size:
        p += 1
    return get_reference_directions("das-dennis", n_obj, n_partitions=p)


def tell_objectives(algo: Algorithm, pop: Population, F: np.ndarray, failed: np.ndarray,
                    g: np.ndarray | None = None) -> None:
    """Give pymoo the minimisation-form objectives of `pop` and advance one generation.

    `F` (n x n_obj) may hold anything where `failed` is true; those rows become infeasible.
    `g`: the rows' constraint values (focus.py; feasible when <= 0), None = every success feasible.
    """
    F = np.where(failed[:, None], FAILED_PENALTY, F).astype(float)
    G = constraints(failed, g)[:, None]
    Evaluator().eval(StaticProblem(algo.problem, F=F, G=G), pop)
    algo.tell(infills=pop)
