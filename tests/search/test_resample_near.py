"""`near_front` compares each genome with the front's rows only, and `nearness` (speculation's ranking)
agrees with it: both against the all-pairs definition."""

from __future__ import annotations

import numpy as np
import pytest

from paretosched.search import pareto
from paretosched.search.resample import near_front, nearness


def _all_pairs(F: np.ndarray, tolerance: float) -> np.ndarray:
    """near_front as first written: every row against every row."""
    front = F[pareto.front_indices(F)]
    lo, hi = front.min(axis=0), front.max(axis=0)
    G = (F - lo) / np.where(hi > lo, hi - lo, np.maximum(np.abs(lo), 1e-12))
    better = G[:, None, :] + tolerance
    dominated = (better <= G[None, :, :]).all(axis=2) & (better < G[None, :, :]).any(axis=2)
    return ~dominated.any(axis=0)


@pytest.mark.parametrize("k", [2, 3])
def test_near_front_is_the_all_pairs_mask(k: int) -> None:
    rng = np.random.default_rng(k)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        F = rng.random((n, k))
        if rng.random() < 0.5:  # ties and duplicates, flat objectives
            F = F.round(1)
        F[:, 0] *= 10.0 ** rng.integers(-3, 4)
        for tol in (0.0, 0.02, 0.05, 0.3):
            assert near_front(F, tol).tolist() == _all_pairs(F, tol).tolist()


def test_nearness_is_the_tolerance_from_which_a_row_is_near() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        F = rng.random((int(rng.integers(2, 60)), 2))  # continuous: no ties on the boundary
        d = nearness(F)
        assert (d[pareto.front_indices(F)] == 0).all()
        for tol in (0.01, 0.05, 0.2):
            assert (near_front(F, tol) == (d < tol)).all()
