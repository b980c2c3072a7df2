"""The Pareto front, hypervolume and the picks a user can export.

Everything works on the *minimisation form* (maximised objectives negated) internally; tables
and figures keep the natural sign the run directory stores.

Picks (the `pick` argument of `export` and the rows of picks.csv):
- `min:METRIC`   the front point with the best value of objective METRIC;
- `balanced`     the paper's rule (Kell et al., section VI): min-max scale every objective
                 over the front, sum, take the smallest sum (equal weights);
- `knee`         pymoo's high trade-off point on the normalised front; when pymoo finds none
                 (fronts of < 3 points, evenly curved fronts) it falls back to `balanced`;
- `weights:a,b`  smallest weighted sum of the min-max scaled objectives (weights in objective
                 order, any positive scale; they are normalised to sum to 1);
- `index:N`      the N-th front point (0-based) in front order (best first objective first,
                 `paretosched.search.pareto.front_order`), the row order of front.csv;
- `eval:ID`      any successful search evaluation by its eval id (off the front too);
- `minimal:P`    the re-checked front point with the fewest changed parameters that keeps P% of the
                 best re-checked energy saving at no worse slowdown (analysis/minimal.py).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

with warnings.catch_warnings():  # pymoo 0.6.2 imports scipy.spatial.ckdtree (deprecated namespace)
    warnings.simplefilter("ignore", DeprecationWarning)
    from pymoo.mcdm.high_tradeoff import HighTradeoffPoints

from paretosched.analysis.minimal import pick_minimal
from paretosched.analysis.rundata import VIOLATION, RunData, require_ok
from paretosched.errors import UserError
from paretosched.search import pareto
from paretosched.search.constraints import front_pool
from paretosched.search.pareto import argmin_stable as _argmin_stable
from paretosched.search.pareto import scaled

PICK_SYNTAX = "balanced | knee | min:METRIC | weights:a,b,... | index:N | eval:ID | baseline:NAME | minimal:P"


@dataclass(frozen=True)
class Pick:
    """One chosen front point: the pick expression, its eval id and why (a note)."""

    name: str
    eval_id: int
    note: str = ""


def min_form(values: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Objective values (natural sign) -> minimisation form."""
    return np.asarray(values, dtype=float) * signs


def layers(run: RunData, points: pd.DataFrame) -> np.ndarray:
    """Non-dominated layer of each row of `points` (0 = its Pareto front), pymoo's sorting."""
    return pareto.ranks(min_form(points[run.objectives].to_numpy(), run.signs))


def front_of(run: RunData) -> pd.DataFrame:
    """Non-dominated successful search evaluations in front order: the search's own rule
    (`pareto.front`), so these are front.csv's rows in front.csv's order."""
    ok = require_ok(run).sort_index()
    if VIOLATION in ok:  # constraints: the feasible points, or the least infeasible (the search's front_pool)
        ok = ok.iloc[front_pool(ok[VIOLATION].tolist())]
    return ok.iloc[pareto.front(min_form(ok[run.objectives].to_numpy(), run.signs))]


def deployable(run: RunData, front: pd.DataFrame) -> pd.DataFrame:
    """The front points a pick may choose: those that meet the study's constraints (on the fresh
    seeds when re-checked); a front with none is a one-line UserError (exit 2)."""
    if not run.summary.constraints and VIOLATION not in run.frame:
        return front
    keep = front[[run.infeasible(int(e)) is None for e in front["eval_id"]]]
    if keep.empty:
        raise UserError(f"{run.run_dir}: no front point meets the study's constraints "
                        f"({'; '.join(run.summary.constraints) or 'see study.yaml'}): nothing to pick; "
                        f"{run.infeasible(int(front['eval_id'].iloc[0])) if len(front) else 'the front is empty'}")
    return keep


NEAR_MIN_POINTS = 40  # layers are added until the near-front set holds this many distinct genomes


def near_front(run: RunData, n_layers: int | None = None) -> tuple[pd.DataFrame, int]:
    """Successful search evaluations in the first non-dominated layers, one per distinct genome.

    `n_layers` None: layers are added until the set holds NEAR_MIN_POINTS genomes (or the log
    runs out). Returns the rows (eval id order) and the number of layers used. Duplicated
    genomes (cache hits, re-evaluated elites) count once: a copy in a held-out fold would leak.
    """
    if n_layers is not None and n_layers < 1:
        raise UserError(f"layers must be >= 1 (got {n_layers})")
    ok = require_ok(run)
    distinct = ok[~ok[list(run.genes)].astype(str).duplicated()] if run.genes else ok
    rank = layers(run, distinct)
    k = n_layers if n_layers is not None else int(rank.max()) + 1
    if n_layers is None:
        counts = np.cumsum(np.bincount(rank))
        reached = np.flatnonzero(counts >= NEAR_MIN_POINTS)
        k = int(reached[0]) + 1 if len(reached) else len(counts)
    return distinct[rank < k], k


def pick_min(run: RunData, front: pd.DataFrame, metric: str) -> Pick:
    if metric not in run.objectives:
        raise UserError(f"unknown objective {metric!r} in pick 'min:{metric}' (objectives: {', '.join(run.objectives)})")
    j = run.objectives.index(metric)
    F = min_form(front[run.objectives].to_numpy(), run.signs)
    i = _argmin_stable(F[:, j])
    best = "highest" if run.senses[j] == "max" else "lowest"
    return Pick(f"min:{metric}", int(front["eval_id"].iloc[i]), f"{best} {metric} on the front")


def pick_weights(run: RunData, front: pd.DataFrame, weights: list[float], name: str | None = None) -> Pick:
    if len(weights) != len(run.objectives):
        raise UserError(f"weights: give one weight per objective ({', '.join(run.objectives)}), got {len(weights)}")
    w = np.asarray(weights, dtype=float)
    if np.any(w < 0) or not np.any(w > 0) or not np.all(np.isfinite(w)):
        raise UserError("weights: weights must be >= 0 with at least one > 0")
    w = w / w.sum()
    S = scaled(min_form(front[run.objectives].to_numpy(), run.signs))
    i = _argmin_stable(S @ w)
    label = name or "weights:" + ",".join(f"{x:g}" for x in weights)
    return Pick(label, int(front["eval_id"].iloc[i]), "smallest weighted sum of min-max scaled objectives")


def pick_balanced(run: RunData, front: pd.DataFrame) -> Pick:
    p = pick_weights(run, front, [1.0] * len(run.objectives), name="balanced")
    return Pick("balanced", p.eval_id, "smallest sum of min-max scaled objectives (Kell et al.)")


def pick_knee(run: RunData, front: pd.DataFrame) -> Pick:
    S = scaled(min_form(front[run.objectives].to_numpy(), run.signs))
    found = None
    # duplicates have zero gain to each other and make pymoo's trade-off undefined
    _, first = np.unique(S, axis=0, return_index=True)
    uniq = np.sort(first)
    if len(uniq) >= 3:
        # pymoo sets a global "ignore all warnings" filter inside; keep it contained
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            found = HighTradeoffPoints().do(S[uniq])
    if found is None or len(found) == 0:
        b = pick_balanced(run, front)
        why = "front of < 3 distinct points" if len(uniq) < 3 else "pymoo found no high trade-off point"
        return Pick("knee", b.eval_id, f"{why}: fell back to balanced")
    cand = uniq[np.asarray(found, dtype=int)]
    # several knees: the most balanced of them
    i = cand[_argmin_stable(S[cand].sum(axis=1))]
    return Pick("knee", int(front["eval_id"].iloc[i]), "high trade-off point (pymoo) on the normalised front")


def resolve_pick(run: RunData, front: pd.DataFrame, expr: str) -> Pick:
    """Parse a pick expression (see the module docstring) and choose the point."""
    kind, _, arg = expr.strip().partition(":")
    kind = kind.strip().lower()
    if kind == "baseline" and arg:
        return pick_baseline(run, expr)
    if kind not in ("index", "eval"):  # those name one point: refused below when it breaks a limit
        front = deployable(run, front)
    if kind == "balanced" and not arg:
        return pick_balanced(run, front)
    if kind == "knee" and not arg:
        return pick_knee(run, front)
    if kind == "min" and arg:
        return pick_min(run, front, arg.strip())
    if kind == "weights" and arg:
        try:
            weights = [float(x) for x in arg.split(",")]
        except ValueError:
            raise UserError(f"pick {expr!r}: weights must be numbers, e.g. weights:0.7,0.3") from None
        return pick_weights(run, front, weights)
    if kind in ("index", "eval") and arg:
        try:
            n = int(arg)
        except ValueError:
            raise UserError(f"pick {expr!r}: expected an integer after '{kind}:'") from None
        if kind == "index":
            if not 0 <= n < len(front):
                raise UserError(f"pick {expr!r}: the front has {len(front)} points (index:0 .. index:{len(front) - 1}, "
                                f"sorted by {run.objectives[0]})")
            n = int(front["eval_id"].iloc[n])
            why = f"front point {arg.strip()} in {run.objectives[0]} order"
        else:
            if n not in run.search_ok().index:
                raise UserError(f"pick {expr!r}: no successful search evaluation with eval id {n}")
            why = "chosen by eval id"
        unmet = run.infeasible(n)
        if unmet is not None:  # named explicitly: refused, not replaced by another point
            raise UserError(f"pick {expr!r}: {unmet}; no export writes a point that breaks the study's limits")
        return Pick(expr.strip(), n, why)
    raise UserError(f"unknown pick {expr!r} (expected {PICK_SYNTAX})")


def pick_baseline(run: RunData, expr: str) -> Pick:
    """`baseline:NAME`: a baseline of the study (it needs no front)."""
    name = expr.strip().partition(":")[2].strip()
    f = run.frame
    names = [str(n) for n in f.loc[f["kind"] == "baseline", "name"]]
    if name not in names:
        raise UserError(f"pick {expr.strip()!r}: no baseline named {name!r} (baselines: {', '.join(names) or 'none'})")
    eid = int(f.index[(f["kind"] == "baseline") & (f["name"] == name)][0])
    return Pick(expr.strip(), eid, "a baseline of the study")


def choose(run: RunData, expr: str) -> Pick:
    """Any pick expression; a baseline pick does not need a front (a run stopped before its first
    generation still exports its baselines)."""
    kind = expr.strip().partition(":")[0].strip().lower()
    if kind == "baseline":
        return pick_baseline(run, expr)
    if kind == "minimal":
        # it chooses among the re-checked front points (summary.json), not front.csv's rows
        eval_id, why = pick_minimal(run, expr)
        return Pick(expr.strip(), eval_id, why)
    return resolve_pick(run, front_of(run), expr)


def standard_picks(run: RunData, front: pd.DataFrame) -> list[Pick]:
    """The picks every report lists: min of each objective, balanced, knee (among the points that
    meet the study's constraints; none when no point does)."""
    try:
        front = deployable(run, front)
    except UserError:
        return []
    return [*(pick_min(run, front, o) for o in run.objectives), pick_balanced(run, front), pick_knee(run, front)]


def reference_point(run: RunData) -> np.ndarray:
    """The run's fixed reference point (minimisation form); for a summary that does not record
    it, the search's rule (`pareto.reference_from` over generation 0 and the baselines)."""
    rp = run.summary.reference_point or {}
    if all(isinstance(rp.get(o), (int, float)) for o in run.objectives):
        return min_form(np.array([rp[o] for o in run.objectives], dtype=float), run.signs)
    ok = require_ok(run)
    f = run.frame
    first = ok[ok["generation"] == ok["generation"].min()]
    base = f[(f["kind"] == "baseline") & (f["status"] == "ok")]
    return pareto.reference_from(min_form(pd.concat([first, base])[run.objectives].to_numpy(), run.signs))


def hypervolume_by_generation(run: RunData) -> pd.DataFrame:
    """Columns generation, hv, front_size, source: summary.json when it has hv, else recomputed."""
    gens = run.summary.generations
    if gens and all(g.hv is not None for g in gens):
        return pd.DataFrame({"generation": [g.generation for g in gens], "hv": [float(g.hv) for g in gens],
                             "front_size": [g.front_size for g in gens], "source": "summary.json"})
    ok = require_ok(run)
    ref = reference_point(run)
    F = min_form(ok[run.objectives].to_numpy(), run.signs)
    g_of = ok["generation"].to_numpy()
    out = []
    for g in sorted(set(g_of.tolist())):
        front = F[g_of <= g][pareto.front_indices(F[g_of <= g])]
        out.append({"generation": int(g), "hv": pareto.hypervolume(front, ref),
                    "front_size": int(len(front)), "source": "recomputed"})
    return pd.DataFrame(out)
