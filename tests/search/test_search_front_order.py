"""One front, one order, one reference point for search, analysis, export and the API
(search/pareto.py), also when the first objective is maximised."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import numpy as np
import yaml
from conftest import log_json, run_quiet, write_study

import paretosched as ps
from paretosched.analysis.front import front_of, reference_point
from paretosched.analysis.rundata import load_run
from paretosched.cli import main

MAXIMISED_FIRST = dict(objectives=[{"max": "utilisation"}, "mean_bsld"], reference_point=None,
                       algorithm={"pop_size": 12}, budget={"generations": 4})


def _front_csv_ids(run: Path) -> list[int]:
    with open(run / "front.csv", newline="") as f:
        return [int(r["eval_id"]) for r in csv.DictReader(f)]


def test_a_maximised_first_objective_orders_every_front_alike(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **MAXIMISED_FIRST), tmp_path / "run")
    ids = _front_csv_ids(run)
    assert len(ids) >= 3
    rows = {r["eval_id"]: r for r in log_json(run)}
    util = [rows[i]["objectives"]["utilisation"] for i in ids]
    assert util == sorted(util, reverse=True)  # best (highest) first, as the pick index counts
    assert front_of(load_run(run))["eval_id"].tolist() == ids
    assert ps.load_run(run).front["eval_id"].tolist() == ids

    out = tmp_path / "index0.yaml"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["export", str(run), "--pick", "index:0", "-o", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc.pop("provenance")["eval_id"] == ids[0]
    assert doc == {k: v for k, v in rows[ids[0]]["config"].items() if k != "provenance"}


def test_analysis_recomputes_the_searchs_reference_point(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **MAXIMISED_FIRST), tmp_path / "run")
    summary = json.loads((run / "summary.json").read_text())
    recorded = summary.pop("reference_point")
    assert summary["reference_point_source"] == "generation 0"
    (run / "summary.json").write_text(json.dumps(summary))  # as a run whose summary predates the field
    signs = np.array([-1.0, 1.0])
    assert reference_point(load_run(run)).tolist() == (signs * [recorded["utilisation"], recorded["mean_bsld"]]).tolist()
