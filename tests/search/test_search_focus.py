"""`focus: {baseline: NAME}`: genomes that beat the named baseline on every objective (on the
same seeds) come first in NSGA-II's tournament and survival; the baseline runs on every seed a
genome may reach; the rest of the search is unchanged."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from pymoo.core.individual import Individual
from pymoo.core.population import Population

from paretosched.errors import UserError
from paretosched.search.focus import Focus
from paretosched.search.ledger import Ledger, Spec, make_row
from paretosched.search.options import FocusSpec
from paretosched.search.problem import FAILED_PENALTY, FeasibleFirst, GenomeProblem, constraints, feasible_first
from paretosched.search.runlog import SeedResult, read_evaluations
from paretosched.search.study import extra_seeds, load_study

from conftest import kill_and_resume, log_json, run_quiet, stable_rows, write_study

# beaten only where t < 0.5 and g close to 1 (job_policy shortest, power_off_idle_s ~100, 3 nodes on)
PROD = {"scheduler": {"freq": 0.55, "power_off_idle_s": 100.0, "min_nodes_on": 3, "job_policy": "first",
                      "backfilling": "easy"}}
FOCUSED = dict(baselines={"prod": PROD}, focus={"baseline": "prod"}, budget={"evaluations": 200}, cache=False)


def _seed(seed: int, e: float, b: float, u: float = 0.5) -> SeedResult:
    return SeedResult(seed, "ok", {"energy_kwh": e, "mean_bsld": b, "utilisation": u}, None, 0.0, False)


def _ledger(tmp_path: Path, objectives: list[str]) -> Ledger:
    led = Ledger(tmp_path, objectives)
    base = [_seed(1, 10.0, 4.0, 0.5), _seed(2, 12.0, 6.0, 0.7), _seed(3, 14.0, 2.0, 0.9)]
    led.rows[0] = make_row(0, Spec("baseline", {}, [1, 2, 3], name="prod"), -1, base, objectives)
    genomes = [[_seed(1, 9.0, 3.6, 0.6)],                       # beats seed 1's (10, 4)
               [_seed(1, 13.0, 3.0, 0.6), _seed(2, 11.0, 5.0, 0.6)],  # (12, 4) against (11, 5): energy worse
               [_seed(1, 10.0, 3.0, 0.6)],                      # level on energy: does not beat it
               [_seed(1, 9.0, 3.0, 0.4)]]                       # beats both minimised, not utilisation
    for k, per in enumerate(genomes, start=1):
        led.rows[k] = make_row(k, Spec("search", {}, [s.seed for s in per], genome={"g": k}), 0, per, objectives)
    return led


def test_a_genome_is_compared_with_the_baseline_on_its_own_seeds(tmp_path: Path) -> None:
    state = SimpleNamespace(baseline_ids={"prod": 0})
    led = _ledger(tmp_path, ["energy_kwh", "mean_bsld"])
    focus = Focus(FocusSpec(baseline="prod"), led, np.array([1.0, 1.0]), state)  # type: ignore[arg-type]
    assert focus.g([1, 2, 3, 4]).tolist() == [-1.0, 1.0, 1.0, -1.0]
    # a maximised objective is compared in its minimisation form: 0.4 utilisation loses to 0.5
    led = _ledger(tmp_path, ["energy_kwh", "utilisation"])
    focus = Focus(FocusSpec(baseline="prod"), led, np.array([1.0, -1.0]), state)  # type: ignore[arg-type]
    assert focus.g([1, 4]).tolist() == [-1.0, 1.0]
    # off, or before the baselines ran: no constraint
    assert Focus(None, led, np.array([1.0, -1.0]), state).g([1]) is None  # type: ignore[arg-type]
    assert Focus(FocusSpec(baseline="prod"), led, np.array([1.0, -1.0]),
                 SimpleNamespace(baseline_ids={})).g([1]) is None  # type: ignore[arg-type]


def _pop(F: list[list[float]], G: list[float]) -> Population:
    pop = Population.create(*[Individual() for _ in F])
    pop.set("F", np.array(F, dtype=float), "G", np.array(G, dtype=float)[:, None])
    pop.set("CV", np.maximum(0.0, np.array(G, dtype=float))[:, None])
    return pop


def test_survival_keeps_the_genomes_that_beat_the_baseline_first(tmp_path: Path) -> None:
    # two that beat it (dominated by others!), three that do not, one failure
    F = [[5, 5], [6, 6], [2, 2], [3, 3], [1, 1], [FAILED_PENALTY] * 2]
    failed = np.array([0, 0, 0, 0, 0, 1], dtype=bool)
    G = list(constraints(failed, np.array([-1, -1, 1, 1, 1, 0.0])))
    assert G[-1] == FAILED_PENALTY and constraints(failed).tolist() == [-1, -1, -1, -1, -1, 1]  # without focus
    problem = GenomeProblem(SimpleNamespace(pymoo_vars=lambda: {}), 2)  # type: ignore[arg-type]
    kept = FeasibleFirst().do(problem, _pop(F, G), n_survive=3)
    # both that beat it, then NSGA-II's rank among the others: (1, 1) dominates (2, 2) and (3, 3)
    assert set(map(tuple, kept.get("F").tolist())) == {(5, 5), (6, 6), (1, 1)}
    assert len(FeasibleFirst().do(problem, _pop(F, G), n_survive=6)) == 6
    # the tournament: the class first, whatever the objectives; within a class, dominance
    algo = SimpleNamespace(random_state=np.random.default_rng(0))
    pop = FeasibleFirst().do(problem, _pop(F, G), n_survive=6)  # sets rank and crowding
    i = {tuple(f): k for k, f in enumerate(pop.get("F").tolist())}
    P = np.array([[i[(6, 6)], i[(1, 1)]], [i[(1, 1)], i[(2, 2)]], [i[(FAILED_PENALTY,) * 2], i[(3, 3)]],
                  [i[(5, 5)], i[(6, 6)]]])
    assert feasible_first(pop, P, algo).ravel().tolist() == [i[(6, 6)], i[(1, 1)], i[(3, 3)], i[(5, 5)]]


def test_the_focus_baseline_runs_on_every_seed_a_genome_may_reach(tmp_path: Path) -> None:
    kw = dict(FOCUSED, baselines={"prod": PROD, "other": PROD}, budget={"generations": 2}, seeds=2,
              resampling={"max_seeds": 5}, evaluator="paretosched.search.analytic:evaluate_lucky")
    run = run_quiet(write_study(tmp_path, **kw), tmp_path / "run")
    order = [*load_study(run).seeds, *extra_seeds(load_study(run))]  # type: ignore[misc]
    base = {r.name: r.seeds for r in read_evaluations(run) if r.kind == "baseline"}
    assert base == {"prod": order, "other": order[:2]} and len(order) == 5


def _beaten(run: Path) -> list[int]:
    """Eval ids of the successful search rows that beat the baseline on both objectives."""
    rows = log_json(run)
    b = next(r["objectives"] for r in rows if r["kind"] == "baseline")
    return [r["eval_id"] for r in rows if r["kind"] == "search" and r["status"] == "ok"
            and r["objectives"]["energy_kwh"] < b["energy_kwh"] and r["objectives"]["mean_bsld"] < b["mean_bsld"]]


def test_focus_spends_the_search_where_the_baseline_is_beaten(tmp_path: Path) -> None:
    """Over study seeds 1-10 (200 genomes each) focus found 27/4/10/16/15/8/20/9/13/4 genomes that
    beat the baseline against 7/7/9/10/3/0/4/8/5/1 without: ahead on 9 of 10. Seeds 1-4 here."""
    plain = {k: v for k, v in FOCUSED.items() if k != "focus"}
    on = off = 0
    for seed in (1, 2, 3, 4):
        runs = [run_quiet(write_study(tmp_path, name=f"{n}{seed}.yaml", seed=seed, **kw), tmp_path / f"{n}{seed}")
                for n, kw in (("on", FOCUSED), ("off", plain))]
        on, off = on + len(_beaten(runs[0])), off + len(_beaten(runs[1]))
    assert on >= 1.5 * off > 0  # 57 against 33 when written


def test_the_population_keeps_every_genome_that_beats_the_baseline(tmp_path: Path) -> None:
    """Survival takes them first: once told, one leaves the population only for another that beats
    the baseline, so the final population holds min(pop_size, all told) of them."""
    # population 10: more than 10 such genomes are found in 200 evaluations, so it ends full of them
    run = run_quiet(write_study(tmp_path, **dict(FOCUSED, seed=1, algorithm={"pop_size": 10})), tmp_path / "run")
    beaten = set(_beaten(run))
    population = set(__import__("json").loads((run / "population.json").read_text())["eval_ids"])
    assert len(beaten) > 10 and len(population & beaten) == min(10, len(beaten))


def test_focus_is_reproducible_and_resumes_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kw = dict(FOCUSED, budget={"generations": 4}, algorithm={"pop_size": 12}, seeds=2, recheck=2,
              resampling={"max_seeds": 5}, evaluator="conftest:evaluate_lucky_then_interrupt")
    kill_and_resume(tmp_path, monkeypatch, 60, **kw)  # compares the logs itself
    one = run_quiet(write_study(tmp_path, name="w.yaml", **kw), tmp_path / "w1", workers=1)
    two = run_quiet(write_study(tmp_path, name="w.yaml", **kw), tmp_path / "w2", workers=2)
    assert stable_rows(one) == stable_rows(two)


def test_focus_options_are_validated(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"study.yaml: focus.baseline: 'prd' is not one of the study's baselines "
                                        r"\(did you mean 'prod'\?\)"):
        load_study(write_study(tmp_path, baselines={"prod": PROD}, focus={"baseline": "prd"}))
    with pytest.raises(UserError, match=r"focus.baseline: 'x' is not one .* \('prod'\)"):
        load_study(write_study(tmp_path, baselines={"prod": PROD}, focus={"baseline": "x"}))
    with pytest.raises(UserError, match=r"focus.baseline: 'prod' .*the study names none: add it under baselines"):
        load_study(write_study(tmp_path, focus={"baseline": "prod"}))
    # a misspelt key is matched against its own section's keys, not the whole study's ('eta')
    with pytest.raises(UserError, match=r"study.yaml: focus.extra: unknown key$"):
        load_study(write_study(tmp_path, baselines={"prod": PROD}, focus={"baseline": "prod", "extra": 1}))
    with pytest.raises(UserError, match=r"focus.baselin: unknown key \(did you mean 'baseline'\?\)"):
        load_study(write_study(tmp_path, baselines={"prod": PROD}, focus={"baselin": "prod"}))
    with pytest.raises(UserError, match=r"study.yaml: focus.margin"):
        load_study(write_study(tmp_path, baselines={"prod": PROD}, focus={"baseline": "prod", "margin": 1}))


def test_the_cost_line_counts_the_focus_baseline_on_every_seed(tmp_path: Path) -> None:
    from paretosched.search.guards import check_cost

    kw = dict(baselines={"prod": PROD, "other": PROD}, seeds=2, resampling={"max_seeds": 6})
    assert "plus 4 for 2 baseline(s)" in check_cost(load_study(write_study(tmp_path, **kw)), "s")
    focused = load_study(write_study(tmp_path, name="f.yaml", focus={"baseline": "prod"}, **kw))
    assert "plus 8 for 2 baseline(s)" in check_cost(focused, "s")  # prod on 6 seeds, other on 2


def evaluate_prod_fails(cfg: dict, seed: int) -> dict:
    """`analytic.evaluate_lucky`, except that the focus baseline PROD fails."""
    from paretosched.search.analytic import evaluate_lucky

    s = cfg["scheduler"]
    if s.get("min_nodes_on") == 3 and s.get("freq") == 0.55 and s.get("power_off_idle_s") == 100.0:
        raise ValueError("baseline broken")
    return evaluate_lucky(cfg, seed)


@pytest.mark.parametrize("schedule", ["generational", "steady"])
def test_a_failed_focus_baseline_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schedule: str) -> None:
    """The focus baseline failed: the search goes on as plain NSGA-II, and says so (not silently)."""
    import contextlib
    import io

    from paretosched.search.optimise import optimise

    monkeypatch.setenv("PARETOSCHED_EVALUATORS", "test_search_focus:*")
    study = write_study(tmp_path, **dict(FOCUSED, budget={"generations": 2}, seeds=2, recheck=2,
                                         algorithm={"pop_size": 8, "schedule": schedule},
                                         evaluator="test_search_focus:evaluate_prod_fails"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = optimise(str(study), out=str(tmp_path / "run"), quiet=True, workers=1)
    assert [r.status for r in read_evaluations(run) if r.kind == "baseline"] == ["failed"]
    said = [line for line in err.getvalue().splitlines() if "focus: baseline 'prod' failed" in line]
    assert len(said) == 1 and "without focus" in said[0]


def test_focus_is_refused_with_three_objectives(tmp_path: Path) -> None:
    """NSGA-III (3+ objectives) ranks the genomes that do not beat the baseline by their equal
    violation alone: its population never took an offspring in (generation 0's for a whole run)."""
    objectives = ["energy_kwh", "mean_bsld", "utilisation"]
    with pytest.raises(UserError, match=r"^.*study.yaml: focus: needs 2 objectives \(NSGA-II\); this study has 3$"):
        load_study(write_study(tmp_path, baselines={"prod": PROD}, focus={"baseline": "prod"}, objectives=objectives,
                               reference_point=None))
    assert len(load_study(write_study(tmp_path, name="n.yaml", baselines={"prod": PROD}, objectives=objectives,
                                      reference_point=None)).objectives) == 3
