"""Surrogate pre-screening of offspring (search/screening.py): validated, off by default,
reproducible, resumable, and it keeps the candidates its forest predicts best."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pymoo.core.population import Population

from conftest import kill_and_resume, run_quiet, stable_rows, summary, write_study
from paretosched.errors import UserError
from paretosched.search.genes import ChoiceGene, FloatGene
from paretosched.search.runlog import read_evaluations
from paretosched.search.screening import Screener, features
from paretosched.search.options import ScreeningSpec
from paretosched.search.study import load_study

SCREENED = dict(budget={"evaluations": 80}, algorithm={"pop_size": 10}, screening={"factor": 3, "min_log": 10})


def test_screening_is_off_by_default_and_validated(tmp_path: Path) -> None:
    assert load_study(write_study(tmp_path)).screening is None
    assert load_study(write_study(tmp_path, name="b.yaml", screening={})).screening == ScreeningSpec()
    with pytest.raises(UserError, match=r"study.yaml: screening.factor: .*greater than or equal to 2"):
        load_study(write_study(tmp_path, screening={"factor": 1}))
    with pytest.raises(UserError, match=r"study.yaml: screening.surrogate"):
        load_study(write_study(tmp_path, screening={"surrogate": "gp"}))


def test_features_one_hot_choices() -> None:
    genes = {"a": FloatGene(type="float", low=0.0, high=1.0), "c": ChoiceGene(type="choice", values=["x", "y", "z"])}
    X = features(genes, [{"a": 0.5, "c": 2}, {"a": 0.1, "c": 0}])
    assert X.tolist() == [[0.5, 0.0, 0.0, 1.0], [0.1, 1.0, 0.0, 0.0]]


def test_the_forest_keeps_the_candidates_it_predicts_best() -> None:
    # one gene; both objectives fall with it on the log: the screener must keep the largest values
    genes = {"a": FloatGene(type="float", low=0.0, high=1.0)}
    rng = np.random.default_rng(0)
    xs = [{"a": float(v)} for v in rng.random(40)]
    F = np.array([[1 - x["a"], 2 - x["a"]] for x in xs])
    pop = Population.new(X=np.array([{"a": v} for v in np.linspace(0, 1, 12)], dtype=object))
    kept = Screener(ScreeningSpec(explore=0.0), genes, 4, seed=1, signs=np.ones(2)).select(pop, xs, F)
    assert sorted(round(x["a"], 3) for x in kept.get("X")) == sorted(round(v, 3) for v in np.linspace(0, 1, 12)[-4:])
    # before min_log successful genomes the candidates are taken in order, unscreened
    assert [x["a"] for x in Screener(ScreeningSpec(), genes, 4, 1, np.ones(2)).select(pop, xs[:5], F[:5]).get("X")] == \
        [x["a"] for x in pop[:4].get("X")]


def test_a_screened_run_simulates_only_what_it_keeps_and_repeats_itself(tmp_path: Path) -> None:
    study = write_study(tmp_path, **SCREENED)
    one = run_quiet(study, tmp_path / "w1", workers=1)
    two = run_quiet(study, tmp_path / "w2", workers=2)
    assert stable_rows(one) == stable_rows(two)
    s = summary(one)
    assert s["n_told"] == 80 and all(g["evaluations"] % 10 == 0 for g in s["generations"])  # 10 per generation
    search = [r for r in read_evaluations(one) if r.kind == "search" and r.supersedes is None]
    assert len(search) == 80  # the 20 unkept candidates per generation were never simulated
    plain = run_quiet(write_study(tmp_path, name="plain.yaml", **{k: v for k, v in SCREENED.items() if k != "screening"}),
                      tmp_path / "plain")
    assert stable_rows(plain)[:10] == stable_rows(one)[:10]  # generation 0 is never screened
    assert stable_rows(plain) != stable_rows(one)


def test_a_screened_run_killed_mid_generation_resumes_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kw = dict(SCREENED, evaluator="conftest:evaluate_then_interrupt", cache=False)
    kill_and_resume(tmp_path, monkeypatch, 35, **kw)
