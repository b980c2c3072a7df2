"""The pick `minimal:P`: fewest changed parameters keeping P% of the best re-checked saving."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from paretosched.analysis.front import choose
from paretosched.analysis.minimal import changed_parameters
from paretosched.analysis.rundata import load_run
from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.runs import load_run as load_api_run
from tests.analysis.synth import Point, recheck_block, write_run

# eval id -> (genome, re-checked (energy_kwh, mean_bsld)); the baseline `current` is BASE's
# scheduler (freq 1.0, power_off_idle_s None, min_nodes_on 0, job_policy first) at (100, 10)
FRONT = {
    0: ({"scheduler.freq": 0.8, "scheduler.power_off_idle_s": 100.0, "scheduler.min_nodes_on": 2,
         "scheduler.job_policy": "smallest"}, (70.0, 9.0)),  # 4 changes, 30% (the best at no worse bsld)
    1: ({"scheduler.power_off_idle_s": 100.0}, (75.0, 10.0)),  # 1 change, 25%
    2: ({"scheduler.freq": 0.6, "scheduler.power_off_idle_s": 50.0}, (60.0, 12.0)),  # 40% but slower: out
    3: ({"scheduler.power_off_idle_s": 300.0, "scheduler.min_nodes_on": 1}, (72.0, 9.5)),  # 2 changes, 28%
    4: ({"scheduler.freq": 0.9}, (74.5, 10.0)),  # 1 change, 25.5%: beats eval 1 on the tie
}
BASE_VALUES = (100.0, 10.0)


def _run(tmp_path: Path, front=FRONT, baselines=None, recheck=True, name="run") -> Path:
    baselines = baselines or {"current": BASE_VALUES}
    pts = [Point(vals, genome=g) for g, vals in front.values()]
    pts += [Point(v, kind="baseline", name=n) for n, v in baselines.items()]
    extra = {"recheck": recheck_block({i: v for i, (_, v) in front.items()}, baselines, [])} if recheck else {}
    return write_run(tmp_path / name, pts, summary_extra=extra)


@pytest.mark.parametrize("pick, eval_id, changed", [("minimal:100", 0, 4), ("minimal:90", 3, 2), ("minimal:80", 4, 1),
                                                     ("minimal:50", 4, 1), ("minimal:93.3", 3, 2),
                                                     ("minimal:93.4", 0, 4)])  # 28% is 93.33% of 30%
def test_minimal_keeps_p_percent_of_the_best_saving_with_the_fewest_changes(tmp_path, pick, eval_id, changed):
    run = load_run(_run(tmp_path))
    chosen = choose(run, pick)
    assert chosen.eval_id == eval_id and chosen.name == pick
    assert chosen.note.startswith(f"{changed} changed parameter(s) vs baseline current")
    assert "of the best 30.00% (eval 0)" in chosen.note
    base = next(r for r in run.rows.values() if r.kind == "baseline").config
    assert len(changed_parameters(run.rows[eval_id].config, base)) == changed


def test_minimal_through_the_cli_and_the_api(tmp_path, capsys):
    d = _run(tmp_path)
    out = tmp_path / "m.yaml"
    assert main(["export", str(d), "--pick", "minimal:80", "-o", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc["provenance"]["pick"] == "minimal:80" and doc["provenance"]["eval_id"] == 4
    assert doc["scheduler"]["freq"] == 0.9
    assert load_api_run(d).pick("minimal:90").eval_id == 3


def test_the_reference_baseline_is_named_or_current_or_the_only_one(tmp_path):
    two = {"fcfs": (200.0, 20.0), "current": BASE_VALUES}
    assert choose(load_run(_run(tmp_path, baselines=two, name="a")), "minimal:80").eval_id == 4
    # against fcfs (200 kWh, bsld 20) every point qualifies, eval 2 saves the most (70%)
    assert choose(load_run(_run(tmp_path, baselines=two, name="b")), "minimal:100@fcfs").eval_id == 2
    with pytest.raises(UserError, match=r"^pick 'minimal:80': the run has baselines fcfs, easy: name the one "
                                        r"savings are measured against, e.g. minimal:80@fcfs$"):
        choose(load_run(_run(tmp_path, baselines={"fcfs": (200.0, 20.0), "easy": BASE_VALUES}, name="c")), "minimal:80")


@pytest.mark.parametrize("pick, message", [
    ("minimal:0", r"pick 'minimal:0': P must be in \(0, 100\] \(the share of the best re-checked saving to keep\), got 0"),
    ("minimal:100.5", r"P must be in \(0, 100\]"),
    ("minimal:-5", r"P must be in \(0, 100\]"),
    ("minimal:nan", r"P must be in \(0, 100\]"),
    ("minimal:lots", r"pick 'minimal:lots': expected minimal:P with P a percentage in \(0, 100\], e.g. minimal:90"),
    ("minimal:80@nobody", r"pick 'minimal:80@nobody': no baseline named 'nobody' \(baselines: current\)"),
])
def test_bad_percentages_exit_2_with_one_line(tmp_path, capsys, pick, message):
    d = _run(tmp_path)
    assert main(["export", str(d), "--pick", pick, "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err), err
    assert not (tmp_path / "x.yaml").exists()


def test_no_point_qualifies_says_the_best_saving(tmp_path, capsys):
    # the baseline uses 65 kWh: only eval 2 (60 kWh) saves energy, and it is slower
    d = _run(tmp_path, baselines={"current": (65.0, 10.0)})
    assert main(["export", str(d), "--pick", "minimal:50", "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err]
    assert err.endswith("pick 'minimal:50': no re-checked front point saves energy_kwh vs baseline 'current': "
                        "the best saving at no worse mean_bsld is -7.69% (eval 0); at any mean_bsld: 7.69% (eval 2)")


def test_a_run_without_a_recheck_is_a_one_line_error(tmp_path, capsys):
    d = _run(tmp_path, recheck=False)
    assert main(["export", str(d), "--pick", "minimal:90", "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "pick 'minimal:90': the run has no re-check on fresh seeds" in err


def test_changed_parameters_counts_config_leaves():
    a = {"scheduler": {"freq": 1.0, "boot_s": None, "freq_by_type": {}}, "seed": 0, "provenance": {"x": 1}}
    b = {"scheduler": {"freq": 0.8, "boot_s": None, "freq_by_type": {"t": 0.5}}, "seed": 0}
    assert changed_parameters(a, b) == ["scheduler.freq", "scheduler.freq_by_type.t"]
