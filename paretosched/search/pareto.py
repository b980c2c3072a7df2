"""Front, hypervolume and reference point, on minimisation-form objectives (pymoo's tools)."""

from __future__ import annotations

import numpy as np
from pymoo.indicators.hv import HV
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

REF_MARGIN = 0.10  # reference point = worst value + 10% of the range (see docs/rundir.md)


def front_indices(F: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated rows of F (all minimised), in ascending index order."""
    if len(F) == 0:
        return np.array([], dtype=int)
    idx = NonDominatedSorting().do(np.asarray(F, dtype=float), only_non_dominated_front=True)
    return np.sort(np.asarray(idx, dtype=int))


def ranks(F: np.ndarray) -> np.ndarray:
    """Non-domination rank of each row (0 = first front)."""
    out = np.zeros(len(F), dtype=int)
    if len(F) == 0:
        return out
    for r, front in enumerate(NonDominatedSorting().do(np.asarray(F, dtype=float))):
        out[np.asarray(front, dtype=int)] = r
    return out


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
    """A fixed reference point from observed points: worst + 10% of the range per objective."""
    F = np.asarray(F, dtype=float)
    worst, best = F.max(axis=0), F.min(axis=0)
    span = worst - best
    span = np.where(span > 0, span, np.maximum(np.abs(worst), 1.0))
    return worst + REF_MARGIN * span
