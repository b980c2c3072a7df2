"""The one front module: front, front order, dominance, hypervolume and the reference point,
on minimisation-form objectives (maximised objectives negated), with pymoo's tools.

Search (front.csv, summary.json), analysis (front, picks, report), export and the API all
rank points here, so they agree on which points form the front, in which order, and against
which reference point its hypervolume is measured:

- front order: the first objective best first, ties by the next objectives, then by position
  (callers pass points in eval id order), so `index:0` of export is front.csv's row 0;
- reference point: the study's when it sets one; else, fixed after generation 0, the worst
  value of generation 0 and the baselines plus 10% of their range per objective.
"""

from __future__ import annotations

import numpy as np
from pymoo.indicators.hv import HV
from pymoo.util.dominator import Dominator
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

REF_MARGIN = 0.10  # reference point = worst value + 10% of the range (see docs/rundir.md)


def front_indices(F: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated rows of F (all minimised), in ascending index order."""
    if len(F) == 0:
        return np.array([], dtype=int)
    idx = NonDominatedSorting().do(np.asarray(F, dtype=float), only_non_dominated_front=True)
    return np.sort(np.asarray(idx, dtype=int))


def front_order(F: np.ndarray) -> np.ndarray:
    """Positions of the rows of F (minimised) in front order (see the module doc)."""
    F = np.asarray(F, dtype=float).reshape(len(F), -1)
    # lexsort's last key is the primary one: first objective, then the next ones, then position
    return np.lexsort([np.arange(len(F)), *F.T[::-1]])


def front(F: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated rows of F, in front order."""
    idx = front_indices(F)
    return idx[front_order(np.asarray(F, dtype=float)[idx])] if len(idx) else idx


def ranks(F: np.ndarray) -> np.ndarray:
    """Non-domination rank of each row (0 = first front)."""
    out = np.zeros(len(F), dtype=int)
    if len(F) == 0:
        return out
    for r, layer in enumerate(NonDominatedSorting().do(np.asarray(F, dtype=float))):
        out[np.asarray(layer, dtype=int)] = r
    return out


def dominates(a: np.ndarray, b: np.ndarray) -> bool:
    """True when the minimised vector `a` Pareto-dominates `b`."""
    return bool(Dominator.get_relation(np.asarray(a, dtype=float), np.asarray(b, dtype=float)) == 1)


def hypervolume(F: np.ndarray, ref: np.ndarray) -> float:
    """Hypervolume of F w.r.t. `ref` (points not strictly better than ref add nothing)."""
    F = np.asarray(F, dtype=float)
    if len(F) == 0:
        return 0.0
    F = F[np.all(F < ref, axis=1)]
    if len(F) == 0:
        return 0.0
    return float(HV(ref_point=np.asarray(ref, dtype=float))(F))


def reference_from(F: np.ndarray) -> np.ndarray:
    """A fixed reference point from observed points: worst + 10% of the range per objective
    (of the worst value's magnitude, at least 1, where all points agree)."""
    F = np.asarray(F, dtype=float)
    worst, best = F.max(axis=0), F.min(axis=0)
    span = worst - best
    span = np.where(span > 0, span, np.maximum(np.abs(worst), 1.0))
    return worst + REF_MARGIN * span


def scaled(F: np.ndarray) -> np.ndarray:
    """Min-max scale each column to [0, 1]; a constant column scales to 0 (it decides nothing)."""
    F = np.asarray(F, dtype=float)
    lo, hi = F.min(axis=0), F.max(axis=0)
    return (F - lo) / np.where(hi > lo, hi - lo, 1.0)


def argmin_stable(v: np.ndarray) -> int:
    """Index of the smallest value, the first on ties (to a relative 1e-12): picks are deterministic."""
    return int(np.flatnonzero(v <= v.min() + 1e-12 * max(1.0, abs(v.min())))[0])


def balanced(F: np.ndarray) -> int:
    """Index of the point with the smallest sum of min-max scaled objectives (the first on ties):
    one point to show for a front; the rule of analysis's `balanced` pick."""
    return argmin_stable(scaled(F).sum(axis=1))
