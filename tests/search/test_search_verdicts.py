"""Verdicts on fresh seeds: the front and every baseline re-run on the same `recheck` seeds, the
dominance verdicts and the overfit figure decided there, and the end-of-run table."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from paretosched.search.summary import Summary, read_summary

import conftest
from conftest import log_json, run_quiet, stable_rows, summary, write_study

LUCKY = "paretosched.search.analytic:evaluate_lucky"
# opt lies on the true front (freq 0.55); fcfs is far from it
BASELINES = {"fcfs": {"scheduler": {"job_policy": "first", "freq": 1.0}},
             "opt": {"scheduler": {"job_policy": "shortest", "backfilling": "easy", "freq": 0.55,
                                   "power_off_idle_s": 100.0, "min_nodes_on": 3}}}
STUDY = dict(evaluator=LUCKY, budget={"generations": 5}, algorithm={"pop_size": 12}, seeds=1, recheck=3,
             baselines=BASELINES, cache=False)


def _dominates(a: dict[str, float], b: dict[str, float]) -> bool:
    """Both objectives minimised: a at least as good everywhere and better somewhere."""
    va, vb = np.array([a["energy_kwh"], a["mean_bsld"]]), np.array([b["energy_kwh"], b["mean_bsld"]])
    return bool(np.all(va <= vb) and np.any(va < vb))


def test_dominated_baselines_are_dominated_on_the_recheck_seeds(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **STUDY), tmp_path / "run")
    s, rows = summary(run), {r["eval_id"]: r for r in log_json(run)}
    rc = s["recheck"]
    assert len(rc["seeds"]) == 3 and not set(rc["seeds"]) & set(s["seeds"])
    # every front point and every baseline has a re-check row on exactly these seeds
    checked = {r["recheck_of"]: r for r in rows.values() if r["kind"] == "recheck"}
    assert set(checked) == set(s["front"]) | {b["eval_id"] for b in s["baselines"].values()}
    assert all(r["seeds"] == rc["seeds"] for r in checked.values())
    assert [p["eval_id"] for p in rc["front"]] == s["front"]
    for p in rc["front"]:
        assert p["objectives"] == checked[p["eval_id"]]["objectives"]
        assert [q["seed"] for q in p["per_seed"]] == rc["seeds"]
        assert p["objectives"]["mean_bsld"] == pytest.approx(np.mean([q["objectives"]["mean_bsld"]
                                                                      for q in p["per_seed"]]))
    recheck_of = {n: checked[b["eval_id"]]["objectives"] for n, b in s["baselines"].items()}
    assert {n: b["objectives"] for n, b in rc["baselines"].items()} == recheck_of
    # the verdicts, recomputed from the log's re-check rows alone
    expected = [n for n, b in recheck_of.items() if any(_dominates(p["objectives"], b) for p in rc["front"])]
    assert rc["dominated_baselines"] == expected and "fcfs" in expected
    for p in rc["front"]:
        assert p["dominated_by_baseline"] == [n for n, b in recheck_of.items() if _dominates(b, p["objectives"])]
    # the overfit figure: median |re-check - search| / |search| over the front
    for o in ("energy_kwh", "mean_bsld"):
        ch = [abs(p["objectives"][o] - rows[p["eval_id"]]["objectives"][o]) / abs(rows[p["eval_id"]]["objectives"][o])
              for p in rc["front"]]
        assert rc["median_rel_change"][o] == pytest.approx(float(np.median(ch)))
    assert rc["median_rel_change"]["energy_kwh"] == 0.0  # the analytic energy has no noise
    se = [p["std"]["mean_bsld"] / np.sqrt(3) / p["objectives"]["mean_bsld"] for p in rc["front"]]
    assert rc["median_rel_stderr"]["mean_bsld"] == pytest.approx(float(np.median(se)))


def test_front_csv_carries_the_recheck_and_the_flags(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **STUDY), tmp_path / "run")
    rc = summary(run)["recheck"]
    lines = list(csv.DictReader(io.StringIO((run / "front.csv").read_text())))
    assert [int(x["eval_id"]) for x in lines] == [p["eval_id"] for p in rc["front"]]
    for line, p in zip(lines, rc["front"]):
        assert float(line["recheck_mean_bsld"]) == p["objectives"]["mean_bsld"]
        assert float(line["recheck_std_mean_bsld"]) == p["std"]["mean_bsld"]
        assert line["dominated_by_baseline"] == ";".join(p["dominated_by_baseline"])
        assert int(line["recheck_eval_id"]) == p["recheck_eval_id"] and int(line["n_seeds"]) == 1


def test_a_run_killed_during_the_recheck_resumes_it_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kw = dict(STUDY, evaluator="conftest:evaluate_lucky_then_interrupt")
    whole = run_quiet(write_study(tmp_path, **kw), tmp_path / "whole")
    n_recheck = sum(len(r["seeds"]) for r in log_json(whole) if r["kind"] == "recheck")
    total = summary(whole)["n_simulations"]
    monkeypatch.setitem(conftest.INTERRUPT_AFTER, "calls", 0)
    monkeypatch.setitem(conftest.INTERRUPT_AFTER, "limit", total - n_recheck // 2)  # half-way through
    with pytest.raises(KeyboardInterrupt):
        run_quiet(write_study(tmp_path, **kw), tmp_path / "cut")
    assert summary(tmp_path / "cut")["status"] == "interrupted"
    assert not [r for r in log_json(tmp_path / "cut") if r["kind"] == "recheck"]
    monkeypatch.setitem(conftest.INTERRUPT_AFTER, "limit", 10**9)
    run_quiet(tmp_path / "cut", tmp_path / "cut", resume=True)
    assert stable_rows(tmp_path / "cut") == stable_rows(whole)
    assert summary(tmp_path / "cut")["recheck"] == summary(whole)["recheck"]
    assert (tmp_path / "cut" / "front.csv").read_text() == (whole / "front.csv").read_text()


def test_the_end_of_run_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from paretosched.analysis.front import pick_balanced
    from paretosched.analysis.rundata import load_run
    from paretosched.cli import main

    study = write_study(tmp_path, **STUDY)
    assert main(["optimise", str(study), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    out = capsys.readouterr().out
    s = summary(tmp_path / "run")
    rc = s["recheck"]
    assert f"fresh seeds: the re-check on 3 seeds {rc['seeds']} the search never used" in out
    assert f"dominated on the re-check seeds: {', '.join(rc['dominated_baselines'])} " in out
    overfit = ", ".join(f"{o} {100 * v:.1f}%" for o, v in rc["median_rel_change"].items()) + " (re-check's"
    assert f"overfit (median |re-check - search| / search over the front): {overfit}" in out
    run = load_run(tmp_path / "run")
    balanced = pick_balanced(run, run.frame.loc[s["front"]]).eval_id
    assert f"picks: balanced = eval {balanced}, knee = eval " in out
    assert f"paretosched explore {tmp_path / 'run'} --open" in out
    assert f"paretosched export {tmp_path / 'run'} --pick balanced -o best.yaml" in out
    # one line per front point and per baseline, the eval id first
    table = out.split("front (search seeds: mean over the genome's own seeds, the number in `seeds`)\n")[1].split("\n\n")[0].splitlines()
    assert [int(line.split()[0]) for line in table[1:]] == s["front"]
    # strict JSON: no NaN or Infinity where a value is missing
    json.loads((tmp_path / "run" / "summary.json").read_text(), parse_constant=lambda c: pytest.fail(c))


def test_no_recheck_gives_the_search_seed_verdict_labelled_as_such(tmp_path: Path) -> None:
    # with recheck: 0 there are no fresh seeds: "no baseline dominated" would be false; the verdict
    # falls back to the search values and says so
    run = run_quiet(write_study(tmp_path, **dict(STUDY, recheck=0)), tmp_path / "run")
    s = summary(run)
    rc = s["recheck"]
    assert rc["seeds"] == [] and rc["verdicts_on"] == "search seeds"
    assert all(p["objectives"] is None for p in rc["front"])
    assert not [r for r in log_json(run) if r["kind"] == "recheck"]
    on_search = [n for n, b in s["baselines"].items() if b["dominated_on_search_seeds"]]
    assert rc["dominated_baselines"] == on_search and "fcfs" in on_search
    lines = list(csv.DictReader(io.StringIO((run / "front.csv").read_text())))  # front.csv says the same
    assert [x["dominated_by_baseline"] for x in lines] == [";".join(p["dominated_by_baseline"]) for p in rc["front"]]
    assert any(x["dominated_by_baseline"] for x in lines)
    from paretosched.search.verdict import summary_table

    assert "dominated on the search seeds: fcfs" in summary_table(Summary.from_json(s, run), str(run))


def test_a_one_seed_recheck_has_no_spread(tmp_path: Path) -> None:
    # the standard deviation of one value is undefined, not 0 (a "+- 0" made noise look absent)
    run = run_quiet(write_study(tmp_path, **dict(STUDY, recheck=1)), tmp_path / "run")
    rc = summary(run)["recheck"]
    assert len(rc["seeds"]) == 1
    assert all(p["std"] is None for p in rc["front"]) and all(b["std"] is None for b in rc["baselines"].values())
    assert rc["median_rel_stderr"] == {"energy_kwh": None, "mean_bsld": None}
    from paretosched.search.verdict import summary_table

    assert "+-" not in summary_table(read_summary(run), str(run))


def test_a_reference_point_below_the_front_is_warned_about(tmp_path: Path) -> None:
    # a reference point no point improves on gave "HV 0" and nothing else
    study = write_study(tmp_path, **dict(STUDY, recheck=0, reference_point={"energy_kwh": 0.001, "mean_bsld": 0.001}))
    run = run_quiet(study, tmp_path / "run")
    s = summary(run)
    assert s["hv"] == 0
    from paretosched.search.verdict import summary_table

    assert "warning: hypervolume 0: no front point is better than the reference point" in summary_table(Summary.from_json(s, run), str(run))


def test_front_points_that_fall_behind_on_the_recheck_are_named(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **STUDY), tmp_path / "run")
    s = summary(run)
    rc = s["recheck"]
    for p in rc["front"]:  # recomputed from the re-check means alone
        assert p["dominated_by_front"] == [q["eval_id"] for q in rc["front"]
                                           if q is not p and _dominates(q["objectives"], p["objectives"])]
    from paretosched.search.verdict import summary_table

    behind = [p for p in rc["front"] if p["dominated_by_front"]]
    assert behind  # this study has one: the check below is exercised
    table = summary_table(Summary.from_json(s, run), str(run))
    assert ("fall behind other front points" in table) == bool(behind)
    for p in behind:
        assert f"{p['eval_id']} (by {', '.join(map(str, p['dominated_by_front']))})" in table


def test_the_table_says_when_results_came_from_the_cache(tmp_path: Path) -> None:
    # a re-run after `rm -rf runs/X` finished in a blink from the hidden cache, without a word
    study = write_study(tmp_path, **dict(STUDY, cache=True))
    from paretosched.search.verdict import summary_table

    first = summary(run_quiet(study, tmp_path / "a"))
    assert "came from the evaluation cache" not in summary_table(Summary.from_json(first, Path("a")), "a")
    again = summary(run_quiet(study, tmp_path / "b"))
    assert again["n_simulations"] == 0
    assert f"{again['n_cache_hits']} of {again['n_cache_hits']} seed results came from the evaluation cache" \
        in summary_table(Summary.from_json(again, Path("b")), "b")
