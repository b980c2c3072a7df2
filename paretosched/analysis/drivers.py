"""What drives the front: DBSCAN clusters of the objectives and a Lasso per cluster (Kell et al. VI).

Clusters: DBSCAN (scikit-learn) on the min-max scaled objectives (minimisation form) of the
evaluations near the front (`front.near_front`), the front or the final population; label -1
is noise, as in the paper, and is not fitted. `eps` defaults to the
knee of the sorted k-distance curve (k = min_samples): the point farthest from the chord
joining the curve's ends, the usual heuristic of the DBSCAN paper. That knee measures local
density only, so it leaves the sparser edge of every well-separated cluster as noise; eps is
then raised along the curve, from the knee up to the curve's first jump (a value more than
twice the previous one: the sparse points beyond it are outliers), so that every point of a
dense region is a core point and only real outliers stay noise. Well-separated clusters stay
apart because the k-distance inside a cluster is smaller than the gap between clusters.

Drivers: per cluster and per objective, a Lasso on the genes, alpha by cross-validation
(LassoCV) and judged by its out-of-sample R^2 (nested cross-validation, `fit_lasso`). Every feature is put on the
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
from sklearn.linear_model import LassoCV
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.neighbors import NearestNeighbors

from paretosched.search.genes import GeneSpec

MIN_FIT_POINTS = 10  # fewer points than this: no fit (nested 5-fold CV needs >= 2 held-out points a fold)
# out-of-sample R^2 below this: the fit explains too little to chart. Users act on the chart
# ("raise freq to save energy"), so the genes must explain at least half the variance out of
# sample; at 0.2 a fit with 0.21 was charted (docs/analysis.md)
USEFUL_R2 = 0.5
DEFAULT_MIN_SAMPLES = 4


@dataclass
class Clustering:
    labels: np.ndarray  # one per point, -1 = noise
    eps: float
    min_samples: int
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
        return Clustering(np.zeros(n, dtype=int), float(eps or 0.0), ms,
                          [f"{n} point(s): too few to cluster, all in cluster 0"])
    if np.ptp(S, axis=0).max() == 0:
        return Clustering(np.zeros(n, dtype=int), float(eps or 0.0), ms,
                          ["all points have identical objectives: one cluster"])
    notes: list[str] = []
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
    return Clustering(labels.astype(int), float(eps), ms, notes)


JUMP = 2.0  # a k-distance more than twice the previous one starts the outliers' part of the curve


def _stable_eps(curve: np.ndarray, knee: float) -> float:
    """The largest k-distance from the knee up to the curve's first jump (exclusive)."""
    steps = np.r_[knee, np.unique(curve[curve > knee])]
    jumps = np.flatnonzero(steps[1:] > JUMP * steps[:-1])
    top = steps[jumps[0]] if len(jumps) else steps[-1]
    return float(top) * (1 + 1e-9)  # DBSCAN's test is <= eps: keep the top point's neighbour inside


def design_matrix(genomes: pd.DataFrame, genes: dict[str, GeneSpec]) -> pd.DataFrame:
    """Genes -> features on 1-100 (numeric by study bounds, log genes in log space; one-hot)."""
    cols: dict[str, np.ndarray] = {}
    for path, g in genes.items():
        cols.update(g.design_columns(path, list(genomes[path])))
    return pd.DataFrame(cols, index=genomes.index)


def _kfold(n_splits: int, seed: int) -> KFold:
    return KFold(n_splits=n_splits, shuffle=True, random_state=seed)


def _lasso_cv(n_train: int, seed: int) -> LassoCV:
    """LassoCV whose alpha is chosen by an inner, seeded k-fold on the training points only."""
    return LassoCV(cv=_kfold(max(2, min(5, n_train // 3)), seed), max_iter=20000)


def fit_lasso(X: pd.DataFrame, y: np.ndarray, seed: int = 0) -> dict[str, object]:
    """Lasso of y on X with alpha from cross-validation; coefficients in objective units.

    `r2_cv` is out of sample: nested cross-validation (an outer seeded k-fold; alpha chosen by
    LassoCV on each training part only), R^2 of the pooled held-out predictions (one R^2 over
    all points: per-fold R^2 on folds of 2-3 points is meaningless). `r2_train` is in sample.
    `useful` is False (and `note` says why and what to change) below MIN_FIT_POINTS points or
    with r2_cv < USEFUL_R2.
    """
    n = len(y)
    out: dict[str, object] = {"n": n, "coef": {}, "r2_cv": math.nan, "r2_train": math.nan, "alpha": math.nan,
                              "method": "", "note": "", "useful": False}
    if n < MIN_FIT_POINTS:
        out["note"] = f"too few points ({n}; need >= {MIN_FIT_POINTS} to fit and cross-validate)"
        return out
    varying = [c for c in X.columns if np.nanstd(X[c].to_numpy()) > 0]
    sd = float(np.std(y))
    if sd == 0 or not np.isfinite(sd):
        out["note"] = "objective is constant on these points: nothing to explain"
        return out
    if not varying:
        out["note"] = "every gene is constant on these points: nothing to fit"
        return out
    Xv = X[varying].to_numpy(dtype=float)
    # standardise y so one alpha grid means the same for kWh and for slowdowns; un-scale after
    ys = (y - y.mean()) / sd
    outer = min(5, n // 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        held_out = cross_val_predict(_lasso_cv(n - math.ceil(n / outer), seed), Xv, ys, cv=_kfold(outer, seed))
        model = _lasso_cv(n, seed).fit(Xv, ys)
    r2_cv = float(r2_score(ys, held_out))
    out.update(method="LassoCV", alpha=float(model.alpha_), r2_cv=r2_cv, r2_train=float(model.score(Xv, ys)),
               coef={c: float(w) * sd for c, w in zip(varying, model.coef_)}, useful=r2_cv >= USEFUL_R2)
    if r2_cv < USEFUL_R2:
        out["note"] = (f"out-of-sample R² {r2_cv:.2f} (below {USEFUL_R2}): the genes do not predict it well enough "
                       "on these points to chart")
    return out


def advice(fit: dict[str, object]) -> str:
    """What to change when a fit is not useful (empty when it is)."""
    if fit.get("useful"):
        return ""
    note = str(fit.get("note", ""))
    if note.startswith("too few"):
        return ("run more generations (budget.generations) or a larger population (algorithm.pop_size), "
                "or widen the fitted set (analyse --layers K with a larger K)")
    if "R²" in note:
        return ("more seeds per evaluation (seeds) if seed noise hides the effect, more evaluations, "
                "or a wider set (analyse --layers K); a gene whose effect is not monotonic shows no linear driver")
    return ""


LASSO_COLUMNS = ["cluster", "objective", "feature", "coef", "r2_cv", "r2_train", "alpha", "method", "n", "useful",
                 "note", "advice"]


def lasso_table(points: pd.DataFrame, labels: np.ndarray, genes: dict[str, GeneSpec],
                objectives: list[str], seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """Long table, one row per fit and feature (LASSO_COLUMNS); a fit without coefficients gets
    one row with an empty feature and its note. DBSCAN noise (-1) is not a cluster: not fitted."""
    X = design_matrix(points, genes)
    rows: list[dict[str, object]] = []
    notes: list[str] = []
    for c in sorted(set(labels.tolist())):
        mask = labels == c
        for obj in objectives:
            if c == -1:
                fit: dict[str, object] = {"n": int(mask.sum()), "coef": {}, "r2_cv": math.nan, "r2_train": math.nan,
                                          "alpha": math.nan, "method": "", "useful": False,
                                          "note": "DBSCAN noise: not a cluster, not fitted"}
            else:
                fit = fit_lasso(X[mask], points.loc[mask, obj].to_numpy(dtype=float), seed=seed)
            base = {k: fit[k] for k in ("r2_cv", "r2_train", "alpha", "method", "n", "useful", "note")}
            base.update(cluster=c, objective=obj, advice=advice(fit) if c != -1 else "")
            coef: dict[str, float] = fit["coef"]  # type: ignore[assignment]
            if fit["note"] and c != -1:
                notes.append(f"cluster {c}, {obj}: {fit['note']}")
            if not coef:
                rows.append({**base, "feature": "", "coef": math.nan})
            for feat, w in coef.items():
                rows.append({**base, "feature": feat, "coef": w})
    return pd.DataFrame(rows, columns=LASSO_COLUMNS), notes
