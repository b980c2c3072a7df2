"""Issue 31, item 1: the front a user reads is measured on seeds the search never used.

Asserted from the log alone: every re-check row's seeds are disjoint from every seed a search,
baseline or screening row ran (resampling's extra seeds included), and the re-check values that
summary.json, front.csv and `Run.front` report are the means of those rows' per-seed values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paretosched.runs import load_run

from conftest import log_json, run_quiet, summary, write_study

NOISY = "paretosched.search.analytic:evaluate_noisy"
BASELINES = {"fcfs": {"scheduler": {"job_policy": "first", "freq": 1.0}}}


@pytest.mark.parametrize("resampling", [None, {"max_seeds": 4, "step": 1}], ids=["default", "resampling"])
def test_the_reported_front_comes_from_seeds_no_search_used(tmp_path: Path, resampling: dict | None) -> None:
    extra = {} if resampling is None else {"resampling": resampling}
    study = write_study(tmp_path, evaluator=NOISY, budget={"generations": 4}, algorithm={"pop_size": 10},
                        seeds=2, recheck=3, baselines=BASELINES, **extra)
    run = run_quiet(study, tmp_path / "run")
    rows = {r["eval_id"]: r for r in log_json(run)}
    searched = {s for r in rows.values() if r["kind"] != "recheck" for s in r["seeds"]}
    rechecks = [r for r in rows.values() if r["kind"] == "recheck"]
    s = summary(run)
    assert rechecks and {r["recheck_of"] for r in rechecks} == {*s["front"], s["baselines"]["fcfs"]["eval_id"]}
    if resampling:
        assert max(len(r["seeds"]) for r in rows.values() if r["kind"] == "search") == 4  # extra seeds were run
    for r in rechecks:
        assert not set(r["seeds"]) & searched, "a re-check seed was also a search seed"
    by_front = {r["recheck_of"]: r for r in rechecks}
    names = ["energy_kwh", "mean_bsld"]
    reported = {p["eval_id"]: p["objectives"] for p in s["recheck"]["front"]}
    table = load_run(run).front.set_index("eval_id")
    for eid in s["front"]:
        r = by_front[eid]
        for o in names:
            mean = float(np.mean([p["metrics"][o] for p in r["per_seed"]]))
            assert reported[eid][o] == pytest.approx(mean, rel=1e-12)
            assert table.loc[eid, f"recheck_{o}"] == pytest.approx(mean, rel=1e-12)
