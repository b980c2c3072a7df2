"""Regression tests of issue 18 (search and command side): each failed before its fix.

Defects 1 (the cache ignored the evaluator; arbitrary evaluators), 6 (RL weights files),
7 (tracebacks: NaN reference point, cache_dir a file, --seed -1, unwritable outputs, a corrupt
log line on --resume, a full disk), 8 (no upper bounds), 9 (study names '.' and '..').
"""

from __future__ import annotations

import errno
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from paretosched.search.analytic import study_dict
from paretosched.search.cache import Cache, cache_key
from paretosched.search.evaluate import Engine

ALLOW_ENV = "PARETOSCHED_EVALUATORS"
from tests.adv import assert_user_error, run_cli, strict_json

QUICK = {"budget": {"generations": 2}, "algorithm": {"pop_size": 4}}


def _study(tmp_path: Path, name: str = "s.yaml", **overrides) -> Path:
    data = study_dict(**{**QUICK, **overrides})
    tmp_path.mkdir(parents=True, exist_ok=True)
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def _run(tmp_path: Path, **overrides) -> Path:
    study = _study(tmp_path, **overrides)
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run"), "--quiet"])
    assert rc == 0, err
    return tmp_path / "run"


# --- defect 1: the evaluator decides the result, so it is part of the cache key -------------

def test_cache_key_covers_the_evaluator():
    cfg = {"platform": "homogeneous-2", "workload": {"jobs": [{"run_s": 1.0}]}}
    twin = cache_key(cfg, 1, {"trace": None, "platform": None})
    analytic = cache_key(cfg, 1, {"trace": None, "platform": None}, "paretosched.search.analytic:evaluate")
    assert twin != analytic
    assert twin == cache_key(cfg, 1, {"trace": None, "platform": None}, None)  # twin entries stay valid


def test_a_changed_evaluator_is_not_served_the_previous_numbers(tmp_path):
    cfg = study_dict()["base"] | {"scheduler": {"freq": 0.55, "power_off_idle_s": 100.0, "min_nodes_on": 3,
                                                "job_policy": "shortest", "backfilling": "easy"}}
    cache = Cache(tmp_path / "cache")
    with Engine("paretosched.search.analytic:evaluate", cache=cache) as e:
        first = e.evaluate([(cfg, 7)])[0]
    with Engine("paretosched.search.analytic:evaluate_noisy", cache=cache) as e:
        second = e.evaluate([(cfg, 7)])[0]
    assert not first.cached and not second.cached
    assert first.metrics != second.metrics  # the noisy evaluator adds seeded noise
    with Engine("paretosched.search.analytic:evaluate", cache=cache) as e:
        again = e.evaluate([(cfg, 7)])[0]
    assert again.cached and again.metrics == first.metrics


def test_same_study_name_with_another_evaluator_recomputes(tmp_path):
    cache = str(tmp_path / "shared-cache")
    run_a = _run(tmp_path / "a", cache_dir=cache)
    run_b = _run(tmp_path / "b", cache_dir=cache, evaluator="paretosched.search.analytic:evaluate_noisy")
    rows = [json.loads(line) for line in (run_b / "evaluations.jsonl").read_text().splitlines()]
    assert rows and not any(s["cached"] for r in rows for s in r["per_seed"])
    rows_a = [json.loads(line) for line in (run_a / "evaluations.jsonl").read_text().splitlines()]
    assert rows_a[0]["genome"] == rows[0]["genome"] and rows_a[0]["objectives"] != rows[0]["objectives"]


@pytest.mark.parametrize("ref", ["os:system", "subprocess:call", "builtins:eval", "paretosched.cli:main"])
def test_a_study_cannot_name_an_arbitrary_callable(tmp_path, monkeypatch, ref):
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    study = _study(tmp_path, evaluator=ref)
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run")])
    assert_user_error(rc, err, f"s.yaml: evaluator: {ref!r} is not a known evaluator", ALLOW_ENV)
    assert not (tmp_path / "run").exists()


def test_the_user_may_allow_an_evaluator_in_the_environment(monkeypatch):
    from paretosched.search.guards import evaluator_allowed

    monkeypatch.delenv(ALLOW_ENV, raising=False)
    assert evaluator_allowed("paretosched.search.twin:evaluate")
    assert evaluator_allowed("paretosched.search.analytic:evaluate")
    assert not evaluator_allowed("mylab.sim:run")
    monkeypatch.setenv(ALLOW_ENV, "mylab.sim:run, other:*")
    assert evaluator_allowed("mylab.sim:run") and evaluator_allowed("other:anything")
    assert not evaluator_allowed("mylab.sim:other")


# --- defect 6: RL weights files --------------------------------------------------------------

def _rl_config(tmp_path: Path, weights: Path) -> Path:
    p = tmp_path / "rl.yaml"
    p.write_text(f"platform: homogeneous-4\nworkload: {{jobs: [{{run_s: 5}}, {{run_s: 7, submit_s: 1}}]}}\n"
                 f"scheduler: {{kind: rl, weights: {weights}}}\n")
    return p


def _write_npz(path: Path, **arrays) -> None:
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


@pytest.mark.parametrize("make,expected", [
    (lambda p: p.write_bytes(np.random.default_rng(0).bytes(4096)), "not a weights file saved by"),
    (lambda p: (_write_npz(p, a=np.zeros(1000)), p.write_bytes(p.read_bytes()[:300])), "not a weights file saved by"),
    (lambda p: _write_npz(p, a=np.zeros(3)), "no readable 'meta' entry"),
    (lambda p: _write_npz(p, meta=np.array("{not json")), "no readable 'meta' entry"),
    (lambda p: np.save(open(p, "wb"), np.zeros(3)), "not a weights file saved by"),
    (lambda p: zipfile.ZipFile(p, "w").close(), "no readable 'meta' entry"),
])
def test_bad_weights_files_are_one_line_errors(tmp_path, make, expected):
    weights = tmp_path / "w.npz"
    make(weights)
    rc, out, err = run_cli(["simulate", str(_rl_config(tmp_path, weights))])
    assert_user_error(rc, err, "scheduler.weights:", "w.npz", expected)


def test_weights_with_missing_layers_are_one_line_errors(tmp_path):
    cfg = _rl_config(tmp_path, tmp_path / "w.npz")
    rc, out, err = run_cli(["train", str(cfg), "--out", str(tmp_path / "good.npz"), "--quiet"])
    assert rc == 0, err
    with np.load(tmp_path / "good.npz") as data:
        arrays = {k: data[k] for k in data.files}
    _write_npz(tmp_path / "w.npz", meta=arrays["meta"])  # the right meta, no layers
    rc, out, err = run_cli(["simulate", str(cfg)])
    assert_user_error(rc, err, "scheduler.weights:", "does not match the configured network")
    arrays["actor_0"] = np.full_like(arrays["actor_0"], np.nan)
    _write_npz(tmp_path / "w.npz", **arrays)
    rc, out, err = run_cli(["simulate", str(cfg)])
    assert_user_error(rc, err, "array 'actor_0' is not finite numbers")


# --- defect 7: tracebacks --------------------------------------------------------------------

def test_nan_reference_point_is_refused(tmp_path):
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump(study_dict(**QUICK)).replace("energy_kwh: 1.1", "energy_kwh: .nan"))
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run")])
    assert_user_error(rc, err, "s.yaml: reference_point.energy_kwh: Input should be a finite number")


def test_cache_dir_that_is_a_file_is_refused_before_evaluating(tmp_path):
    (tmp_path / "afile").write_text("x")
    study = _study(tmp_path, cache_dir=str(tmp_path / "afile"))
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run"), "--quiet"])
    assert_user_error(rc, err.split("\n", 1)[1], "cache_dir:", "afile", "is a file, not a folder")
    assert not (tmp_path / "run" / "evaluations.jsonl").exists()


@pytest.mark.parametrize("argv", [["simulate", "x.yaml", "--seed", "-1"], ["train", "x.yaml", "--seed", "-5"],
                                  ["simulate", "x.yaml", "--seeds", "1,-2"], ["optimise"],
                                  ["analyse", "r", "--eps", "nan"], ["analyse", "r", "--eps", "inf"],
                                  ["analyse", "r", "--min-samples", "0"], ["optimise", "s.yaml", "--workers", "100000"]])
def test_bad_arguments_are_one_line(argv):
    rc, out, err = run_cli(argv)
    assert_user_error(rc, err, "error:", "--help")


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("run")
    return _run(tmp, baselines={"fcfs": {"scheduler": {"job_policy": "first"}}})


@pytest.mark.parametrize("argv,expected", [
    (["export", "RUN", "-o", "AFILE/best.yaml"], "afile is a file, not a folder"),
    (["analyse", "RUN", "--out", "AFILE"], "is a file, expected a folder"),
    (["analyse", "RUN", "--out", "AFILE/sub"], "afile is a file, not a folder"),
    (["explore", "RUN", "--out", "AFILE/x.html"], "afile is a file, not a folder"),
    (["export", "RUN", "-o", "AFILE/sub/deeper.yaml"], "afile is a file, not a folder"),
])
def test_unwritable_outputs_are_one_line_errors(small_run, tmp_path, argv, expected):
    (tmp_path / "afile").write_text("x")
    subst = {"RUN": str(small_run), "AFILE": str(tmp_path / "afile"), "TMP": str(tmp_path)}
    argv = [next((a.replace(k, v) for k, v in subst.items() if k in a), a) for a in argv]
    before = sorted(p.name for p in tmp_path.iterdir())
    rc, out, err = run_cli(argv)
    assert_user_error(rc, err, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


@pytest.mark.parametrize("out", ["/proc/x.csv", "AFILE/x.csv"])
def test_runs_table_to_an_unwritable_place_is_one_line(small_run, tmp_path, out):
    (tmp_path / "afile").write_text("x")
    rc, _, err = run_cli(["runs", "table", str(small_run), "-o", out.replace("AFILE", str(tmp_path / "afile"))])
    assert_user_error(rc, err, "--output")


def test_a_hostlist_of_billions_of_nodes_is_refused_at_once(tmp_path):
    (tmp_path / "s.conf").write_text("NodeName=a[1-99999999999] CPUs=8 RealMemory=1000\n")
    rc, _, err = run_cli(["platform", "import", str(tmp_path / "s.conf"), "-o", str(tmp_path / "p.yaml")])
    assert_user_error(rc, err, "s.conf:1:", "names more than 100000 hosts")
    assert not (tmp_path / "p.yaml").exists()


def test_resume_with_a_corrupt_line_in_the_middle_of_the_log(tmp_path):
    run = _run(tmp_path, budget={"generations": 3})
    log = run / "evaluations.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    lines[1] = lines[1][:20] + "\n"
    log.write_text("".join(lines))
    for argv in (["optimise", str(run), "--resume", "--quiet"],
                 ["optimise", str(tmp_path / "s.yaml"), "--out", str(run), "--resume", "--quiet"]):
        rc, out, err = run_cli(argv)
        assert_user_error(rc, err.strip().splitlines()[-1] + "\n", "evaluations.jsonl:2: corrupt log line",
                          "restore it")
        assert "Traceback" not in err


def test_a_full_disk_is_one_line_and_the_run_resumes(tmp_path, monkeypatch):
    import paretosched.search.ledger as ledger

    real = ledger.append_rows
    calls = {"n": 0}

    def full_after_one(run_dir, rows):
        rows = list(rows)
        calls["n"] += bool(rows)
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(run_dir / "evaluations.jsonl"))
        real(run_dir, rows)

    monkeypatch.setattr(ledger, "append_rows", full_after_one)
    study = _study(tmp_path, budget={"generations": 3})
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run"), "--quiet"])
    line = assert_user_error(rc, err.strip().splitlines()[-1] + "\n", "evaluations.jsonl: no space left on the device",
                             "--resume")
    assert "Traceback" not in err and line
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "interrupted"
    monkeypatch.setattr(ledger, "append_rows", real)
    rc, out, err = run_cli(["optimise", str(tmp_path / "run"), "--resume", "--quiet"])
    assert rc == 0, err
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "done"


# --- defect 8: upper bounds ------------------------------------------------------------------

@pytest.mark.parametrize("overrides,expected", [
    ({"algorithm": {"pop_size": 100_000_000}}, "algorithm.pop_size: Input should be less than or equal to 10000"),
    ({"seeds": 1_000_000_000}, "seeds: at most 1000 seeds"),
    ({"parallel": {"workers": 100_000}}, "parallel.workers: Input should be less than or equal to 1024"),
    ({"algorithm": {"pop_size": 10_000}, "seeds": 1000}, "10000000 simulations per generation; at most 1000000"),
    ({"budget": {"evaluations": 10_000_000}, "seeds": 100}, "budget: 1000000000 simulations"),
    ({"resampling": {"max_seeds": 1_000_000_000}}, "resampling.max_seeds: Input should be less than or equal to 1000"),
    ({"resampling": {"step": 1_000_000_000}}, "resampling.step: Input should be less than or equal to 1000"),
])
def test_studies_that_cannot_finish_are_refused(tmp_path, overrides, expected):
    study = _study(tmp_path, **overrides)
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run")])
    assert_user_error(rc, err.strip().splitlines()[-1] + "\n", expected)
    assert not (tmp_path / "run").exists()


def test_the_cost_is_said_first(tmp_path):
    study = _study(tmp_path, seeds=2, baselines={"fcfs": {"scheduler": {"job_policy": "first"}}})
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run"), "--quiet"])
    assert rc == 0, err
    assert err.splitlines()[0] == ("analytic: cost: up to 16 simulations (2 seed(s) per evaluation, 8 per "
                                   "generation), plus 2 for 1 baseline(s)")


def test_the_cost_line_bounds_what_resampling_and_the_recheck_spend(tmp_path):
    # the line said "up to 16" where resampling and the re-check spent twice that
    study = _study(tmp_path, seeds=2, recheck=2, cache=False, resampling={"max_seeds": 4, "step": 2, "tolerance": 0.05},
                   baselines={"fcfs": {"scheduler": {"job_policy": "first"}}})
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp_path / "run"), "--quiet"])
    assert rc == 0, err
    line = err.splitlines()[0]
    assert "cost: 16 to 32 simulations" in line and "up to 4 seeds" in line
    assert "then the re-check: 2 seed(s) x (front points + 1 baseline(s))" in line
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    spent = s["n_simulations"]
    assert spent > 16 + 2  # resampling and the re-check did run
    assert spent <= 32 + 2 + 2 * (len(s["front"]) + 1)


# --- defect 9: study names that are not folder names -------------------------------------------

@pytest.mark.parametrize("name", [".", ".."])
def test_study_name_dot_is_refused_and_leaves_nothing(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    study = _study(tmp_path, name=f"s{len(name)}.yaml")
    text = study.read_text().replace("name: analytic", f"name: '{name}'")
    study.write_text(text)
    rc, out, err = run_cli(["optimise", str(study)])
    assert_user_error(rc, err, "name: a study name names its run folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == [study.name]  # no runs/, no .lock


@pytest.mark.parametrize("seeds", ["[-1]", "[x]", "[1.5]", "[true]"])
def test_edited_provenance_seeds_are_one_line_errors(tmp_path, seeds):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"platform: homogeneous-2\nworkload: {{jobs: [{{run_s: 5}}]}}\nprovenance: {{seeds: {seeds}}}\n")
    rc, out, err = run_cli(["simulate", str(cfg)])
    assert_user_error(rc, err, "c.yaml: provenance.seeds.0: expected a non-negative integer seed")


def test_json_output_is_strict(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("platform: homogeneous-2\nworkload: {jobs: [{run_s: 5}]}\n")
    rc, out, err = run_cli(["simulate", str(cfg), "--json", "--out", str(tmp_path / "o")])
    assert rc == 0, err
    strict_json(out)
    strict_json((tmp_path / "o" / "metrics.json").read_text())
