"""analyse(): tables with the right content, one self-contained report, notes for degenerate runs."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from paretosched.analysis.report import analyse
from paretosched.analysis.rundata import load_run
from paretosched.errors import UserError
from tests.analysis.synth import Point, default_genome, write_run


def _three_segment_run(tmp: Path) -> Path:
    """A front in three well-separated segments; energy driven by freq in the middle segment."""
    pts: list[Point] = []
    rng = np.random.default_rng(0)
    for seg, (x0, y0) in enumerate([(0.0, 10.0), (5.0, 5.0), (10.0, 0.0)]):
        for k in range(12):
            g = default_genome(len(pts))
            g["scheduler.freq"] = float(rng.uniform(0.5, 1.0))
            t = k / 11 * 0.8
            # on the front: energy rises while slowdown falls, inside each segment
            pts.append(Point((x0 + t + 0.01 * g["scheduler.freq"], y0 + 0.8 - t), genome=g, generation=seg))
    pts += [Point((20.0, 20.0), generation=3) for _ in range(4)]  # dominated
    pts += [Point((1.0, 1.0), status="failed", generation=3), Point((8.0, 8.0), kind="baseline", name="fcfs")]
    return write_run(tmp / "run", pts)


def test_report_tables_and_html(tmp_path: Path) -> None:
    out = analyse(str(_three_segment_run(tmp_path)), on="front")
    assert out == tmp_path / "run" / "analysis"
    front = pd.read_csv(out / "front.csv")
    assert len(front) == 36 and front["index"].tolist() == list(range(36))
    assert front["energy_kwh"].is_monotonic_increasing
    picks = pd.read_csv(out / "picks.csv").set_index("pick")
    assert picks.loc["min:energy_kwh", "eval_id"] == front["eval_id"].iloc[0]
    assert picks.loc["min:mean_bsld", "eval_id"] == front["eval_id"].iloc[-1]
    marked = front.set_index("eval_id")["picks"].fillna("")
    assert "balanced" in marked[picks.loc["balanced", "eval_id"]]
    clusters = pd.read_csv(out / "clusters.csv")
    assert sorted(clusters.groupby("cluster").size().tolist()) == [12, 12, 12]
    lasso = pd.read_csv(out / "lasso.csv")
    assert set(lasso["cluster"]) == set(clusters["cluster"])
    assert set(lasso["objective"]) == {"energy_kwh", "mean_bsld"}

    page = (out / "report.html").read_text()
    # the library is loaded from the folder (shared with other pages there), nothing from the network
    assert "plotly.js v" not in page and (out / "plotly.min.js").is_file()
    assert re.findall(r"<script src=\"([^\"]*)\"", page) == ["plotly.min.js"]
    for title in ("Progress towards the front", "Hypervolume convergence", "Clusters of the Pareto front",
                  "What drives energy_kwh", "Numeric genes in the final population", "scheduler.job_policy per cluster"):
        assert title in page
    assert "1 failed search evaluation(s)" in page


def test_population_clustering_and_options(tmp_path: Path) -> None:
    run_dir = _three_segment_run(tmp_path)
    out = analyse(str(run_dir), out=str(tmp_path / "elsewhere"), on="population", eps=0.05, min_samples=3)
    clusters = pd.read_csv(out / "clusters.csv")
    # synth population = the last 20 search evaluations, one of which failed and is left out
    assert clusters["eval_id"].tolist() == list(range(21, 40))
    assert "eps 0.05," in (out / "report.html").read_text()
    with pytest.raises(UserError, match="on must be one of 'near', 'front', 'population'"):
        analyse(str(run_dir), on="everything")
    with pytest.raises(UserError, match="--layers applies to --on near only"):
        analyse(str(run_dir), on="front", layers=2)
    with pytest.raises(UserError, match="layers must be >= 1"):
        analyse(str(run_dir), layers=0)
    with pytest.raises(UserError, match="eps must be > 0"):
        analyse(str(run_dir), eps=0.0)


@pytest.mark.parametrize("case, note, on", [
    ("one", "the front has a single point", "near"),
    ("identical", "all points have identical objectives", "front"),
    ("identical", "1 point(s): too few to cluster", "near"),  # one distinct genome
    ("pair", "too few points (3; need >= 10 to fit and cross-validate)", "near"),
])
def test_degenerate_runs_give_notes_not_tracebacks(tmp_path: Path, case: str, note: str, on: str) -> None:
    if case == "one":
        pts = [Point((1.0, 1.0)), Point((2.0, 2.0)), Point((3.0, 3.0))]
    elif case == "identical":
        pts = [Point((2.0, 3.0), genome=default_genome(0)) for _ in range(6)]
    else:  # a front of two points: a "cluster of 2"
        pts = [Point((1.0, 2.0)), Point((2.0, 1.0)), Point((3.0, 3.0))]
    out = analyse(str(write_run(tmp_path / "run", pts)), on=on)
    notes = (out / "notes.txt").read_text()
    assert note in notes
    assert html.escape(note) in (out / "report.html").read_text()
    assert (out / "lasso.csv").exists() and (out / "picks.csv").exists()


def test_user_mistakes(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="run directory not found"):
        analyse(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no evaluations.jsonl"):
        analyse(str(tmp_path / "empty"))
    failed = write_run(tmp_path / "failed", [Point((1.0, 1.0), status="failed")] * 2)
    with pytest.raises(UserError, match="no successful search evaluations"):
        analyse(str(failed))


def test_torn_last_line_is_dropped(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "run", [Point((1.0, 2.0)), Point((2.0, 1.0))], torn_tail=True))
    assert run.frame["eval_id"].tolist() == [0, 1]
    # a damaged line in the middle is an error, not silently skipped
    log = tmp_path / "run" / "evaluations.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join([lines[0], "{broken", lines[1]]) + "\n")
    with pytest.raises(UserError, match="evaluations.jsonl:2: corrupt log line"):
        load_run(tmp_path / "run")


def test_three_points_give_the_too_few_sentence_in_place_of_the_driver_chart(tmp_path: Path) -> None:
    pts = [Point((1.0, 3.0)), Point((2.0, 2.0)), Point((3.0, 1.0))]
    page = (analyse(str(write_run(tmp_path / "run", pts))) / "report.html").read_text()
    for obj in ("energy_kwh", "mean_bsld"):
        assert f"What drives {obj}" in page
        assert f"Lasso coefficients for {obj}" not in page  # the chart's title
        assert (f"No driver chart for {obj}: cluster 0: too few points (3; need &gt;= 10 to fit and "
                "cross-validate). To get one: run more generations") in page


def _planted_run(tmp: Path, n: int = 60) -> Path:
    """Energy set by freq alone (+ small noise), slowdown by power_off_idle_s (log): a trade-off cloud."""
    rng = np.random.default_rng(5)
    pts = []
    for i in range(n):
        g = default_genome(i)
        g["scheduler.freq"] = float(rng.uniform(0.5, 1.0))
        g["scheduler.power_off_idle_s"] = float(np.exp(rng.uniform(0.0, np.log(1000.0))))
        energy = 100.0 * g["scheduler.freq"] + rng.normal(0, 0.5)
        bsld = 2.0 + 0.5 * np.log(g["scheduler.power_off_idle_s"]) + 3.0 * (1.0 - g["scheduler.freq"])
        pts.append(Point((energy, bsld), genome=g, generation=i // 10))
    return write_run(tmp / "run", pts)


def test_near_front_set_finds_a_planted_driver_out_of_sample(tmp_path: Path) -> None:
    out = analyse(str(_planted_run(tmp_path)), min_samples=2, eps=10.0)  # one cluster: test the fit, not DBSCAN
    n = len(pd.read_csv(out / "clusters.csv"))
    assert 40 <= n < 60  # whole layers until >= 40 points, not the whole log
    assert f"{n} distinct successful search evaluations in the first" in (out / "notes.txt").read_text()
    lasso = pd.read_csv(out / "lasso.csv")
    energy = lasso[lasso["objective"] == "energy_kwh"].set_index("feature")
    assert energy["n"].iloc[0] == n and energy["method"].iloc[0] == "LassoCV"
    assert energy["r2_cv"].iloc[0] > 0.95 and bool(energy["useful"].iloc[0])
    coef = energy["coef"].abs()
    assert coef.idxmax() == "scheduler.freq"
    # freq's 1-99 scaled step is (1.0 - 0.5) / 99: 100 kWh per unit of freq -> ~0.505 kWh per scaled unit
    assert energy.loc["scheduler.freq", "coef"] == pytest.approx(0.505, rel=0.05)
    page = (out / "report.html").read_text()
    assert "Lasso coefficients for energy_kwh" in page and "No driver chart for energy_kwh" not in page
