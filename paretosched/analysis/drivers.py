"""What drives the front: DBSCAN clusters of the objectives and a Lasso per cluster (Kell et al. VI).

Clusters: DBSCAN (scikit-learn) on the min-max scaled objectives (minimisation form) of the
front or of the final population; label -1 is noise, as in the paper. `eps` defaults to the
knee of the sorted k-distance curve (k = min_samples): the point farthest from the chord
joining the curve's ends, the usual heuristic of the DBSCAN paper. That knee measures local
density only, so it leaves the sparser edge of every well-separated cluster as noise; eps is
then raised along the curve, from the knee up to the curve's first jump (a value more than
twice the previous one: the sparse points beyond it are outliers), so that every point of a
dense region is a core point and only real outliers stay noise. Well-separated clusters stay
apart because the k-distance inside a cluster is smaller than the gap between clusters.

Drivers: per cluster and per objective, a Lasso on the genes. Every feature is put on the
paper's 1-100 scale using the *study's* gene bounds (log genes in log space first), so that
coefficients compare across genes and across clusters: a coefficient is the change of the
objective (its unit) per 1/99 of the gene's search range. Categorical genes become one-hot
columns (bool genes one column) on {1, 100}; columns constant within a cluster are dropped.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.cluster import DBSCAN
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, LassoCV
from sklearn.neighbors import NearestNeighbors

from paretosched.analysis.rundata import GeneInfo

MIN_FIT_POINTS = 3  # fewer points than this: no fit, a note
CV_POINTS = 10  # from this many points alpha is chosen by cross-validation
FIXED_ALPHA = 0.01  # on the standardised objective, for small clusters
DEFAULT_MIN_SAMPLES = 4


@dataclass
class Clustering:
    labels: np.ndarray  # one per point, -1 = noise
    eps: float
    min_samples: int
    kdist: np.ndarray  # sorted k-distance curve (empty when not computed)
    notes: list[str] = field(default_factory=list)


def default_min_samples(n: int) -> int:
    """sklearn's 5 is too many for small fronts: at most a fifth of the points, at least 2."""
    return int(max(2, min(DEFAULT_MIN_SAMPLES, n // 5)))


def kdistance_eps(X: np.ndarray, k: int) -> tuple[float, np.ndarray]:
    """eps at the knee of the sorted distance to each point's k-th neighbour (itself included)."""
    k = min(k, len(X))
    dist, _ = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(X)
    curve = np.sort(dist[:, -1])
    if curve[-1] <= 0:
        return 0.0, curve
    # normalise both axes so the knee does not depend on the number of points or the units
    x = np.linspace(0.0, 1.0, len(curve))
    y = (curve - curve[0]) / (curve[-1] - curve[0]) if curve[-1] > curve[0] else np.zeros_like(curve)
    gap = x - y  # distance below the chord y = x (up to a constant factor)
    return float(curve[int(np.argmax(gap))]), curve


def cluster(S: np.ndarray, eps: float | None = None, min_samples: int | None = None) -> Clustering:
    """DBSCAN on already scaled objectives `S` (n x m)."""
    n = len(S)
    ms = int(min_samples) if min_samples is not None else default_min_samples(n)
    if n < 3:
        return Clustering(np.zeros(n, dtype=int), float(eps or 0.0), ms, np.empty(0),
                          [f"{n} point(s): too few to cluster, all in cluster 0"])
    if np.ptp(S, axis=0).max() == 0:
        return Clustering(np.zeros(n, dtype=int), float(eps or 0.0), ms, np.empty(0),
                          ["all points have identical objectives: one cluster"])
    notes: list[str] = []
    curve = np.empty(0)
    if eps is None:
        knee, curve = kdistance_eps(S, ms)
        if knee <= 0:  # many duplicates: the knee sits on zero distances
            knee = float(curve[curve > 0].min())
        eps = _stable_eps(curve, knee)
        notes.append(f"eps = {eps:.4g} from the {ms}-distance curve (knee {knee:.4g}, raised to below its first jump)")
    labels = DBSCAN(eps=eps, min_samples=ms).fit_predict(S)
    n_noise = int((labels == -1).sum())
    if n_noise == n:
        notes.append(f"DBSCAN marked every point as noise (eps = {eps:.4g}, min_samples = {ms})")
    return Clustering(labels.astype(int), float(eps), ms, curve, notes)


JUMP = 2.0  # a k-distance more than twice the previous one starts the outliers' part of the curve


def _stable_eps(curve: np.ndarray, knee: float) -> float:
    """The largest k-distance from the knee up to the curve's first jump (exclusive)."""
    steps = np.r_[knee, np.unique(curve[curve > knee])]
    jumps = np.flatnonzero(steps[1:] > JUMP * steps[:-1])
    top = steps[jumps[0]] if len(jumps) else steps[-1]
    return float(top) * (1 + 1e-9)  # DBSCAN's test is <= eps: keep the top point's neighbour inside


def _scale_1_100(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return 1.0 + 99.0 * (v - lo) / (hi - lo) if hi > lo else np.full_like(v, 1.0)


def design_matrix(genomes: pd.DataFrame, genes: dict[str, GeneInfo]) -> pd.DataFrame:
    """Genes -> features on 1-100 (numeric by study bounds, log genes in log space; one-hot)."""
    cols: dict[str, np.ndarray] = {}
    for path, g in genes.items():
        raw = genomes[path]
        if g.numeric:
            v = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
            lo = float(g.low) if g.low is not None else float(np.nanmin(v))
            hi = float(g.high) if g.high is not None else float(np.nanmax(v))
            if g.log and lo > 0:
                v, lo, hi = np.log(v), math.log(lo), math.log(hi)
            cols[path] = _scale_1_100(v, lo, hi)
        elif g.type == "bool":
            on = g.values[1] if g.values else True
            cols[path] = np.where(np.array([x == on for x in raw]), 100.0, 1.0)
        else:
            values = g.values if g.values is not None else list(dict.fromkeys(raw))
            for val in values:
                cols[f"{path}={val}"] = np.where(np.array([_same(x, val) for x in raw]), 100.0, 1.0)
    return pd.DataFrame(cols, index=genomes.index)


def _same(a: object, b: object) -> bool:
    """Does logged gene value `a` equal choice value `b`?

    The log comes back through JSON and pandas: an int choice may read as a float (60 -> 60.0)
    and null as NaN. Numbers compare by value, null matches None/NaN, but booleans stay apart
    from numbers (1 == True in Python, and a choice of [1, true] must keep them apart).
    """
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return a is None or (isinstance(a, (float, np.floating)) and math.isnan(a))
    a_bool, b_bool = isinstance(a, (bool, np.bool_)), isinstance(b, (bool, np.bool_))
    if a_bool or b_bool:
        return a_bool and b_bool and bool(a) == bool(b)
    if isinstance(a, (int, float, np.integer, np.floating)) and isinstance(b, (int, float, np.integer, np.floating)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def fit_lasso(X: pd.DataFrame, y: np.ndarray, seed: int = 0) -> dict[str, object]:
    """Lasso of y on X: coefficients (objective units), R^2 in sample, alpha, method, note."""
    n = len(y)
    out: dict[str, object] = {"n": n, "coef": {}, "r2": math.nan, "alpha": math.nan, "method": "", "note": ""}
    if n < MIN_FIT_POINTS:
        out["note"] = f"{n} point(s): too few to fit (need >= {MIN_FIT_POINTS})"
        return out
    varying = [c for c in X.columns if np.nanstd(X[c].to_numpy()) > 0]
    sd = float(np.std(y))
    if sd == 0 or not np.isfinite(sd):
        out["note"] = "objective is constant in this cluster: nothing to explain"
        return out
    if not varying:
        out["note"] = "every gene is constant in this cluster: nothing to fit"
        return out
    Xv = X[varying].to_numpy(dtype=float)
    # standardise y so one alpha means the same for kWh and for slowdowns; un-scale after
    ys = (y - y.mean()) / sd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if n >= CV_POINTS:
            model = LassoCV(cv=min(5, n // 2), random_state=seed, max_iter=20000).fit(Xv, ys)
            out["method"] = "LassoCV"
            alpha = float(model.alpha_)
        else:
            model = Lasso(alpha=FIXED_ALPHA, max_iter=20000).fit(Xv, ys)
            out["method"] = "Lasso"
            alpha = FIXED_ALPHA
            out["note"] = f"{n} points (< {CV_POINTS}): fixed alpha = {FIXED_ALPHA} instead of cross-validation"
    out["alpha"] = alpha
    out["r2"] = float(model.score(Xv, ys))
    out["coef"] = {c: float(w) * sd for c, w in zip(varying, model.coef_)}
    return out


def lasso_table(points: pd.DataFrame, labels: np.ndarray, genes: dict[str, GeneInfo],
                objectives: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """Long table: cluster, objective, feature, coef, r2, alpha, method, n, note (one row per fit
    and feature; a fit without coefficients gets one row with an empty feature and its note)."""
    X = design_matrix(points, genes)
    rows: list[dict[str, object]] = []
    notes: list[str] = []
    for c in sorted(set(labels.tolist())):
        mask = labels == c
        for obj in objectives:
            fit = fit_lasso(X[mask], points.loc[mask, obj].to_numpy(dtype=float))
            base = {"cluster": c, "objective": obj, "r2": fit["r2"], "alpha": fit["alpha"],
                    "method": fit["method"], "n": fit["n"], "note": fit["note"]}
            coef: dict[str, float] = fit["coef"]  # type: ignore[assignment]
            if fit["note"]:
                notes.append(f"cluster {c}, {obj}: {fit['note']}")
            if not coef:
                rows.append({**base, "feature": "", "coef": math.nan})
            for feat, w in coef.items():
                rows.append({**base, "feature": feat, "coef": w})
    cols = ["cluster", "objective", "feature", "coef", "r2", "alpha", "method", "n", "note"]
    return pd.DataFrame(rows, columns=cols), notes
