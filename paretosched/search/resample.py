"""Dynamic resampling: genomes near the front get more seeds before they are admitted.

A noisy objective (hdeeprm draws, RL training) lets a genome that was lucky on its few seeds
enter the front and stay there. After each generation has been evaluated, and before it is
told to NSGA-II, every successful search genome of the run (the archive the front is drawn
from, not only the population) whose current means lie within `tolerance` of the front gets
`step` more seeds, up to `max_seeds` in all; then nearness is decided again on the new means,
until no near genome can get more seeds. Survival, the front and front.csv use the mean over
all of a genome's seeds. Resampling is never cut short by the budget, so when a generation
ends every genome near the front has all its seeds (and the front, drawn from the current rows,
holds no genome reported on its first few seeds only).

Invariants: the extra seeds are the same list, in the same order, for every genome (common
random numbers; `study.extra_seeds`), so a genome's seeds are always a prefix of
`seeds + extra`; which genomes are resampled depends only on logged values, so the result is
the same whatever the worker count, and a generation redone on resume replays the same rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pymoo.core.population import Population

from paretosched.search.evaluate import Engine
from paretosched.search.constraints import front_pool, violation
from paretosched.search.ledger import Ledger, Spec
from paretosched.search.problem import FAILED_PENALTY, constraints
from paretosched.search import pareto
from paretosched.search.options import ResamplingSpec


def near_front(F: np.ndarray, tolerance: float) -> np.ndarray:
    """Mask of the rows of F (minimised) that no other row dominates by more than `tolerance`
    times the front's extent in every objective. tolerance 0 = the non-dominated rows.

    The scale is the front's own range (not the archive's: one very bad genome would widen
    "near" to half the archive); an objective on which the front is flat is scaled by its value.
    Hand-written: pymoo's `epsilon` in NonDominatedSorting shifts every point alike and its
    Dominator's relaxes both sides, neither of which is this additive epsilon-dominance."""
    F = np.asarray(F, dtype=float)
    if len(F) == 0:
        return np.zeros(0, dtype=bool)
    on = pareto.front_indices(F)
    G = _scaled(F, F[on])
    # only the front's rows can be the q that dominates: a row q dominates by the tolerance, so does
    # the front's row that dominates q (the same floats, compared the same way: the same mask)
    better = G[on][:, None, :] + tolerance  # [q, p, k]: q's value, handicapped by the tolerance
    dominated = (better <= G[None, :, :]).all(axis=2) & (better < G[None, :, :]).any(axis=2)
    return ~dominated.any(axis=0)


def nearness(F: np.ndarray) -> np.ndarray:
    """Per row of F (minimised, not empty), how far it is from being near the front: the largest
    margin by which a row of the front beats it in every objective, in the units of `near_front`
    (a row is near at tolerances above it; the front's rows are 0). Only the front is compared:
    a row that dominates another beats everything that one beats by more."""
    F = np.asarray(F, dtype=float)
    front = F[pareto.front_indices(F)]
    G, Gf = _scaled(F, front), _scaled(front, front)
    return (G[None, :, :] - Gf[:, None, :]).min(axis=2).max(axis=0)  # [q, p]: by how much q beats p


def _scaled(F: np.ndarray, front: np.ndarray) -> np.ndarray:
    lo, hi = front.min(axis=0), front.max(axis=0)
    return (F - lo) / np.where(hi > lo, hi - lo, np.maximum(np.abs(lo), 1e-12))


AHEAD = 2  # genomes beyond a round whose seeds may be speculated, per genome of the round (counted as 8 at least)


class Resampler:
    """Gives near-front genomes extra seeds; counts the simulations it asked for."""

    def __init__(self, ledger: Ledger, signs: np.ndarray, seeds: list[int], extra: list[int],
                 spec: ResamplingSpec | None) -> None:
        self.ledger, self.signs = ledger, signs
        self.order = [*seeds, *extra]
        self.spec = spec
        self.active = spec is not None and bool(extra)
        self._last: tuple[list[int], np.ndarray] | None = None  # the archive and its means, as round_specs saw them

    def run(self, engine: Engine, generation: int) -> int:
        """Resample until stable; returns how many seed results were added (simulated or cached)."""
        added = 0
        while specs := self.round_specs():
            added += self.added(specs)
            self.ledger.submit(specs, engine, generation)
        return added

    def round_specs(self) -> list[Spec]:
        """One round: the near-front genomes' rows with `step` more seeds ([] when stable or inactive)."""
        if not self.active:
            return []
        assert self.spec is not None
        ids = self._archive()
        if not ids:
            return []
        F = np.array([self.ledger.objective_vector(i, self.signs) for i in ids])
        self._last = (ids, F)  # for `ahead`, asked right after on the same log
        todo = [i for i, near in zip(ids, near_front(F, self.spec.tolerance))
                if near and len(self.ledger.rows[i].seeds) < len(self.order)]
        specs = []
        for i in todo:
            row = self.ledger.rows[i]
            n = min(len(row.seeds) + self.spec.step, len(self.order))
            specs.append(Spec("search", row.config, self.order[:n], genome=row.genome, x=row.x, supersedes=i))
        return specs

    def ahead(self, specs: list[Spec]) -> list[tuple[dict[str, Any], int]]:
        """The (config, seed) tasks the next rounds are likely to ask for, most likely first, for the
        pool to run on idle workers (TaskPool.speculate): the next `step` seeds of each genome of
        this round (`specs`: they were near the front), then of the genomes nearest to being near
        (`nearness` on the log as it is now), AHEAD x max(8, the round's genomes) of them at most.
        Why those: a round's means move the front and its extent, which brings other genomes near."""
        if not self.active or not (ids := self._archive()):
            return []
        assert self.spec is not None
        step, rows = self.spec.step, self.ledger.rows
        out = [(s.config, seed) for s in specs for seed in self.order[len(s.seeds):len(s.seeds) + step]]
        F = self._last[1] if self._last is not None and self._last[0] == ids else \
            np.array([self.ledger.objective_vector(i, self.signs) for i in ids])
        taken = {s.supersedes for s in specs}
        others = [ids[k] for k in np.argsort(nearness(F), kind="stable")
                  if ids[k] not in taken and len(rows[ids[k]].seeds) < len(self.order)][:AHEAD * max(8, len(specs))]
        return out + [(rows[i].config, seed) for i in others
                      for seed in self.order[len(rows[i].seeds):len(rows[i].seeds) + step]]

    def added(self, specs: list[Spec]) -> int:
        """Seed results a round adds (the seeds its rows have beyond the rows they supersede)."""
        return sum(len(s.seeds) - len(self.ledger.rows[s.supersedes].seeds) for s in specs  # type: ignore[index]
                   if s.supersedes is not None)

    def _archive(self) -> list[int]:
        """Current rows of every successful search genome, in eval id order; with constraints only
        those the front is drawn from (constraints.front_pool), so that every genome near that front
        gets its seeds, whatever infeasible genome dominates it."""
        rows = self.ledger.rows
        ids = [i for i in sorted(rows) if rows[i].kind == "search" and i not in self.ledger.successor
               and self.ledger.ok(i)]
        if self.ledger.limits:
            ids = [ids[k] for k in front_pool([violation(rows[i].constraints) for i in ids])]
        return ids


def refresh_objectives(pop: Population, ids: list[int], ledger: Ledger, signs: np.ndarray,
                       g: np.ndarray | None = None) -> None:
    """Give the algorithm's population (eval ids `ids`, in its order) the means of the genomes'
    current rows, so that survival compares parents and offspring on the same footing; `g`
    their constraint values against a focus baseline (focus.py), None = every success feasible."""
    failed = np.array([not ledger.ok(eid) for eid in ids], dtype=bool)
    for ind, eid, bad, gv in zip(pop, ids, failed, constraints(failed, g)):
        # an extra seed failed: the genome is infeasible from now on, as in tell_objectives
        ind.F = np.full(len(signs), FAILED_PENALTY) if bad else ledger.objective_vector(eid, signs)
        ind.G = np.array([gv])
        ind.CV = None  # recomputed from G on next use
