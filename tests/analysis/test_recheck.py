"""Re-check values (summary.json's block, or the log rows of older runs) in the report and the explorer."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from paretosched.analysis import figures
from paretosched.analysis.escape import plotly_text
from paretosched.analysis.explorer import explorer_data
from paretosched.analysis.figures import wants_log
from paretosched.analysis.front import front_of, near_front, standard_picks
from paretosched.analysis.recheck import load_recheck
from paretosched.analysis.report import analyse
from paretosched.analysis.rundata import load_run
from paretosched.analysis.units import metric_title
from tests.analysis.synth import Point, default_genome, recheck_block, write_run

EVIL = "<b style='color:red'>evil</b>"


def _run(tmp: Path, block: bool = True) -> Path:
    pts = [Point((1.0, 5.0)), Point((2.0, 3.0)), Point((4.0, 1.0)), Point((5.0, 5.0)),
           Point((3.0, 4.0), kind="baseline", name="fcfs"), Point((6.0, 6.0), kind="baseline", name=EVIL)]
    extra = {"recheck": recheck_block({0: (3.5, 6.0), 1: (2.1, 3.5), 2: (4.4, 1.1)},
                                      {"fcfs": (3.1, 4.2), EVIL: (6.0, 6.0)}, dominated=[EVIL],
                                      median={"energy_kwh": 0.05, "mean_bsld": 0.125}, dominated_by={0: ["fcfs"]})}
    if not block:  # an older run: re-check rows in the log, ids in the summary, no baselines re-checked
        pts += [Point((1.1, 5.5), kind="recheck", recheck_of=0), Point((2.2, 2.9), kind="recheck", recheck_of=1)]
        extra = {"recheck": {"seeds": [7, 8], "eval_ids": {"0": 6, "1": 7}}}
    return write_run(tmp / "run", pts, summary_extra=extra)


def test_new_block_is_read_with_spread_and_verdicts(tmp_path: Path) -> None:
    rc = load_recheck(load_run(_run(tmp_path)))
    assert rc.seeds == [101, 202] and rc.judged
    assert sorted(rc.front) == [0, 1, 2]
    assert rc.front[0].value("energy_kwh") == 3.5
    assert rc.front[0].spread("mean_bsld") == pytest.approx((5.4, 6.6))  # 6 * (1 -+ 0.1)
    assert rc.front[0].dominated_by == ("fcfs",) and rc.front[1].dominated_by == ()
    assert rc.baselines[EVIL].value("mean_bsld") == 6.0
    assert rc.dominated_baselines == [EVIL]
    assert rc.median_rel_change == {"energy_kwh": 0.05, "mean_bsld": 0.125}


def test_older_runs_read_the_recheck_rows_and_are_not_judged(tmp_path: Path) -> None:
    rc = load_recheck(load_run(_run(tmp_path, block=False)))
    assert rc.seeds == [7, 8] and not rc.judged and rc.baselines == {} and rc.median_rel_change == {}
    assert sorted(rc.front) == [0, 1]
    # synth per-seed values are mean * (0.99, 1.00, 1.01); the logged mean is their mean
    assert rc.front[0].value("energy_kwh") == pytest.approx(1.1)
    assert rc.front[0].spread("energy_kwh") == pytest.approx((1.1 * 0.99, 1.1 * 1.01))
    assert rc.front[0].value("makespan_s") == 106.0  # every logged metric, not only objectives


def test_no_recheck_at_all_is_empty(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "run", [Point((1.0, 2.0)), Point((2.0, 1.0))]))
    rc = load_recheck(run)
    assert (rc.seeds, rc.front, rc.baselines, rc.dominated_baselines) == ([], {}, {}, None)


def test_report_summary_table_at_the_top(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    page = (analyse(str(run_dir)) / "report.html").read_text()
    assert EVIL not in page and html.escape(EVIL) in page  # user names escaped everywhere
    summary = page[page.index("<h2>Summary</h2>"):page.index("<h2>Notes</h2>")]
    assert page.index("<h2>Summary</h2>") < page.index("Progress towards the front")
    # the front row of eval 0: search values, re-check with its per-seed range, the baseline verdict
    row0 = summary[summary.index("<tr><td>0</td>"):].split("</tr>")[0]
    assert "<td>1</td>" in row0 and "3.5 <small>(3.15–3.85)</small>" in row0 and "dominated by fcfs" in row0
    assert "Re-check seeds: 101, 202" in summary
    assert f"on the re-check seeds (101, 202): <b>{html.escape(EVIL)}</b>." in summary
    assert "energy_kwh 5.0%, mean_bsld 12.5%" in summary
    assert "The front's mean_bsld moved more than 10% on fresh seeds" in summary
    assert "Pick <b>balanced</b>: eval 1" in summary
    assert f"paretosched explore {run_dir.resolve()} --open" in summary
    assert f"paretosched export {run_dir.resolve()} --pick balanced -o best.yaml" in summary
    assert "energy (kWh)<br>search" in summary


def test_report_of_an_older_run_warns_that_baselines_were_not_rechecked(tmp_path: Path) -> None:
    page = (analyse(str(_run(tmp_path, block=False))) / "report.html").read_text()
    assert "did not re-simulate its baselines on fresh seeds" in page
    assert "not recorded by this run" in page  # no overfit figure
    row2 = page[page.index("<tr><td>2</td>"):].split("</tr>")[0]
    assert row2.endswith("<td>1</td><td>–</td><td>–</td>")  # eval 2 was not re-checked: no verdict either


def test_explorer_data_carries_rechecks_picks_units_and_log_defaults(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    data = explorer_data(load_run(run_dir))
    by_id = {p["id"]: p for p in data["points"]}
    assert by_id[0]["rc"]["m"]["energy_kwh"] == 3.5
    assert by_id[0]["rc"]["lo"]["mean_bsld"] == pytest.approx(5.4)
    assert by_id[0]["rc"]["dominated_by"] == ["fcfs"]
    assert by_id[3]["rc"] is None  # off the front: no re-check
    evil = next(p for p in data["points"] if p["name"] == EVIL)
    assert evil["label"] == plotly_text(EVIL) and evil["rc"]["m"]["energy_kwh"] == 6.0
    assert {p["name"] for p in data["picks"]} == {"balanced", "knee"}
    assert data["titles"]["energy_kwh"] == "energy (kWh)" and data["titles"]["mean_bsld"] == "mean bounded slowdown (-)"
    assert data["log"] == {m: False for m in data["metrics"]}  # nothing spans 30x here


def test_log_axis_rule() -> None:
    assert wants_log([1.0, 31.0]) and not wants_log([1.0, 29.0])
    assert not wants_log([0.0, 100.0]) and not wants_log([-1.0, 100.0]) and not wants_log([])
    assert wants_log([2.0, None, 100.0])


@pytest.mark.parametrize("metric, title", [
    ("energy_kwh", "energy (kWh)"), ("mean_bsld", "mean bounded slowdown (-)"), ("makespan_s", "makespan (s)"),
    ("mean_bsld_observed", "mean bounded slowdown, observed run (-)"), ("utilisation", "utilisation (0-1)"),
    ("p95_wait_s", "95th percentile wait (s)"), ("mean_power_w", "mean power (W)"), ("n_jobs", "number of jobs (-)"),
])
def test_metric_titles_carry_units(metric: str, title: str) -> None:
    assert metric_title(metric) == title


def test_near_front_takes_whole_layers_and_distinct_genomes(tmp_path: Path) -> None:
    g = default_genome(100)
    # layer 0: ids 0-2; layer 1: ids 3-4; id 5 repeats id 2's genome (a cache hit); layer 2: id 6
    pts = [Point((1.0, 3.0)), Point((2.0, 2.0)), Point((3.0, 1.0), genome=g), Point((2.0, 3.0)), Point((3.0, 2.0)),
           Point((3.0, 1.0), genome=g), Point((9.0, 9.0))]
    run = load_run(write_run(tmp_path / "run", pts))
    rows, k = near_front(run, 2)
    assert k == 2 and rows["eval_id"].tolist() == [0, 1, 2, 3, 4]
    rows, k = near_front(run)  # fewer than 40 distinct genomes: every layer
    assert k == 3 and rows["eval_id"].tolist() == [0, 1, 2, 3, 4, 6]


def test_report_progress_figure_has_rechecks_flags_picks_and_literal_baseline_names(tmp_path: Path) -> None:
    run = load_run(_run(tmp_path))
    front = front_of(run)
    base = run.frame[run.frame["kind"] == "baseline"]
    fig = figures.progress(run.search_ok(), front, base, "energy_kwh", "mean_bsld", load_recheck(run),
                           standard_picks(run, front))
    by_name = {t.name: t for t in fig.data if t.name}
    rc = by_name["re-check (fresh seeds; bars: per-seed range)"]
    assert list(rc.x) == [3.5, 2.1, 4.4] and list(rc.error_y.array) == pytest.approx([0.6, 0.35, 0.11])
    assert list(by_name["re-check dominated by a baseline"].x) == [3.5]
    assert "balanced and knee pick (eval 1)" in by_name
    label = plotly_text(EVIL)
    assert f"baseline {label}" in by_name and f"baseline {label}, re-check" in by_name
    assert not any(EVIL in str(t.name) + str(t.text) for t in fig.data)
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("energy (kWh)", "mean bounded slowdown (-)")
    assert fig.layout.yaxis.type == "linear"


def test_report_axis_is_log_with_readable_ticks_when_values_span_30x() -> None:
    ax = figures.axis("mean_bsld", [2.0, 40.0, 900.0, float("nan")])
    assert ax["type"] == "log" and ax["title"] == "mean bounded slowdown (-)"
    assert ax["ticktext"][:4] == ["1", "2", "5", "10"] and ax["ticktext"][-1] == "5000"


def test_a_baseline_rechecked_in_the_log_shows_without_a_verdict(tmp_path: Path) -> None:
    pts = [Point((1.0, 2.0)), Point((2.0, 1.0)), Point((3.0, 3.0), kind="baseline", name="fcfs"),
           Point((3.3, 2.7), kind="recheck", recheck_of=2)]
    rc = load_recheck(load_run(write_run(tmp_path / "run", pts, summary_extra={"recheck": {"seeds": [5]}})))
    assert rc.front == {} and not rc.judged
    assert rc.baselines["fcfs"].value("mean_bsld") == pytest.approx(2.7)


def test_reads_the_block_the_search_layer_writes(tmp_path: Path) -> None:
    import json

    from paretosched.search.verdict import recheck_block as search_block

    pts = [Point((1.0, 5.0)), Point((4.0, 1.0)), Point((3.0, 4.0), kind="baseline", name=EVIL),
           Point((1.2, 6.0), kind="recheck", recheck_of=0), Point((4.1, 1.1), kind="recheck", recheck_of=1),
           Point((1.1, 3.0), kind="recheck", recheck_of=2)]
    run_dir = write_run(tmp_path / "run", pts)
    run = load_run(run_dir)
    block = search_block(run.rows, run.objectives, run.signs, [101, 202], [0, 1], {EVIL: 2}, {0: 3, 1: 4, 2: 5})
    summary = json.loads((run_dir / "summary.json").read_text())
    (run_dir / "summary.json").write_text(json.dumps({**summary, "recheck": block.to_json()}))
    rc = load_recheck(load_run(run_dir))
    assert rc.judged and rc.dominated_baselines == []
    assert rc.front[0].value("energy_kwh") == pytest.approx(1.2)
    assert rc.front[0].dominated_by == (EVIL,)  # (1.1, 3.0) dominates (1.2, 6.0)
    assert rc.front[1].spread("mean_bsld") == pytest.approx((1.1 * 0.99, 1.1 * 1.01))
    assert rc.baselines[EVIL].value("mean_bsld") == pytest.approx(3.0)
    # median over the front of |re-check - search| / search: energy (0.2, 0.025), slowdown (0.2, 0.1)
    assert rc.median_rel_change == pytest.approx({"energy_kwh": 0.1125, "mean_bsld": 0.15})


def test_a_failed_recheck_seed_is_skipped(tmp_path: Path) -> None:
    per_seed = [{"seed": 1, "status": "failed", "objectives": None},
                {"seed": 2, "status": "ok", "objectives": {"energy_kwh": 2.0, "mean_bsld": 3.0}}]
    block = {"seeds": [1, 2], "front": [{"eval_id": 0, "objectives": {"energy_kwh": 2.0, "mean_bsld": 3.0},
                                         "per_seed": per_seed}], "baselines": {}, "dominated_baselines": []}
    run_dir = write_run(tmp_path / "run", [Point((1.0, 2.0))], summary_extra={"recheck": block})
    c = load_recheck(load_run(run_dir)).front[0]
    assert c.per_seed == [{"energy_kwh": 2.0, "mean_bsld": 3.0}]
    assert c.spread("energy_kwh") is None  # one seed left: the spread is undefined, not zero


def test_report_without_a_recheck_shows_the_search_seed_verdict_labelled(tmp_path: Path) -> None:
    # `recheck: 0`: the search writes an empty block whose empty verdict is no verdict at all
    pts = [Point((1.0, 5.0)), Point((2.0, 3.0)), Point((3.0, 4.0), kind="baseline", name="fcfs")]
    extra = {"baselines": {"fcfs": {"dominated": True}},
             "recheck": {"seeds": [], "front": [], "baselines": {"fcfs": {"objectives": {}}},
                         "dominated_baselines": []}}
    run_dir = write_run(tmp_path / "run", pts, summary_extra=extra)
    assert not load_recheck(load_run(run_dir)).judged
    page = (analyse(str(run_dir)) / "report.html").read_text()
    summary = page[page.index("<h2>Summary</h2>"):page.index("<h2>Notes</h2>")]
    assert "on the re-check seeds" not in summary
    verdict = "Baselines dominated by a front point on the <b>search seeds</b>: <b>fcfs</b>. This run has no re-check"
    assert verdict in summary and "yes <small>(search seeds only)</small>" in summary
    assert "Re-check seeds: none (the run has no re-check)" in summary


def test_a_one_seed_recheck_has_no_spread_anywhere(tmp_path: Path) -> None:
    block = recheck_block({0: (3.5, 6.0), 1: (2.1, 3.5)}, {"fcfs": (3.1, 4.2)}, dominated=[])
    for entry in [*block["front"], *block["baselines"].values()]:
        entry["per_seed"] = entry["per_seed"][:1]
    block["seeds"] = [101]
    pts = [Point((1.0, 5.0)), Point((2.0, 3.0)), Point((3.0, 4.0), kind="baseline", name="fcfs")]
    run_dir = write_run(tmp_path / "run", pts, summary_extra={"recheck": block})
    run = load_run(run_dir)
    rc = load_recheck(run)
    assert rc.front[0].spread("energy_kwh") is None and rc.front[0].value("energy_kwh") == 3.5
    summary = (analyse(str(run_dir)) / "report.html").read_text()
    summary = summary[summary.index("<h2>Summary</h2>"):summary.index("<h2>Notes</h2>")]
    assert "3.5 <small>(range n/a: one seed)</small>" in summary and "3.5–3.5" not in summary
    data = explorer_data(run)
    point = next(p for p in data["points"] if p["id"] == 0)
    assert point["rc"]["n"] == 1 and point["rc"]["lo"]["energy_kwh"] is None
    assert "(101), no bars (one seed: its per-seed range is undefined)" in data["caption"]
    fig = figures.progress(run.search_ok(), front_of(run), run.frame[run.frame["kind"] == "baseline"],
                           "energy_kwh", "mean_bsld", rc)
    checked = next(t for t in fig.data if t.name and t.name.startswith("re-check ("))
    assert checked.name == "re-check (one fresh seed: spread n/a)" and checked.error_x.array is None
