"""The search engine itself, apart from the twin: NSGA-II on the analytic mixed-variable problem."""

from __future__ import annotations

import csv
from pathlib import Path

from pymoo.algorithms.moo.nsga2 import NSGA2, binary_tournament
from pymoo.algorithms.moo.nsga3 import NSGA3
from pymoo.core.mixed import MixedVariableDuplicateElimination, MixedVariableMating
from pymoo.operators.survival.rank_and_crowding import RankAndCrowding

from paretosched.search.analytic import true_hypervolume
from paretosched.search.problem import build_algorithm
from paretosched.search.sampling import CoveringSampling
from paretosched.search.space import SearchSpace
from paretosched.search.options import AlgorithmSpec
from paretosched.search.study import load_study

from conftest import run_quiet, summary, write_study

BUDGET = 1600  # evaluations: pop 40 x 40 generations


def test_hypervolume_within_2pct_of_true_front(tmp_path: Path) -> None:
    study = write_study(tmp_path, budget={"evaluations": BUDGET}, algorithm={"pop_size": 40}, seed=1)
    run = run_quiet(study, tmp_path / "run")
    s = summary(run)
    true_hv = true_hypervolume(1.1, 1.1)  # closed form, the study's fixed reference point (1.1, 1.1)
    assert s["reference_point"] == {"energy_kwh": 1.1, "mean_bsld": 1.1}
    assert s["n_told"] == BUDGET and s["stop_reason"] == "evaluations"
    assert s["hv"] >= 0.98 * true_hv, (s["hv"], true_hv)
    assert s["hv"] <= true_hv  # no point can beat the true front
    hvs = [g["hv"] for g in s["generations"]]
    assert all(b >= a - 1e-12 for a, b in zip(hvs, hvs[1:])), "archive HV never decreases"
    # the front really sits on the Pareto set: shortest + easy + k=3 dominate the front's middle
    with open(run / "front.csv") as f:
        front = list(csv.DictReader(f))
    mid = [r for r in front if 0.05 < float(r["energy_kwh"]) < 0.95]
    assert len(mid) >= 20
    assert all(r["scheduler.job_policy"] == "shortest" and r["scheduler.backfilling"] == "easy"
               and r["scheduler.min_nodes_on"] == "3" for r in mid)
    assert all(abs(float(r["mean_bsld"]) - (1 - float(r["energy_kwh"]) ** 0.5)) < 0.05 for r in mid)


def test_algorithm_is_nsga2_with_mixed_variable_operators(tmp_path: Path) -> None:
    study = load_study(write_study(tmp_path))
    algo = build_algorithm(SearchSpace(study), 2, AlgorithmSpec(pop_size=10), 0)
    assert isinstance(algo, NSGA2) and isinstance(algo.survival, RankAndCrowding)
    assert isinstance(algo.mating, MixedVariableMating)
    assert algo.mating.selection.func_comp is binary_tournament  # not MixedVariableMating's random default
    assert isinstance(algo.initialization.sampling, CoveringSampling)
    assert isinstance(algo.eliminate_duplicates, MixedVariableDuplicateElimination)
    three = build_algorithm(SearchSpace(study), 3, AlgorithmSpec(pop_size=12), 0)
    assert isinstance(three, NSGA3) and len(three.ref_dirs) <= 12


def test_three_objectives_run_nsga3_and_keep_natural_signs(tmp_path: Path) -> None:
    study = write_study(tmp_path, objectives=["energy_kwh", "mean_bsld", {"max": "utilisation"}],
                        reference_point=None, budget={"generations": 3}, algorithm={"pop_size": 12})
    run = run_quiet(study, tmp_path / "run")
    s = summary(run)
    assert [o["sense"] for o in s["objectives"]] == ["min", "min", "max"]
    assert s["reference_point_source"] == "generation 0"
    # utilisation = 1 - f1/2 is maximised: its reference is below every observed value
    with open(run / "front.csv") as f:
        util = [float(r["utilisation"]) for r in csv.DictReader(f)]
    assert min(util) > s["reference_point"]["utilisation"] and max(util) <= 1.0
    assert s["hv"] > 0
