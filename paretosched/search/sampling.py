"""Generation 0: a design that covers the categorical genes' combinations, not a random draw.

A scheduler's genome is mostly categorical (job policy, resource policy, backfilling, switch-off
timeout...), and its trade-offs live in the combinations: on the `classic` window one policy pair
of the 72 dominates the others on slowdown, and a random generation 0 of 20 meets a given pair
with probability 1 - (71/72)^20 = 24%. So generation 0 is a covering design:

- when the product of the categorical genes' values fits in the sample, all of it (in a seeded
  random order), the rest of the sample continuing the design below;
- otherwise a greedy pairwise covering design (AETG, Cohen et al. 1997): sample after sample,
  the candidate (of `CANDIDATES`, each built gene by gene, the value that completes the most
  value pairs not yet in the sample first, the least used value on ties) that adds the most
  uncovered pairs. Every value of every categorical gene then appears as evenly as the sample
  allows, and every pair of values of two genes as soon as the sample can hold them;
- the real and integer genes: a Latin hypercube over their ranges (pymoo's `sampling_lhs_unit`, in
  pymoo's encoding: log genes in log space), so each gene's range is spread, not clustered.

Invariants: the design depends only on the variables and the algorithm's random generator (pymoo
hands it in), so a run and its resume, with 1 or N workers, draw the same generation 0. `first`
genomes (`algorithm.start_from`) replace the first draws, the rest of the sample unchanged.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from pymoo.core.problem import Problem
from pymoo.core.sampling import Sampling
from pymoo.core.variable import Binary, Choice, Integer, Real
from pymoo.operators.sampling.lhs import sampling_lhs_unit

CANDIDATES = 20  # candidate rows per sample in the greedy design (AETG used 50; 20 covers as well here)


def _levels(var: Any) -> list[Any]:
    return [False, True] if isinstance(var, Binary) else list(var.options)


def covering_rows(levels: list[int], n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` rows of level indices (one column per gene of `levels[g]` values): the whole product
    (shuffled) while it fits, then rows of the greedy pairwise design (see the module doc)."""
    G = len(levels)
    if G == 0:
        return np.zeros((n, 0), dtype=int)
    rows: list[list[int]] = []
    if math.prod(levels) <= n:
        full = np.array(list(itertools.product(*[range(k) for k in levels])), dtype=int)
        rows = [list(r) for r in full[rng.permutation(len(full))]]
    used = [np.zeros(k) for k in levels]  # how often each value is in the sample
    pair = {(i, j): np.zeros((levels[i], levels[j]), dtype=bool) for i in range(G) for j in range(i + 1, G)}
    for r in rows:
        _count(r, used, pair)
    while len(rows) < n:
        if all(p.all() for p in pair.values()):  # every pair covered: start covering them again
            pair = {k: np.zeros_like(p) for k, p in pair.items()}
        best, best_new = None, -1
        for _ in range(CANDIDATES):
            row = _candidate(levels, used, pair, rng)
            new = sum(not pair[(i, j)][row[i], row[j]] for i in range(G) for j in range(i + 1, G))
            if new > best_new:
                best, best_new = row, new
        assert best is not None
        _count(best, used, pair)
        rows.append(best)
    return np.array(rows[:n], dtype=int).reshape(n, G)


def _candidate(levels: list[int], used: list[np.ndarray], pair: dict[tuple[int, int], np.ndarray],
               rng: np.random.Generator) -> list[int]:
    """One row, gene by gene in a random order: the value completing the most uncovered pairs with
    the genes already set, then the least used, then a random one."""
    row = [-1] * len(levels)
    for g in rng.permutation(len(levels)):
        gain = np.zeros(levels[g])
        for h, v in enumerate(row):
            if v >= 0:
                gain += ~(pair[(g, h)][:, v] if g < h else pair[(h, g)][v, :])
        key = np.lexsort((rng.random(levels[g]), used[g], -gain))  # last key first: gain, then use, then chance
        row[g] = int(key[0])
    return row


def _count(row: list[int], used: list[np.ndarray], pair: dict[tuple[int, int], np.ndarray]) -> None:
    for g, v in enumerate(row):
        used[g][v] += 1
    for (i, j), p in pair.items():
        p[row[i], row[j]] = True


class CoveringSampling(Sampling):
    """pymoo sampling for a mixed-variable problem: the covering design of the module doc, with
    the first draws replaced by the genomes `first` (raw pymoo values)."""

    def __init__(self, first: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.first = first or []

    def _do(self, problem: Problem, n_samples: int, random_state: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
        rng = random_state if random_state is not None else np.random.default_rng()
        names = list(problem.vars)
        cats = [k for k in names if isinstance(problem.vars[k], (Choice, Binary))]
        nums = [k for k in names if isinstance(problem.vars[k], (Real, Integer))]
        idx = covering_rows([len(_levels(problem.vars[k])) for k in cats], n_samples, rng)
        X: list[dict[str, Any]] = [{} for _ in range(n_samples)]
        for c, k in enumerate(cats):
            lv = _levels(problem.vars[k])
            for s in range(n_samples):
                X[s][k] = lv[idx[s, c]]
        if nums:
            U = sampling_lhs_unit(n_samples, len(nums), random_state=rng)  # one stratum per sample and gene
            for c, k in enumerate(nums):
                var = problem.vars[k]
                lo, hi = var.bounds
                for s in range(n_samples):
                    X[s][k] = (min(int(hi), int(lo) + int(U[s, c] * (int(hi) - int(lo) + 1)))
                               if isinstance(var, Integer) else float(lo + U[s, c] * (hi - lo)))
        k = min(len(self.first), n_samples)
        return [dict(x) for x in self.first[:k]] + X[k:]
