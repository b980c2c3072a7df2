"""Multi-fidelity screening (search/fidelity.py, `screening: {by: prefix}`): validated, logged
as screen rows, keeps what does best on the prefix, counted in the budget, reproducible, resumable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import kill_and_resume, run_quiet, stable_rows, summary, write_study
from paretosched.errors import UserError
from paretosched.search import pareto
from paretosched.search.fidelity import prefix_config
from paretosched.search.guards import simulations
from paretosched.search.runlog import read_evaluations
from paretosched.search.study import load_study

EIGHT_JOBS = {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0 + k} for k in range(8)]}}
PREFIX = dict(base=EIGHT_JOBS, budget={"evaluations": 80}, algorithm={"pop_size": 10},
              screening={"by": "prefix", "factor": 3, "prefix": 0.5})


def test_prefix_config_cuts_the_window_and_leaves_the_config_alone() -> None:
    cfg = {"workload": {"path": "t.swf", "first_job": 100, "n_jobs": 1000}, "seed": 3}
    assert prefix_config(cfg, 0.25) == {"workload": {"path": "t.swf", "first_job": 100, "n_jobs": 250}, "seed": 3}
    assert prefix_config(cfg, 0.0001)["workload"]["n_jobs"] == 1  # never an empty window
    assert cfg["workload"]["n_jobs"] == 1000
    inline = {"workload": {"jobs": [{"run_s": float(k)} for k in range(8)]}}
    assert [j["run_s"] for j in prefix_config(inline, 0.5)["workload"]["jobs"]] == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(UserError, match="workload.n_jobs"):
        prefix_config({"workload": {"path": "t.swf"}}, 0.5)


def test_prefix_screening_is_validated(tmp_path: Path) -> None:
    spec = load_study(write_study(tmp_path, **PREFIX)).screening
    assert spec is not None and (spec.by, spec.prefix, spec.budget_share) == ("prefix", 0.5, 0.5)
    whole_trace = {"platform": "homogeneous-4", "workload": {"path": "builtin:hpc2n-3k.swf.gz"}}
    with pytest.raises(UserError, match=r"study.yaml: screening.by: prefix .* base.workload.n_jobs"):
        load_study(write_study(tmp_path, base=whole_trace, screening={"by": "prefix"}))
    with pytest.raises(UserError, match=r"study.yaml: screening.*prefix: not a setting of by: forest"):
        load_study(write_study(tmp_path, screening={"prefix": 0.5}))
    with pytest.raises(UserError, match=r"study.yaml: screening.*min_log: not a setting of by: prefix"):
        load_study(write_study(tmp_path, base=EIGHT_JOBS, screening={"by": "prefix", "min_log": 5}))
    with pytest.raises(UserError, match=r"study.yaml: screening.prefix: .*less than 1"):
        load_study(write_study(tmp_path, base=EIGHT_JOBS, screening={"by": "prefix", "prefix": 1.0}))
    with pytest.raises(UserError, match=r"study.yaml: screening.by"):
        load_study(write_study(tmp_path, base=EIGHT_JOBS, screening={"by": "gp"}))
    # the other strategy's keys are refused even at their defaults; a gene may give the window's length
    with pytest.raises(UserError, match=r"study.yaml: screening.*explore, trees: not a setting of by: prefix"):
        load_study(write_study(tmp_path, base=EIGHT_JOBS, screening={"by": "prefix", "explore": 1.0, "trees": 64}))
    genes = {"workload.n_jobs": {"type": "int", "low": 100, "high": 200}, "scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0}}
    assert load_study(write_study(tmp_path, base=whole_trace, search=genes, screening={"by": "prefix"})).screening


def test_a_prefix_screened_run_keeps_the_best_on_the_prefix_within_its_budget(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **PREFIX), tmp_path / "run")
    rows = read_evaluations(run)
    screen = [r for r in rows if r.kind == "screen"]
    search = [r for r in rows if r.kind == "search"]
    assert screen and all(len(r.config["workload"]["jobs"]) == 4 and r.generation >= 1 for r in screen)
    assert all(len(r.config["workload"]["jobs"]) == 8 for r in search)
    # the budget: 80 evaluations = genomes told + each screen run as half an evaluation
    assert len(search) + 0.5 * len(screen) == 80
    # the cost line said (before the run) as many simulations as it ran, or more
    said, _ = simulations(load_study(run / "study.yaml"))
    assert said is not None and len(search) + len(screen) <= said <= len(search) + len(screen) + 30
    for gen in sorted({r.generation for r in screen}):
        cand = [r for r in screen if r.generation == gen]
        kept = {repr(r.genome) for r in search if r.generation == gen}
        assert kept and kept <= {repr(r.genome) for r in cand}
        rank = pareto.ranks(np.array([[r.objectives[o] for o in ("energy_kwh", "mean_bsld")] for r in cand]))
        in_kept = np.array([repr(r.genome) in kept for r in cand])
        assert rank[in_kept].max() <= rank[~in_kept].min()  # no unkept candidate ranks better than a kept one
        # told best first: by front (then crowding), so a budget that takes fewer keeps the best
        by_genome = {repr(r.genome): k for r, k in zip(cand, rank)}
        told = [by_genome[repr(r.genome)] for r in sorted(search, key=lambda r: r.eval_id) if r.generation == gen]
        assert told == sorted(told)
    # generation 0 is never screened; the front is drawn from full-window rows only
    assert not any(r.generation == 0 for r in screen)
    front_ids = {int(line.split(",")[0]) for line in (run / "front.csv").read_text().splitlines()[1:]}
    assert front_ids and front_ids <= {r.eval_id for r in search}


def test_a_prefix_screened_run_repeats_itself(tmp_path: Path) -> None:
    study = write_study(tmp_path, name="s.yaml", **PREFIX)
    assert stable_rows(run_quiet(study, tmp_path / "w1", workers=1)) == \
        stable_rows(run_quiet(study, tmp_path / "w2", workers=2))


@pytest.mark.parametrize("cut", [25, 45, 60])
def test_a_prefix_screened_run_killed_anywhere_resumes_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               cut: int) -> None:
    # 10 calls in generation 0, then 30 screening and 10 full per generation: inside generation 1's
    # screening (nothing screened logged yet), inside its full runs (screen rows replayed), and
    # inside generation 2's screening (the checkpoint must carry n_screened)
    resumed, whole = kill_and_resume(tmp_path, monkeypatch, cut,
                                     **dict(PREFIX, evaluator="conftest:evaluate_then_interrupt", cache=False))
    assert summary(resumed)["n_screened"] == summary(whole)["n_screened"] > 0


@pytest.mark.parametrize("budget", [12, 47, 70])
def test_screening_fits_the_evaluations_budget(tmp_path: Path, budget: int) -> None:
    run = run_quiet(write_study(tmp_path, **dict(PREFIX, budget={"evaluations": budget})), tmp_path / "run")
    rows = read_evaluations(run)
    spent = sum(r.kind == "search" for r in rows) + 0.5 * sum(r.kind == "screen" for r in rows)
    assert budget <= spent <= budget + 1  # the last evaluation may go unscreened, as without screening
    s = summary(run)
    assert s["n_told"] + 0.5 * s["n_screened"] == spent
    said, _ = simulations(load_study(run / "study.yaml"))
    assert said is not None and len(rows) <= said


def test_failed_screening_runs_are_said_and_all_failing_is_an_error(tmp_path: Path) -> None:
    import contextlib
    import io

    from paretosched.search.optimise import optimise

    study = write_study(tmp_path, **dict(PREFIX, evaluator="conftest:evaluate_prefix_fails", cache=False))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = optimise(str(study), out=str(tmp_path / "run"))
    rows = read_evaluations(run)
    failed = [r for r in rows if r.kind == "screen" and r.status == "failed"]
    assert failed and all(r.genome["scheduler.job_policy"] == "random" for r in failed)
    assert "screening run(s) failed and were not kept (the first: ValueError: prefix too short)" in err.getvalue()
    assert not any(r.kind == "search" and r.generation > 0 and r.genome["scheduler.job_policy"] == "random"
                   and any(f.genome == r.genome and f.generation == r.generation for f in failed) for r in rows)
    one_job = {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0}]}}
    study = write_study(tmp_path, name="one.yaml", **dict(PREFIX, base=one_job, evaluator="conftest:evaluate_prefix_fails"))
    with pytest.raises(UserError, match="screening: every candidate of generation 1 failed on the first 50% of the jobs"):
        run_quiet(study, tmp_path / "one")


def test_screen_rows_are_never_current_in_the_api(tmp_path: Path) -> None:
    import paretosched as ps

    run = ps.load_run(run_quiet(write_study(tmp_path, **PREFIX), tmp_path / "run"))
    ev = run.evaluations
    assert (ev["kind"] == "screen").any() and not ev.loc[ev["kind"] == "screen", "current"].any()
    ok = ev[(ev["status"] == "ok") & ev["current"] & (ev["kind"] == "search")]
    F = ok[["energy_kwh", "mean_bsld"]].to_numpy()
    assert sorted(ok["eval_id"].to_numpy()[pareto.front_indices(F)]) == sorted(run.front["eval_id"])


def test_an_rl_prefix_keeps_the_training_windows_of_the_whole_window() -> None:
    from paretosched.config import config_from_dict
    from paretosched.sim.rl.training import training_spans

    cfg = {"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "first_job": 2400, "n_jobs": 600},
           "scheduler": {"kind": "rl", "train_window_count": 3}}
    cut = prefix_config(cfg, 0.25)
    assert cut["workload"]["n_jobs"] == 150
    assert training_spans(config_from_dict(cut)) == training_spans(config_from_dict(cfg)) == \
        [(600, 600), (1200, 600), (1800, 600)]
