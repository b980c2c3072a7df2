"""Dynamic resampling: near-front genomes get extra seeds (the same ones, in the same order, for
every genome), the front and survival use the mean over all of them, the budget counts them,
and runs stay identical whatever the worker count and across a kill and resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paretosched.errors import UserError
from paretosched.search.runlog import current_rows, read_evaluations
from paretosched.search.resample import near_front
from paretosched.search.study import extra_seeds, load_study
from paretosched.sim.engine.metrics import mean_metrics

from conftest import kill_and_resume, log_json, run_quiet, stable_rows, summary, write_study

LUCKY = "paretosched.search.analytic:evaluate_lucky"
RESAMPLED = dict(evaluator=LUCKY, budget={"generations": 4}, algorithm={"pop_size": 12}, seeds=2, recheck=2,
                 resampling={"max_seeds": 5, "step": 2, "tolerance": 0.05}, cache=False)


def test_near_front_by_hand() -> None:
    F = np.array([[0, 1], [1, 0], [0.5, 0.5], [0.52, 0.52], [1, 1], [0.5, 0.5]])
    assert near_front(F, 0.0).tolist() == [True, True, True, False, False, True]
    # 0.52 is within 5% of the front's extent (1.0) of (0.5, 0.5); (1, 1) is not
    assert near_front(F, 0.05).tolist() == [True, True, True, True, False, True]


def test_extra_seeds_are_fresh_and_fixed(tmp_path: Path) -> None:
    study = load_study(write_study(tmp_path, seeds=2, recheck=3, resampling={"max_seeds": 6}))
    extra = extra_seeds(study)
    assert len(extra) == 4 and len(set(extra)) == 4
    assert not set(extra) & (set(study.seeds) | set(study.recheck))
    assert extra_seeds(load_study(write_study(tmp_path, name="b.yaml", seeds=2, recheck=3,
                                              resampling={"max_seeds": 8})))[:4] == extra  # a prefix
    default = load_study(write_study(tmp_path, name="c.yaml", resampling={}))
    assert default.resampling is not None and default.resampling.max_seeds == 6  # on by default
    assert extra_seeds(load_study(write_study(tmp_path, name="d.yaml", seeds=6, resampling={}))) == []


def test_resampling_options_are_validated(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"study.yaml: resampling.max_seeds: .*greater than or equal to 1"):
        load_study(write_study(tmp_path, resampling={"max_seeds": 0}))
    with pytest.raises(UserError, match=r"study.yaml: resampling.seeds"):
        load_study(write_study(tmp_path, resampling={"seeds": 3}))


def test_near_front_genomes_get_more_seeds_and_the_front_uses_all(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **RESAMPLED), tmp_path / "run")
    s, rows = summary(run), log_json(run)
    by_id = {r["eval_id"]: r for r in rows}
    order = [*s["seeds"], *extra_seeds(load_study(run))]
    assert len(order) == 5 and not set(order) & set(s["recheck"]["seeds"])
    resampled = [r for r in rows if r["supersedes"] is not None]
    assert resampled, "the lucky problem puts genomes near the front"
    for r in resampled:
        old = by_id[r["supersedes"]]
        assert r["kind"] == "search" and r["genome"] == old["genome"] and r["eval_id"] > old["eval_id"]
        assert r["seeds"] == order[:len(r["seeds"])] and len(r["seeds"]) in (4, 5)
        assert r["per_seed"][:len(old["seeds"])] == [dict(p, wall_s=0.0, cached=True) for p in old["per_seed"]]
        assert r["objectives"] == {o: mean_metrics([p["metrics"] for p in r["per_seed"]])[o]
                                   for o in ("energy_kwh", "mean_bsld")}
    # the front: current rows only, each with all five seeds
    current = {r.eval_id for r in current_rows(read_evaluations(run))}
    assert set(s["front"]) <= current and all(len(by_id[i]["seeds"]) == 5 for i in s["front"])
    # simulations: every per-seed result once; copied seeds are not counted again
    simulated = sum(len(r["seeds"]) - (len(by_id[r["supersedes"]]["seeds"]) if r["supersedes"] is not None else 0)
                    for r in rows)
    assert s["n_simulations"] == simulated
    assert s["n_resampled"] == sum(len(r["seeds"]) - len(by_id[r["supersedes"]]["seeds"]) for r in resampled)
    pop = __import__("json").loads((run / "population.json").read_text())
    assert set(pop["eval_ids"]) <= current


def test_resampling_is_identical_with_1_and_2_workers(tmp_path: Path) -> None:
    study = write_study(tmp_path, **RESAMPLED)
    one = run_quiet(study, tmp_path / "w1", workers=1)
    two = run_quiet(study, tmp_path / "w2", workers=2)
    assert stable_rows(one) == stable_rows(two)
    assert (one / "front.csv").read_text() == (two / "front.csv").read_text()
    assert summary(one)["recheck"] == summary(two)["recheck"]


@pytest.mark.parametrize("cut", [40, 75])
def test_a_run_killed_while_resampling_resumes_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       cut: int) -> None:
    kw = dict(RESAMPLED, evaluator="conftest:evaluate_lucky_then_interrupt")
    resumed, whole = kill_and_resume(tmp_path, monkeypatch, cut, **kw)
    assert summary(resumed)["n_resampled"] == summary(whole)["n_resampled"]


def test_the_evaluation_budget_counts_resampling(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **dict(RESAMPLED, budget={"evaluations": 40})), tmp_path / "run")
    s = summary(run)
    spent = s["n_told"] + s["n_resampled"] / 2  # one evaluation = the 2 search seeds
    assert s["stop_reason"] == "evaluations" and s["n_resampled"] > 0 and s["n_told"] < 40
    # checked between generations, and a generation's resampling is never cut: the last one may go over
    last = s["generations"][-1]
    assert spent - last["resampled"] / 2 < 40 <= spent
    # so every front point has all its seeds, also those of the last generation
    rows = {r["eval_id"]: r for r in log_json(run)}
    assert s["front"] and all(len(rows[i]["seeds"]) == 5 for i in s["front"])
    assert any(rows[i]["generation"] == last["generation"] for i in s["front"])


def test_a_budget_of_one_generation_still_resamples_it(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **dict(RESAMPLED, budget={"evaluations": 12})), tmp_path / "run")
    s = summary(run)
    rows = {r["eval_id"]: r for r in log_json(run)}
    assert s["n_told"] == 12 and s["n_resampled"] > 0 and len(s["generations"]) == 1
    assert len(s["front"]) >= 2 and all(len(rows[i]["seeds"]) == 5 for i in s["front"])


def test_resampling_shrinks_the_overfit(tmp_path: Path) -> None:
    """On the lucky problem, the front's mean_bsld moves less on fresh seeds when resampled."""
    base = dict(RESAMPLED, seeds=1, recheck=6, budget={"generations": 6})
    off = run_quiet(write_study(tmp_path, name="off.yaml", **dict(base, resampling=None)), tmp_path / "off")
    on = run_quiet(write_study(tmp_path, name="on.yaml", **dict(base, resampling={"max_seeds": 6})), tmp_path / "on")
    bsld_off = summary(off)["recheck"]["median_rel_change"]["mean_bsld"]
    bsld_on = summary(on)["recheck"]["median_rel_change"]["mean_bsld"]
    assert bsld_on < bsld_off / 1.5
