"""DBSCAN clusters (auto eps) and per-cluster Lasso on constructed data with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from paretosched.analysis.drivers import (USEFUL_R2, advice, cluster, design_matrix, fit_lasso, kdistance_eps,
                                           lasso_table)
from paretosched.analysis.front import scaled
from paretosched.search.genes import BoolGene, ChoiceGene, FloatGene, IntGene

GENES = {
    "a": FloatGene(low=0.0, high=10.0),
    "b": FloatGene(low=1.0, high=1000.0, log=True),
    "c": IntGene(low=0, high=5),
    "p": ChoiceGene(values=["first", "shortest", "smallest"]),
    "f": BoolGene(values=["none", "easy"]),
}


@pytest.mark.parametrize("seed", range(10))
def test_dbscan_auto_eps_recovers_well_separated_clusters(seed: int) -> None:
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 10.0], [5.0, 5.0], [10.0, 0.0]])
    truth = np.repeat([0, 1, 2], 15)
    pts = centres[truth] + rng.normal(0.0, 0.3, (45, 2))
    res = cluster(scaled(pts))
    assert (res.labels >= 0).all(), "no point of a well-separated blob is noise"
    # same partition as the truth (labels may be permuted)
    pairs = set(zip(truth.tolist(), res.labels.tolist()))
    assert len(pairs) == 3 and len({b for _, b in pairs}) == 3
    assert 0 < res.eps < 0.5  # well below the gap between the scaled blobs (~0.7)


def test_dbscan_marks_a_far_outlier_as_noise() -> None:
    rng = np.random.default_rng(1)
    pts = np.vstack([rng.normal(0, 0.1, (20, 2)), rng.normal(5, 0.1, (20, 2)), [[2.5, 9.0]]])
    res = cluster(scaled(pts))
    assert res.labels[-1] == -1
    assert len(set(res.labels[:40].tolist()) - {-1}) == 2


def test_given_eps_is_used_as_is() -> None:
    pts = np.array([[0.0, 0.0], [0.1, 0.0], [0.2, 0.0], [0.9, 0.0], [1.0, 0.0]])
    assert cluster(pts, eps=0.15, min_samples=2).labels.tolist() == [0, 0, 0, 1, 1]
    assert cluster(pts, eps=2.0, min_samples=2).labels.tolist() == [0] * 5


def test_kdistance_knee_on_a_curve_with_a_jump() -> None:
    # 30 points 0.01 apart on a line and 3 far outliers: the knee sits on the dense spacing
    pts = np.c_[np.r_[np.arange(30) * 0.01, [5.0, 7.0, 9.0]], np.zeros(33)]
    eps, curve = kdistance_eps(pts, 2)
    assert eps == pytest.approx(0.01)
    assert curve[-1] == pytest.approx(2.0)


def test_degenerate_clusterings_have_notes() -> None:
    one = cluster(np.zeros((1, 2)))
    assert one.labels.tolist() == [0] and "too few" in one.notes[0]
    same = cluster(np.ones((6, 2)))
    assert same.labels.tolist() == [0] * 6 and "identical" in same.notes[0]


def test_design_matrix_scales_1_100_log_and_one_hot() -> None:
    genomes = pd.DataFrame({"a": [0.0, 5.0, 10.0], "b": [1.0, 31.622776601683793, 1000.0], "c": [0, 5, 5],
                            "p": ["first", "smallest", "first"], "f": ["none", "easy", "easy"]})
    X = design_matrix(genomes, GENES)
    assert X["a"].tolist() == pytest.approx([1.0, 50.5, 100.0])
    assert X["b"].tolist() == pytest.approx([1.0, 50.5, 100.0])  # geometric middle -> middle of 1-100
    assert X["c"].tolist() == pytest.approx([1.0, 100.0, 100.0])
    assert X["p=first"].tolist() == [100.0, 1.0, 100.0]
    assert X["p=shortest"].tolist() == [1.0, 1.0, 1.0]
    assert X["f"].tolist() == [1.0, 100.0, 100.0]


def _genomes(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"a": rng.uniform(0, 10, n), "b": np.exp(rng.uniform(0, np.log(1000), n)),
                         "c": rng.integers(0, 6, n), "p": rng.choice(["first", "shortest", "smallest"], n),
                         "f": rng.choice(["none", "easy"], n)})


def test_lasso_recovers_the_one_driving_gene() -> None:
    rng = np.random.default_rng(0)
    g = _genomes(40, rng)
    X = design_matrix(g, GENES)
    y = 3.0 + 0.5 * X["a"].to_numpy() + rng.normal(0, 0.2, 40)  # only gene a matters
    fit = fit_lasso(X, y)
    coef = fit["coef"]
    assert fit["method"] == "LassoCV"
    assert coef["a"] == pytest.approx(0.5, rel=0.05)
    others = [abs(w) for k, w in coef.items() if k != "a"]
    assert max(others) < 0.02  # ~0: at least 25x smaller than the driver
    # out of sample: noise sd 0.2 against a signal sd ~14 leaves R^2 close to 1
    assert fit["r2_cv"] > 0.99 and fit["useful"] and fit["note"] == ""
    assert fit["r2_train"] >= fit["r2_cv"]


def test_planted_driver_on_few_noisy_points_scores_lower_out_of_sample_than_in_sample() -> None:
    rng = np.random.default_rng(3)
    g = _genomes(20, rng)
    X = design_matrix(g, GENES)
    y = 0.1 * X["a"].to_numpy() + rng.normal(0, 2.0, 20)  # signal sd ~2.9, noise sd 2
    fit = fit_lasso(X, y)
    assert 0.2 < fit["r2_cv"] < fit["r2_train"]
    assert max(fit["coef"], key=lambda k: abs(fit["coef"][k])) == "a"
    # R² 0.46 out of sample: more than the old cut-off (0.2), too little to chart for users to act on
    assert fit["r2_cv"] < USEFUL_R2 == 0.5 and not fit["useful"]
    assert "out-of-sample R² 0.46 (below 0.5)" in str(fit["note"])


def test_pure_noise_is_not_useful_and_says_what_to_change() -> None:
    rng = np.random.default_rng(4)
    g = _genomes(30, rng)
    X = design_matrix(g, GENES)
    fit = fit_lasso(X, rng.normal(0, 1.0, 30))  # no gene matters
    assert fit["r2_cv"] < USEFUL_R2 and not fit["useful"]
    assert "out-of-sample R²" in str(fit["note"])
    assert "seeds" in advice(fit)


def test_too_few_and_degenerate_sets_give_notes_not_fits() -> None:
    rng = np.random.default_rng(1)
    g = _genomes(12, rng)
    X = design_matrix(g, GENES)
    three = fit_lasso(X.iloc[:3], X["a"].to_numpy()[:3] * 2.0)
    assert three["note"] == "too few points (3; need >= 10 to fit and cross-validate)"
    assert three["coef"] == {} and not three["useful"]
    assert "more generations" in advice(three) and "larger population" in advice(three)
    nine = fit_lasso(X.iloc[:9], X["a"].to_numpy()[:9])
    assert "too few points (9;" in str(nine["note"])
    assert "constant" in str(fit_lasso(X, np.ones(12))["note"])


def test_lasso_table_per_cluster_and_objective() -> None:
    rng = np.random.default_rng(2)
    g = _genomes(30, rng)
    X = design_matrix(g, GENES)
    g["energy_kwh"] = 10.0 + 0.2 * X["a"].to_numpy()
    g["mean_bsld"] = 5.0 - 0.3 * X["b"].to_numpy()
    labels = np.r_[np.zeros(28, dtype=int), [-1, -1]]  # one real cluster and 2 noise points
    table, notes = lasso_table(g, labels, GENES, ["energy_kwh", "mean_bsld"])
    big = table[table["cluster"] == 0].set_index(["objective", "feature"])["coef"]
    assert big[("energy_kwh", "a")] == pytest.approx(0.2, rel=0.05)
    assert big[("mean_bsld", "b")] == pytest.approx(-0.3, rel=0.05)
    assert abs(big[("mean_bsld", "a")]) < 0.01
    assert (table.loc[table["cluster"] == 0, "r2_cv"] > 0.99).all()
    noise = table[table["cluster"] == -1]
    assert len(noise) == 2 and noise["feature"].eq("").all() and noise["note"].str.contains("not fitted").all()
    assert not noise["useful"].any()
    assert not any("cluster -1" in n for n in notes)


def test_int_and_null_choice_values_survive_the_log_round_trip():
    # the log comes back as floats and NaN: 60 -> 60.0, null -> NaN; the one-hot columns must still vary
    import math

    import pandas as pd

    from paretosched.analysis.drivers import design_matrix
    g = "scheduler.power_off_idle_s"
    genes = {g: ChoiceGene(values=[None, 60, 600])}
    X = design_matrix(pd.DataFrame({g: [60.0, 600.0, math.nan]}), genes)
    assert X.to_dict("list") == {f"{g}=None": [1.0, 1.0, 100.0], f"{g}=60": [100.0, 1.0, 1.0],
                                 f"{g}=600": [1.0, 100.0, 1.0]}
    # booleans and numbers stay apart
    genes = {"x": ChoiceGene(values=[1, True])}
    X = design_matrix(pd.DataFrame({"x": pd.Series([1, True], dtype=object)}), genes)
    assert X["x=1"].tolist() == [100.0, 1.0] and X["x=True"].tolist() == [1.0, 100.0]


def test_violins_end_at_the_data_and_choice_legends_read_as_the_study_wrote_them() -> None:
    import plotly.graph_objects as go

    from paretosched.analysis import figures

    genes = {"scheduler.freq": FloatGene(low=0.55, high=1.0),
             "scheduler.power_off_idle_s": ChoiceGene(values=[None, 7200, 60])}
    pop = pd.DataFrame({"scheduler.freq": [0.55, 0.6, 0.98, 1.0],
                        "scheduler.power_off_idle_s": [7200, None, 60, 7200]})  # pandas: 7200.0, nan, 60.0
    vio = figures.violins(pop, genes)
    assert vio is not None and [t.spanmode for t in vio.data if isinstance(t, go.Violin)] == ["hard"]
    shares = figures.categorical_shares(pop, np.array([0, 0, 1, 1]), "scheduler.power_off_idle_s")
    assert [t.name for t in shares.data] == ["scheduler.power_off_idle_s = null", "scheduler.power_off_idle_s = 60",
                                             "scheduler.power_off_idle_s = 7200"]
