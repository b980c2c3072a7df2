"""Constraints (`constraints:` in a study, search/constraints.py): the schema, pymoo's constraint
domination, the values in the log and on the re-check, the table, and resume with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import conftest
from conftest import log_json, run_quiet, stable_rows, summary, write_study
from paretosched.errors import UserError
from paretosched.search.constraints import Constraint, Limits, front_pool, relative
from paretosched.search.study import load_study

LUCKY = "paretosched.search.analytic:evaluate_lucky"
OPT = {"scheduler": {"job_policy": "shortest", "backfilling": "easy", "freq": 0.55,
                     "power_off_idle_s": 100.0, "min_nodes_on": 3}}  # on the true front: mean_bsld 0.293
LIMIT = 0.5  # mean_bsld <= 0.5 cuts the front at energy_kwh >= 0.25: its low-energy end breaks it


def _study(tmp_path: Path, **kw: object) -> Path:
    base = dict(budget={"generations": 6}, algorithm={"pop_size": 12}, cache=False,
                constraints=[{"metric": "mean_bsld", "max": LIMIT}])
    return write_study(tmp_path, **{**base, **kw})


@pytest.mark.parametrize("constraints, message", [
    ([{"metric": "p95_wiat_s", "max": 1}], "constraints.0.metric: unknown metric 'p95_wiat_s' (did you mean 'p95_wait_s'?)"),
    ([{"metric": "mean_bsld"}], "give exactly one of max, min, max_vs (got none)"),
    ([{"metric": "mean_bsld", "max": 1, "min": 0}], "give exactly one of max, min, max_vs (got max, min)"),
    ([{"metric": "mean_bsld", "max": 1, "factor": 2}], "factor goes with max_vs"),
    ([{"metric": "mean_bsld", "max_vs": "opt", "factor": 0}], "factor must be > 0"),
    ([{"metric": "mean_bsld", "max_vs": "nope"}], "constraints.0.max_vs: 'nope' is not one of the study's baselines"),
    ([{"metric": "mean_bsld", "max": "1"}], "constraints.0.max"),
    ([{"metric": "mean_bsld", "max": 1, "typo": 2}], "constraints.0.typo"),
])
def test_constraint_mistakes_are_one_line_errors_naming_the_key(tmp_path, constraints, message):
    path = _study(tmp_path, constraints=constraints, baselines={"opt": OPT})
    with pytest.raises(UserError) as err:
        load_study(path)
    text = str(err.value)
    assert message in text and "\n" not in text and str(path) in text


def test_focus_and_constraints_are_refused_together(tmp_path):
    path = _study(tmp_path, baselines={"opt": OPT}, focus={"baseline": "opt"})
    with pytest.raises(UserError, match="focus and constraints: choose one"):
        load_study(path)


def test_reference_must_name_a_baseline(tmp_path):
    with pytest.raises(UserError, match=r"reference: 'curent' is not one of the study's baselines"):
        load_study(_study(tmp_path, baselines={"current": OPT}, reference="curent"))


def test_values_are_relative_to_the_limit_and_the_pool_is_pymoos_rule():
    assert relative(9000.0, 7200.0, upper=True) == pytest.approx(0.25)
    assert relative(0.5, 0.6, upper=False) == pytest.approx(1 / 6)
    assert relative(-1.0, 0.0, upper=True) == -1.0  # a limit of 0: the plain difference
    assert front_pool([0.0, 0.3, -0.1]) == [0, 2]
    assert front_pool([0.4, 0.2, 0.2]) == [1, 2]  # none feasible: the least infeasible
    assert Constraint(metric="mean_bsld", max_vs="current", factor=1.05).label == "mean_bsld <= 1.05 x current"
    assert not Limits([])


def test_the_front_excludes_the_unconstrained_best(tmp_path):
    # 10 generations: the default's gentle variation needs them to find a population of feasible genomes
    ten = {"generations": 10}
    free = run_quiet(_study(tmp_path, name="free.yaml", constraints=[], budget=ten), tmp_path / "free")
    bound = run_quiet(_study(tmp_path, budget=ten), tmp_path / "bound")
    rows_free = {r["eval_id"]: r for r in log_json(free)}
    best_free = min(rows_free[i]["objectives"]["energy_kwh"] for i in summary(free)["front"])
    assert rows_free[min(summary(free)["front"], key=lambda i: rows_free[i]["objectives"]["energy_kwh"])][
        "objectives"]["mean_bsld"] > LIMIT  # unconstrained, the lowest energy breaks the limit
    rows = {r["eval_id"]: r for r in log_json(bound)}
    front = summary(bound)["front"]
    assert front and all(rows[i]["objectives"]["mean_bsld"] <= LIMIT for i in front)
    assert min(rows[i]["objectives"]["energy_kwh"] for i in front) > best_free
    # every successful row logs its value, (mean_bsld - limit) / limit
    for r in rows.values():
        if r["status"] == "ok" and r["kind"] != "screen":
            assert r["constraints"] == [pytest.approx((r["metrics"]["mean_bsld"] - LIMIT) / LIMIT)]
    # pymoo's constraint domination: the final population holds only feasible genomes, although
    # the search met infeasible ones (without the constraint many population members break it)
    pop = json.loads((bound / "population.json").read_text())["eval_ids"]
    assert all(rows[i]["constraints"][0] <= 0 for i in pop)
    assert any(r["constraints"][0] > 0 for r in rows.values() if r["kind"] == "search")
    free_pop = json.loads((free / "population.json").read_text())["eval_ids"]
    assert any(rows_free[i]["objectives"]["mean_bsld"] > LIMIT for i in free_pop)
    assert "constraints" not in log_json(free)[0]  # a study without constraints logs as before


def test_max_vs_compares_on_the_same_seeds_and_the_recheck_judges_again(tmp_path):
    path = _study(tmp_path, evaluator=LUCKY, seeds=2, recheck=3, baselines={"current": OPT}, reference_point=None,
                  resampling={"max_seeds": 4, "step": 2, "tolerance": 0.05},
                  constraints=[{"metric": "mean_bsld", "max_vs": "current", "factor": 1.5},
                               {"metric": "energy_kwh", "min": 0.2}])
    run = run_quiet(path, tmp_path / "run")
    rows = {r["eval_id"]: r for r in log_json(run)}
    base = next(r for r in rows.values() if r["kind"] == "baseline")
    assert len(base["seeds"]) == 4  # the max_vs baseline runs on every seed a genome may reach
    per = {s["seed"]: s["metrics"]["mean_bsld"] for s in base["per_seed"]}
    for r in rows.values():
        if r["kind"] == "search" and r["status"] == "ok":
            ref = sum(per[s] for s in r["seeds"]) / len(r["seeds"])  # the baseline on the row's own seeds
            limit = 1.5 * ref
            assert r["constraints"][0] == pytest.approx((r["metrics"]["mean_bsld"] - limit) / limit)
            assert r["constraints"][1] == pytest.approx((0.2 - r["metrics"]["energy_kwh"]) / 0.2)
    s = summary(run)
    # resampling works on the genomes the front is drawn from: no front point is left on fewer seeds
    assert all(len(rows[i]["seeds"]) == 4 for i in s["front"])
    assert s["reference"] == "current" and s["constraints"] == ["mean_bsld <= 1.5 x current", "energy_kwh >= 0.2"]
    assert s["reference_point_source"] == "baseline current"
    assert s["reference_point"] == base["objectives"]
    base_rc = next(r for r in rows.values() if r["kind"] == "recheck" and r["recheck_of"] == base["eval_id"])
    for p in s["recheck"]["front"]:
        rc = rows[p["recheck_eval_id"]]
        limit = 1.5 * base_rc["metrics"]["mean_bsld"]  # on the fresh seeds: the baseline's re-check
        assert p["recheck_constraints"][0] == pytest.approx((rc["metrics"]["mean_bsld"] - limit) / limit)
        assert p["recheck_constraints"] == rc["constraints"] and p["constraints"] == rows[p["eval_id"]]["constraints"]
        assert p["feasible"] == all(v <= 0 for v in rc["constraints"])
        # the "vs current" ratios, on the fresh seeds
        for o in ("energy_kwh", "mean_bsld"):
            ref = base_rc["objectives"][o]
            assert p["vs_reference"][o] == pytest.approx((rc["objectives"][o] - ref) / abs(ref))


def test_the_table_shows_vs_current_and_marks_what_breaks_a_limit(tmp_path):
    from paretosched.search.summary import Summary
    from paretosched.search.verdict import summary_table

    path = _study(tmp_path, evaluator=LUCKY, recheck=2, baselines={"current": OPT})
    run = run_quiet(path, tmp_path / "run")
    s = summary(run)
    s["recheck"]["front"][0]["feasible"] = False  # as a re-check that breaks the limit would say
    s["recheck"]["front"][0]["recheck_constraints"] = [0.125]
    text = summary_table(Summary.from_json(s, run), str(run))
    header = [line for line in text.splitlines() if line.startswith("eval ")][0]
    assert "energy_kwh search seeds" in header and "energy_kwh fresh seeds" in header
    assert "energy_kwh vs current" in header and "mean_bsld vs current" in header
    first = s["recheck"]["front"][0]
    line = [x for x in text.splitlines() if x.strip().startswith(f"{first['eval_id']} ")][0]
    assert f"{100 * first['vs_reference']['energy_kwh']:+.1f}%" in line
    assert "NOT MET: mean_bsld <= 0.5 (+12%)" in line
    assert f"front points {first['eval_id']} do not meet the constraints" in text
    assert "constraints: mean_bsld <= 0.5 (judged on the fresh seeds)" in text


def test_a_run_with_constraints_killed_and_resumed_logs_the_same_rows(tmp_path, monkeypatch):
    kw = dict(evaluator="conftest:evaluate_lucky_then_interrupt", recheck=2, baselines={"current": OPT},
              constraints=[{"metric": "mean_bsld", "max_vs": "current", "factor": 1.3}],
              resampling={"max_seeds": 3, "step": 1, "tolerance": 0.05})
    whole = run_quiet(_study(tmp_path, **kw), tmp_path / "whole")
    total = summary(whole)["n_simulations"]
    for schedule in ("generational", "steady"):
        kws = dict(kw, algorithm={"pop_size": 12, "schedule": schedule})
        ref = whole if schedule == "generational" else run_quiet(_study(tmp_path, name="s.yaml", **kws), tmp_path / "ws")
        monkeypatch.setitem(conftest.INTERRUPT_AFTER, "calls", 0)
        monkeypatch.setitem(conftest.INTERRUPT_AFTER, "limit", total // 2)
        cut = tmp_path / f"cut-{schedule}"
        with pytest.raises(KeyboardInterrupt):
            run_quiet(_study(tmp_path, name=f"{schedule}.yaml", **kws), cut)
        monkeypatch.setitem(conftest.INTERRUPT_AFTER, "limit", 10**9)
        run_quiet(cut, cut, resume=True)
        assert stable_rows(cut) == stable_rows(ref)
        assert any(r.get("constraints") for r in stable_rows(cut))
        assert summary(cut)["recheck"] == summary(ref)["recheck"]


def test_the_progress_line_shows_one_front_points_own_values(tmp_path):
    import io

    from paretosched.search.progress import Progress
    from paretosched.search.runlog import Generation

    run = run_quiet(_study(tmp_path), tmp_path / "run")
    rows = {r["eval_id"]: r for r in log_json(run)}
    last = summary(run)["generations"][-1]
    p = last["point"]
    assert p["eval_id"] in summary(run)["front"] and p["feasible"] is True
    assert {o: p[o] for o in ("energy_kwh", "mean_bsld")} == rows[p["eval_id"]]["objectives"]  # one point's values
    out = io.StringIO()
    best = {"energy_kwh": p["energy_kwh"] * 0.5, "mean_bsld": p["mean_bsld"] * 0.5}  # bests of other points
    Progress("s", None, quiet=True, stream=out).update(60, Generation(0, 60, 60, 0, 1.0, 3, best, point=p))
    line = out.getvalue()
    assert f"front 3, eval {p['eval_id']}: energy_kwh={p['energy_kwh']:.4g} mean_bsld={p['mean_bsld']:.4g}" in line
    assert f"{best['energy_kwh']:.4g}" not in line and f"{best['mean_bsld']:.4g}" not in line
