"""The Python API (paretosched.api, paretosched.runs) and `paretosched runs table`."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import paretosched as ps
from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.search.runlog import read_evaluations


def log_json(run_dir: Path) -> list[dict]:
    return [r.to_json() for r in read_evaluations(run_dir)]

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"
GYM_HEADING = "## A Gymnasium environment"

CONFIG: dict[str, Any] = {
    "platform": "gaia-mini",
    "workload": {"path": "builtin:hpc2n-3k.swf.gz", "mode": "hdeeprm", "n_jobs": 100},
    "scheduler": {"kind": "classic", "job_policy": "shortest", "resource_policy": "high_gflops", "backfilling": "easy"},
}
STUDY: dict[str, Any] = {
    "name": "tiny",
    "base": CONFIG,
    "search": {"scheduler.job_policy": {"type": "choice", "values": ["first", "shortest", "smallest"]},
               "scheduler.power_off_idle_s": {"type": "choice", "values": [None, 60, 600]},
               "scheduler.freq": {"type": "float", "low": 0.55, "high": 1.0}},
    "seeds": 2, "seed": 1, "budget": {"generations": 2}, "algorithm": {"pop_size": 4},
    "parallel": {"workers": 1}, "recheck": 1, "resampling": {},  # resampled rows: the `supersedes` tests below
    "baselines": {"fcfs": {"scheduler": {"job_policy": "first", "backfilling": "none"}}},
}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def quiet_optimise(study: Any, out: Path, **kw: Any) -> ps.Run:
    with contextlib.redirect_stderr(io.StringIO()):
        return ps.optimise(study, out=out, quiet=True, **kw)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ps.Run:
    return quiet_optimise(STUDY, tmp_path_factory.mktemp("api") / "tiny")


# ---------------------------------------------------------------------------------------------
# the documented example

def test_docs_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = DOCS.read_text(encoding="utf-8").split(GYM_HEADING)[0]
    blocks = python_blocks(text)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    ns: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for block in blocks:
            exec(compile(block, str(DOCS), "exec"), ns)  # noqa: S102 - our own documentation
    run = ns["run"]
    assert len(run.evaluations) == len(read_evaluations(tmp_path / "runs" / "tiny"))
    assert ns["replay"].metrics["mean_bsld"] == ns["best"]["provenance"]["objectives"]["mean_bsld"]


# ---------------------------------------------------------------------------------------------
# Run

def test_evaluations_one_row_per_logged_evaluation(run: ps.Run) -> None:
    rows = log_json(run.path)
    ev = run.evaluations
    assert ev["eval_id"].tolist() == [r["eval_id"] for r in rows]
    assert ev["kind"].tolist() == [r["kind"] for r in rows]
    assert set(ev["kind"]) == {"baseline", "search", "recheck"}
    assert ev["seeds"].tolist() == [r["seeds"] for r in rows]
    for (_, e), r in zip(ev.iterrows(), rows):
        for gene, value in r["genome"].items():
            assert e[gene] == value or (value is None and pd.isna(e[gene]))
        for o in run.objectives:
            assert e[o] == r["objectives"][o]  # bit for bit: read from the JSON log, no arithmetic
    # resampling (on in this study) logs a genome again on more seeds: the earlier row is superseded
    later = ev[ev["supersedes"].notna()]
    assert len(later) > 0 and later["current"].any()
    assert not ev.set_index("eval_id").loc[later["supersedes"].astype(int).tolist(), "current"].any()
    assert ev["current"].sum() == len(ev) - ev["supersedes"].notna().sum()
    assert list(ev.columns[:6]) == ["eval_id", "kind", "generation", "name", "status", "recheck_of"]
    assert list(ev.columns[6:11]) == [*STUDY["search"], "energy_kwh", "mean_bsld"]


def test_front_equals_front_csv_and_the_analysis_front(run: ps.Run) -> None:
    from paretosched.analysis.front import front_of

    with open(run.path / "front.csv", newline="") as fh:
        csv_rows = list(csv.DictReader(fh))
    front = run.front
    assert list(front.columns) == list(csv_rows[0])
    assert front["eval_id"].tolist() == [int(r["eval_id"]) for r in csv_rows]
    for col in ["generation", *run.objectives, *(f"recheck_{o}" for o in run.objectives)]:
        assert front[col].tolist() == [float(r[col]) for r in csv_rows], col  # bit for bit
    assert front["recheck_eval_id"].tolist() == [int(r["recheck_eval_id"]) for r in csv_rows]
    assert front["scheduler.job_policy"].tolist() == [r["scheduler.job_policy"] for r in csv_rows]
    # the picks rank analysis' front: the same points, in the same order
    assert front_of(run.data)["eval_id"].tolist() == front["eval_id"].tolist()
    ev = run.evaluations.set_index("eval_id")
    assert ev.loc[front["eval_id"].tolist(), "current"].all()
    for o in run.objectives:
        assert ev.loc[front["eval_id"].tolist(), o].tolist() == front[o].tolist()


def test_per_seed_means_are_the_logged_objectives(run: ps.Run) -> None:
    ps_rows = run.per_seed
    rows = log_json(run.path)
    assert len(ps_rows) == sum(len(r["seeds"]) for r in rows)
    for r in rows:
        mine = ps_rows[ps_rows["eval_id"] == r["eval_id"]]
        assert mine["seed"].tolist() == r["seeds"]
        n = len(r["seeds"])
        for o in run.objectives:  # mean_metrics' rule: summed in seed order, divided once
            assert sum(mine[o].tolist()) / n == r["objectives"][o]


def test_baselines_recheck_and_picks(run: ps.Run) -> None:
    summary = json.loads((run.path / "summary.json").read_text())
    b = run.baselines
    assert b["name"].tolist() == ["fcfs"]
    assert int(b["eval_id"].iloc[0]) == summary["baselines"]["fcfs"]["eval_id"]
    # the verdict is the re-check's (issue 13); the search seeds' is kept beside it, named so
    assert bool(b["dominated"].iloc[0]) == ("fcfs" in summary["recheck"]["dominated_baselines"])
    assert b["judged_on"].tolist() == ["recheck seeds"]
    assert bool(b["dominated_on_search_seeds"].iloc[0]) == summary["baselines"]["fcfs"]["dominated_on_search_seeds"]
    rc = run.recheck
    assert rc.seeds == summary["recheck"]["seeds"] and len(rc.seeds) == 1
    assert rc.dominated_baselines == summary["recheck"]["dominated_baselines"]
    searched = rc.table[rc.table["kind"] == "search"]
    assert searched["eval_id"].tolist() == run.front["eval_id"].tolist()
    assert searched["recheck_energy_kwh"].tolist() == run.front["recheck_energy_kwh"].tolist()
    assert rc.table.loc[rc.table["kind"] == "baseline", "name"].tolist() == ["fcfs"]
    picks = run.picks
    assert picks.index.tolist() == ["min:energy_kwh", "min:mean_bsld", "balanced", "knee"]
    assert set(picks["eval_id"]) <= set(run.front["eval_id"])
    best = run.front.loc[run.front["energy_kwh"].idxmin(), "eval_id"]
    assert picks.at["min:energy_kwh", "eval_id"] == best


def test_recheck_reads_the_new_summary_shape_and_tolerates_junk(run: ps.Run, tmp_path: Path) -> None:
    summary = json.loads((run.path / "summary.json").read_text())
    for block, seeds, dominated in (
            ({"seeds": [7], "front": [{"eval_id": 1, "objectives": {}}], "baselines": {"fcfs": {"objectives": {}}},
              "dominated_baselines": ["fcfs"]}, [7], ["fcfs"]),
            ("not a mapping", run.recheck.seeds, None)):
        copy_dir = tmp_path / f"copy{len(seeds)}{dominated is None}"
        copy_dir.mkdir()
        for f in ("evaluations.jsonl", "study.yaml", "front.csv"):
            (copy_dir / f).write_bytes((run.path / f).read_bytes())
        (copy_dir / "summary.json").write_text(json.dumps({**summary, "recheck": block, "baselines": "junk"}))
        other = ps.load_run(copy_dir)
        assert other.recheck.seeds == seeds
        assert other.recheck.dominated_baselines == dominated
        assert other.baselines["dominated_on_search_seeds"].isna().all()  # "junk" says nothing
        assert other.baselines["dominated"].tolist() == ([True] if dominated else [pd.NA])
        assert other.baselines["judged_on"].tolist() == (["recheck seeds"] if dominated else [pd.NA])


def test_baselines_carry_the_recheck_verdict_and_label_a_search_seed_one(tmp_path: Path) -> None:
    from tests.analysis.synth import Point, recheck_block, write_run

    pts = [Point((1.0, 5.0)), Point((2.0, 3.0)), Point((3.0, 4.0), kind="baseline", name="fcfs"),
           Point((9.0, 9.0), kind="baseline", name="slow")]
    said = {"baselines": {"fcfs": {"dominated": True}, "slow": {"dominated": True}}}
    # on the search seeds eval 1 dominates fcfs; on the re-check seeds it does not
    block = recheck_block({0: (1.0, 5.0), 1: (2.5, 3.5)}, {"fcfs": (2.2, 3.0), "slow": (9.0, 9.0)},
                          dominated=["slow"])
    b = ps.load_run(write_run(tmp_path / "rc", pts, summary_extra={**said, "recheck": block})).baselines
    assert b["dominated"].tolist() == [False, True] and b["dominated_on_search_seeds"].tolist() == [True, True]
    assert ps.load_run(tmp_path / "rc").recheck.dominated_baselines == ["slow"]
    # `recheck: 0`: the search writes an empty verdict on no seeds, which is no "not dominated"
    empty = {"seeds": [], "front": [], "baselines": {"fcfs": {"objectives": {}}}, "dominated_baselines": []}
    run = ps.load_run(write_run(tmp_path / "none", pts, summary_extra={**said, "recheck": empty}))
    assert run.recheck.dominated_baselines is None
    assert run.baselines["dominated"].tolist() == [True, True]
    assert run.baselines["judged_on"].tolist() == ["search seeds", "search seeds"]


def test_export_equals_the_cli_export_and_replays(run: ps.Run, tmp_path: Path) -> None:
    for pick in ("balanced", "knee", "index:0", "min:mean_bsld"):
        out = tmp_path / f"{pick.replace(':', '_')}.yaml"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["export", str(run.path), "--pick", pick, "-o", str(out)]) == 0
        assert run.export(pick) == yaml.safe_load(out.read_text())
    doc = run.export("balanced", path=tmp_path / "b.yaml")
    assert yaml.safe_load((tmp_path / "b.yaml").read_text()) == doc
    replay = ps.simulate(doc)
    assert replay.seeds == doc["provenance"]["seeds"]
    assert {o: replay.metrics[o] for o in run.objectives} == doc["provenance"]["objectives"]


def test_export_a_baseline(run: ps.Run) -> None:
    doc = run.export("baseline:fcfs")
    b = run.baselines
    assert doc["provenance"]["eval_id"] == int(b["eval_id"].iloc[0])
    assert doc["scheduler"]["job_policy"] == "first" and doc["scheduler"]["backfilling"] == "none"
    assert ps.simulate(doc).metrics["energy_kwh"] == float(b["energy_kwh"].iloc[0])
    with pytest.raises(UserError, match="no baseline named 'sjf'.*baselines: fcfs"):
        run.export("baseline:sjf")


def test_load_run_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="run directory not found"):
        ps.load_run(tmp_path / "nope")
    with pytest.raises(UserError, match="no evaluations.jsonl"):
        ps.load_run(tmp_path)
    for line in ('[1, 2]', '{"kind": "search"}', '{"eval_id": "0"}', '{"eval_id": 1, "genome": [1]}'):  # no evaluation row
        (tmp_path / "evaluations.jsonl").write_text('{"eval_id": 0}\n' + line + "\n")
        with pytest.raises(UserError, match=r"evaluations.jsonl:2: not an evaluation"):
            ps.load_run(tmp_path)


# ---------------------------------------------------------------------------------------------
# simulate and optimise

def test_simulate_accepts_dict_path_and_config(tmp_path: Path) -> None:
    from paretosched.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    a = ps.simulate(CONFIG, seeds=[3, 4], jobs=True)
    b = ps.simulate(path, seeds=[3, 4])
    c = ps.simulate(load_config(path), seeds=[3, 4])
    assert a.metrics == b.metrics == c.metrics
    assert a.per_seed["seed"].tolist() == [3, 4]
    assert a.metrics["energy_kwh"] == (a.per_seed["energy_kwh"][0] + a.per_seed["energy_kwh"][1]) / 2
    assert b.jobs is None and len(a.jobs) == 2 * 100
    assert a.jobs.groupby("seed")["energy_j"].count().tolist() == [100, 100]
    assert ps.simulate(CONFIG).seeds == [0]  # the config's seed
    assert ps.simulate(CONFIG, seeds=[4]).metrics == a.per_seed.iloc[1].drop("seed").to_dict()


def test_simulate_a_number_of_seeds_is_a_studys_seeds() -> None:
    from paretosched.api import _resolved_study

    # `seeds: 2` in a study is two seeds derived from the study seed, never "seed 2"
    for seed in (0, 5):
        sim = ps.simulate({**CONFIG, "seed": seed}, seeds=2)
        study = _resolved_study({**STUDY, "seeds": 2, "seed": seed})
        assert sim.seeds == study.seeds and len(set(sim.seeds)) == 2 and 2 not in sim.seeds
        assert sim.per_seed["seed"].tolist() == sim.seeds
    assert ps.simulate(CONFIG, seeds=[2]).seeds == [2]  # a list is the seeds themselves


def test_simulate_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="<config dict>: scheduler.job_policy"):
        ps.simulate({**CONFIG, "scheduler": {"kind": "classic", "job_policy": "longest"}})
    with pytest.raises(UserError, match=r"seeds\[0\]: input should be greater than or equal to 0"):
        ps.simulate(CONFIG, seeds=[-1])
    with pytest.raises(UserError, match="seeds: seeds must be >= 1"):
        ps.simulate(CONFIG, seeds=0)
    for bad in (True, "3"):
        with pytest.raises(UserError, match="seeds: expected None, a number of seeds or a list of distinct seeds"):
            ps.simulate(CONFIG, seeds=bad)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="expected a dict, a file path or a SimConfig"):
        ps.simulate(42)  # type: ignore[arg-type]


def test_optimise_dict_study_file_and_study_give_the_same_log(run: ps.Run, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from paretosched.search.study import Study

    def stable(r: ps.Run) -> list[dict[str, Any]]:
        return [{k: v for k, v in row.items() if k not in ("wall_s", "per_seed")} for row in log_json(r.path)]

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(STUDY, sort_keys=False))
    from_file = quiet_optimise(path, tmp_path / "f")
    from_model = quiet_optimise(Study.model_validate(copy.deepcopy(STUDY)), tmp_path / "m")
    assert stable(from_file) == stable(run) == stable(from_model)
    resumed = quiet_optimise(STUDY, tmp_path / "f", resume=True)  # a finished run: only read
    assert resumed.evaluations.equals(from_file.evaluations)


def test_optimise_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"<study dict>: budget"):
        ps.optimise({k: v for k, v in STUDY.items() if k != "budget"}, out=tmp_path / "x")
    with pytest.raises(UserError, match=r"<study>: objectives.0: unknown metric 'energy'"):
        ps.optimise({**STUDY, "objectives": ["energy", "mean_bsld"]}, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_import_stays_light() -> None:
    code = ("import sys, paretosched as ps; heavy = [m for m in ('pandas', 'pymoo', 'sklearn', 'plotly') "
            "if m in sys.modules]; print(heavy, callable(ps.load_run), 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True True"
    assert {"simulate", "optimise", "load_run", "Run"} <= set(dir(ps))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ps.nope  # noqa: B018


def test_gym_without_the_extra_says_what_to_install() -> None:
    code = "import sys; sys.modules['gymnasium'] = None; import paretosched.gym"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == ("ImportError: paretosched.gym needs gymnasium: "
                                                     "pip install 'paretosched[gym]'")


# ---------------------------------------------------------------------------------------------
# paretosched runs table

def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_runs_table_csv_and_parquet(run: ps.Run, tmp_path: Path) -> None:
    rc, out, _ = cli("runs", "table", str(run.path), "-o", str(tmp_path / "e.csv"))
    assert rc == 0 and out.strip() == f"table: {tmp_path / 'e.csv'}"
    back = pd.read_csv(tmp_path / "e.csv")
    assert back["eval_id"].tolist() == run.evaluations["eval_id"].tolist()
    assert back["energy_kwh"].tolist() == run.evaluations["energy_kwh"].tolist()
    assert [json.loads(s) for s in back["seeds"]] == run.evaluations["seeds"].tolist()
    pytest.importorskip("pyarrow")
    assert cli("runs", "table", str(run.path), "-o", str(tmp_path / "e.parquet"))[0] == 0
    pq = pd.read_parquet(tmp_path / "e.parquet")
    assert pq["eval_id"].tolist() == run.evaluations["eval_id"].tolist()
    assert pq["scheduler.power_off_idle_s"].equals(run.evaluations["scheduler.power_off_idle_s"])
    assert [list(s) for s in pq["seeds"]] == run.evaluations["seeds"].tolist()
    assert cli("runs", "table", str(run.path), "-o", str(tmp_path / "s.parquet"), "--per-seed")[0] == 0
    assert len(pd.read_parquet(tmp_path / "s.parquet")) == len(run.per_seed)


def test_runs_table_mixed_choice_values_go_to_parquet(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from paretosched.runs import _arrow_safe

    frame = pd.DataFrame({"g": [None, 60, "x", True], "seeds": [[1], [2], [3], [4]]})
    with pytest.raises(Exception):
        frame.to_parquet(tmp_path / "raw.parquet")
    _arrow_safe(frame).to_parquet(tmp_path / "ok.parquet")
    assert pd.read_parquet(tmp_path / "ok.parquet")["g"].tolist()[1:] == ["60", "x", "True"]


def test_runs_table_errors(run: ps.Run, tmp_path: Path) -> None:
    rc, _, err = cli("runs", "table", str(run.path), "-o", str(tmp_path / "e.xlsx"))
    assert rc == 2 and err == f"paretosched: error: --output {tmp_path / 'e.xlsx'}: unknown table format '.xlsx' (expected .csv or .parquet)\n"
    rc, _, err = cli("runs", "table", str(tmp_path / "missing"), "-o", str(tmp_path / "e.csv"))
    assert rc == 2 and err == f"paretosched: error: {tmp_path / 'missing'}: run directory not found\n"
    assert not (tmp_path / "e.csv").exists()
    (tmp_path / "e.csv").write_text("keep me")
    rc, _, err = cli("runs", "table", str(run.path), "-o", str(tmp_path / "e.csv"))
    assert rc == 2 and "exists; add --force" in err and err.count("\n") == 1
    assert (tmp_path / "e.csv").read_text() == "keep me"
    assert cli("runs", "table", str(run.path), "-o", str(tmp_path / "e.csv"), "--force")[0] == 0
    assert (tmp_path / "e.csv").read_text().startswith("eval_id,kind,")
    rc, _, err = cli("runs", "table", str(run.path), "-o", str(tmp_path / "e.csv" / "x.csv"))
    assert rc == 2 and err == f"paretosched: error: --output {tmp_path / 'e.csv' / 'x.csv'}: {tmp_path / 'e.csv'} is a file, not a folder\n"
    assert cli("runs", "table", str(run.path), "-o", str(tmp_path / "new" / "e.csv"))[0] == 0
    assert (tmp_path / "new" / "e.csv").is_file()


# ---------------------------------------------------------------------------------------------
# optimise --dask without the dask extra

def test_dask_without_the_extra_is_one_line_and_leaves_no_run_dir(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # what `import` sees when it is absent
    monkeypatch.setitem(sys.modules, "distributed", None)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(STUDY, sort_keys=False))
    rc, _, err = cli("optimise", str(path), "--out", str(tmp_path / "run"), "--dask", "tcp://127.0.0.1:1")
    assert rc == 2 and "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("paretosched: error:")]
    assert errors == ["paretosched: error: the dask backend needs dask.distributed: pip install "
                      "'paretosched[dask]' (or evaluate here with --local)"]
    assert not (tmp_path / "run").exists()
