"""Limits an operator sets (`constraints:` in a study, docs/search.md, "Constraints").

    constraints: [{metric: p95_wait_s, max: 7200}, {metric: mean_bsld, max_vs: current, factor: 1.05}]

Each constraint bounds one metric the twin reports: `max` or `min` a fixed value, `max_vs: NAME`
at most `factor` (default 1) times the baseline NAME's value on the same seeds (common random
numbers: a genome on its first n seeds against the baseline's mean over the same n; a re-check
against the baseline's re-check). Every evaluation's values are logged with its row
(`constraints`, one number per constraint in the study's order): (value - limit) / |limit| for
`max`, (limit - value) / |limit| for `min` (the plain difference where the limit is 0), so a
value <= 0 meets the limit and 0.25 exceeds it by 25% of the limit. null: not judged (the
baseline of a `max_vs` failed or lacks those seeds). A success without the metric violates it
by 1.

NSGA-II (NSGA-III) sees their total violation as pymoo's constraint value: pymoo's constraint
domination then prefers feasible genomes to infeasible ones, and among infeasible ones the
smaller violation (problem.py). The front is drawn from the feasible genomes (`front_pool`).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from pydantic import field_validator, model_validator

from paretosched.errors import UserError
from paretosched.search.genes import StrictModel
from paretosched.sim.engine.metrics import mean_metrics
from paretosched.yamlio import did_you_mean


class Constraint(StrictModel):
    """One limit: exactly one of `max`, `min`, `max_vs` (with an optional `factor`)."""

    metric: str
    max: float | None = None
    min: float | None = None
    max_vs: str | None = None
    factor: float | None = None

    @field_validator("max", "min", "factor")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("expected a finite number")
        return v

    @model_validator(mode="after")
    def _one_bound(self) -> Constraint:
        given = [k for k in ("max", "min", "max_vs") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of max, min, max_vs (got {', '.join(given) or 'none'})")
        if self.factor is not None and self.max_vs is None:
            raise ValueError("factor goes with max_vs (a multiple of a baseline's value)")
        if self.factor is not None and self.factor <= 0:
            raise ValueError(f"factor must be > 0 (got {self.factor:g})")
        return self

    @property
    def label(self) -> str:
        """'p95_wait_s <= 7200', 'mean_bsld <= 1.05 x current': how tables name it."""
        if self.max_vs is not None:
            return f"{self.metric} <= {self.factor or 1.0:g} x {self.max_vs}"
        return f"{self.metric} {'<=' if self.max is not None else '>='} {self.max if self.max is not None else self.min:g}"


def check_constraints(constraints: list[Constraint], baselines: list[str], focus: bool, metrics: Iterable[str],
                      src: str) -> None:
    """What the schema cannot see: known metrics and baselines, and no `focus` beside them."""
    metrics = list(metrics)
    for i, c in enumerate(constraints):
        if c.metric not in metrics:
            raise UserError(f"{src}: constraints.{i}.metric: unknown metric {c.metric!r}{did_you_mean(c.metric, metrics)} "
                            f"(expected one of {', '.join(metrics)})")
        if c.max_vs is not None and c.max_vs not in baselines:
            known = did_you_mean(c.max_vs, baselines) or (f" ({', '.join(map(repr, baselines))})" if baselines else
                                                          " (the study names none: add it under baselines)")
            raise UserError(f"{src}: constraints.{i}.max_vs: {c.max_vs!r} is not one of the study's baselines{known}")
    if constraints and focus:  # both would be pymoo's one constraint value
        raise UserError(f"{src}: focus and constraints: choose one (focus is itself a limit, beat the baseline on "
                        "every objective: as constraints, {metric: OBJECTIVE, max_vs: BASELINE} per objective)")


def violation(values: list[float | None] | None) -> float:
    """Total violation: the sum of the positive values (0 when feasible); pymoo's CV."""
    return float(sum(v for v in values or [] if v is not None and v > 0))


def front_pool(violations: list[float]) -> list[int]:
    """Positions the front is drawn from, by pymoo's constraint domination: the feasible ones,
    or, when none is, those of the smallest violation."""
    if not violations:
        return []
    least = min(violations)
    return [k for k, v in enumerate(violations) if v <= 0] if least <= 0 else \
        [k for k, v in enumerate(violations) if v == least]


def relative(value: float, limit: float, upper: bool) -> float:
    """(value - limit) / |limit| for an upper limit, (limit - value) / |limit| for a lower one."""
    d = value - limit if upper else limit - value
    return d / abs(limit) if limit != 0 else d


class Limits:
    """The study's constraints, judged on log rows (objects with kind, seeds, per_seed, metrics,
    name, recheck_of, ok)."""

    def __init__(self, constraints: list[Constraint]) -> None:
        self.items = list(constraints)

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def baselines(self) -> set[str]:
        """Baselines a `max_vs` compares with: they run on every seed a genome may reach."""
        return {c.max_vs for c in self.items if c.max_vs is not None}

    def values(self, row: Any, rows: Mapping[int, Any]) -> list[float | None] | None:
        """The row's constraint values (module docstring); None for a failed row or no constraints."""
        if not self.items or not row.ok:
            return None
        out: list[float | None] = []
        for c in self.items:
            v = (row.metrics or {}).get(c.metric)
            if v is None or not math.isfinite(v):
                out.append(1.0)
                continue
            if c.max_vs is None:
                out.append(relative(v, c.max if c.max is not None else c.min, c.max is not None))  # type: ignore[arg-type]
                continue
            ref = baseline_value(c.max_vs, c.metric, row, rows)
            out.append(None if ref is None else relative(v, (c.factor or 1.0) * ref, True))
        return out


def baseline_value(name: str, metric: str, row: Any, rows: Mapping[int, Any]) -> float | None:
    """The baseline `name`'s `metric` on the row's seeds: its re-check for a re-check row, its
    mean over the same seeds otherwise; None when it failed or lacks a seed. (Baselines are the
    log's first rows, so the search for one stops early.)"""
    base = next((r for r in rows.values() if r.kind == "baseline" and r.name == name), None)
    if base is None:
        return None
    if row.kind == "recheck":
        if row.recheck_of == base.eval_id:
            return (row.metrics or {}).get(metric)
        base = next((r for r in rows.values() if r.kind == "recheck" and r.recheck_of == base.eval_id), None)
        if base is None or not base.ok or list(base.seeds) != list(row.seeds):
            return None
        return (base.metrics or {}).get(metric)
    by_seed = {s.seed: s for s in base.per_seed}
    per = [by_seed.get(s) for s in row.seeds]
    if any(p is None or not p.ok or (p.metrics or {}).get(metric) is None for p in per):
        return None
    return mean_metrics([{metric: p.metrics[metric]} for p in per])[metric]  # type: ignore[union-attr]
