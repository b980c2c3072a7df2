"""Defect 11 of issue 18: names written by users reached plotly as markup (a baseline named
with a `style=` attribute drew a 90 px label). Plotly decodes &lt; &gt; &amp;, so the escaped
name shows literally."""

from __future__ import annotations

import json
import re

import pandas as pd
import yaml

from paretosched.analysis import figures, runplots
from paretosched.search.analytic import study_dict
from tests.adv import run_cli

NAME = '<span style="font-size:90px">fcfs</span> & co'
ESCAPED = '&lt;span style="font-size:90px"&gt;fcfs&lt;/span&gt; &amp; co'


def test_progress_figure_escapes_baseline_names():
    pts = pd.DataFrame({"energy_kwh": [1.0, 2.0], "mean_bsld": [2.0, 1.0], "generation": [0, 0], "eval_id": [0, 1]})
    base = pd.DataFrame({"energy_kwh": [1.5], "mean_bsld": [1.5], "name": [NAME], "eval_id": [2]})
    fig = figures.progress(pts, pts, base, "energy_kwh", "mean_bsld")
    texts = [t for tr in fig.data if tr.text is not None for t in tr.text]
    assert texts == [ESCAPED]


def test_run_plots_escape_processor_type_names(tmp_path):
    from paretosched.sim.readers.platform import load_platform

    (tmp_path / "p.yaml").write_text(yaml.safe_dump({
        "name": "p", "processor_types": {"<b>big</b>": {"cores": 2, "clock_ghz": 1.0, "flops_per_cycle": 4, "power_w": 80}},
        "node_types": {"n": {"processors": {"<b>big</b>": 1}}}, "clusters": [{"name": "c", "nodes": {"n": 1}}]}))
    platform = load_platform(str(tmp_path / "p.yaml"))
    jobs = [{"job_id": 1, "core_ids": "0 1", "start_s": 0.0, "end_s": 5.0}]
    fig, _ = runplots.gantt(platform, jobs)
    labels = [a.text for a in fig.layout.annotations]
    assert labels == ["&lt;b&gt;big&lt;/b&gt;"]


def test_explorer_labels_baselines_with_escaped_names(tmp_path):
    data = study_dict(budget={"generations": 1}, algorithm={"pop_size": 4},
                      baselines={NAME: {"scheduler": {"job_policy": "first"}}})
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    rc, out, err = run_cli(["optimise", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "run"), "--quiet"])
    assert rc == 0, err
    rc, out, err = run_cli(["explore", str(tmp_path / "run"), "--out", str(tmp_path / "x.html")])
    assert rc == 0, err
    page = (tmp_path / "x.html").read_text()
    assert 'name: "baseline " + PTS[i].label' in page  # the legend shows the escaped label
    blob = re.search(r'id="explorer-data">(.*?)</script>', page, re.S)
    assert blob is not None
    pts = json.loads(blob.group(1))["points"]
    base = [p for p in pts if p["kind"] == "baseline"]
    assert [p["label"] for p in base] == [ESCAPED] and [p["name"] for p in base] == [NAME]
