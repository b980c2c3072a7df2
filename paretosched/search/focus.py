"""Focus on the trade-offs that beat a baseline (`focus: {baseline: NAME}`, docs/search.md).

An operator acts on a configuration only if it beats what the cluster runs today on every
objective; a front point that saves energy by making jobs wait longer than today's scheduler
does is not one they deploy (issue 17 scores a search on exactly those points). With `focus`
set, a genome that beats the named baseline on every objective comes first in NSGA-II's
binary tournament and survival (problem.py's `feasible_first` and `FeasibleFirst`: classes
"beats it", "does not", "failed", NSGA-II's rank and crowding within each), so the offspring
are spent in the region that beats the baseline once some genome has reached it; until then the
search is plain NSGA-II. To pymoo the class is a constraint value: G = -1 beats, +1 does not.

A genome is always compared with the baseline on the same seeds: the baseline is simulated on
every seed a genome may reach (the search seeds, then resampling's extra seeds, in order), and
a genome evaluated on the first n of them is compared with the baseline's mean over the same
n (common random numbers; the mean by the twin's rule, as the genome's own).
"""

from __future__ import annotations

from typing import Callable

from typing import Any

import numpy as np
from pymoo.core.population import Population

from paretosched.search.ledger import Ledger, Spec
from paretosched.search.options import FocusSpec
from paretosched.search.problem import tell_objectives
from paretosched.search.resample import refresh_objectives
from paretosched.search.checkpoint import Checkpoint
from paretosched.search.constraints import violation
from paretosched.search.study import Study, baseline_config
from paretosched.sim.engine.metrics import mean_metrics


def baseline_specs(study: Study, seeds: list[int], order: list[int]) -> list[Spec]:
    """The study's baselines to run before the search: each on the search seeds, the focus
    baseline on `order` (every seed a genome may reach)."""
    every = {study.focus.baseline} if study.focus is not None else set()
    every |= {c.max_vs for c in study.constraints if c.max_vs is not None}  # compared on a genome's seeds too
    return [Spec("baseline", baseline_config(study.base, over), order if b in every else seeds, name=b)  # type: ignore[arg-type]
            for b, over in study.baselines.items()]


class Focus:
    """What NSGA-II is told of logged rows: their objectives, failures as infeasible and, with a
    focus baseline, whether each beats it (constraint values G: feasible when G <= 0)."""

    def __init__(self, spec: FocusSpec | None, ledger: Ledger, signs: np.ndarray, state: Checkpoint,
                 say: Callable[[str], None] = print) -> None:
        self.name = spec.baseline if spec is not None else None
        self.limits = ledger.limits  # a study's constraints (never beside a focus: study.py refuses both)
        self.ledger, self.signs, self.state = ledger, signs, state  # state.baseline_ids: once the baselines ran
        self.say, self._said = say, False
        self._means: dict[int, np.ndarray] = {}

    def tell(self, algo: Any, pop: Population, ids: list[int]) -> None:
        """Tell `algo` the rows `ids` (the offspring `pop`, in their order) and advance it."""
        led = self.ledger
        failed = np.array([not led.ok(i) for i in ids])
        F = np.array([led.objective_vector(i, self.signs) if led.ok(i) else np.zeros(len(self.signs)) for i in ids])
        tell_objectives(algo, pop, F, failed, self.g(ids))

    def refresh(self, pop: Population, ids: list[int]) -> None:
        """The population (rows `ids`) given its rows' current means after resampling."""
        refresh_objectives(pop, ids, self.ledger, self.signs, self.g(ids))

    def g(self, ids: list[int]) -> np.ndarray | None:
        """G for the rows `ids` (any value where a row failed); None when off or the baseline failed.
        With constraints: -1 where a row meets them, else its total violation (pymoo's constraint
        domination then ranks the infeasible by it)."""
        if self.limits:
            return np.array([-1.0 if not self.ledger.ok(i) or self.ledger.rows[i].feasible
                             else violation(self.ledger.rows[i].constraints) for i in ids])
        bid = self.state.baseline_ids.get(self.name) if self.name is not None else None
        if bid is None:
            return None
        if not self.ledger.ok(bid):
            if not self._said:  # the option the user asked for is off: said once a session, not silently
                self._said = True
                self.say(f"focus: baseline {self.name!r} failed (eval {bid}, see its row in the log): "
                         "the search goes on without focus, as plain NSGA-II")
            return None
        out = np.zeros(len(ids))
        for k, i in enumerate(ids):
            if self.ledger.ok(i):
                b = self._baseline(bid, len(self.ledger.rows[i].seeds))
                out[k] = -1.0 if (self.ledger.objective_vector(i, self.signs) < b).all() else 1.0
        return out

    def _baseline(self, bid: int, n: int) -> np.ndarray:
        """The baseline's minimisation-form objectives over its first n seeds."""
        if n not in self._means:
            row = self.ledger.rows[bid]
            per = [r.metrics or {} for r in row.per_seed[:n]]
            m = mean_metrics([{o: p[o] for o in self.ledger.objectives} for p in per])
            self._means[n] = self.signs * np.array([m[o] for o in self.ledger.objectives], dtype=float)
        return self._means[n]
