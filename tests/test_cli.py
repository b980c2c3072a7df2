"""The command line: tables, JSON, output files, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from paretosched.cli import main

CONFIG = """platform: gaia-mini
workload: {path: builtin:hpc2n-3k.swf.gz, n_jobs: 200}
scheduler: {job_policy: shortest, resource_policy: high_gflops, backfilling: easy}
"""


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "cfg.yaml"
    p.write_text(CONFIG)
    return p


def test_simulate_json_and_out(config, tmp_path, capsys):
    assert main(["simulate", str(config), "--json", "--out", str(tmp_path / "o")]) == 0
    m = json.loads(capsys.readouterr().out)
    for key in ("energy_kwh", "makespan_s", "mean_wait_s", "mean_slowdown", "mean_bsld", "utilisation", "n_jobs"):
        assert key in m
    assert m["n_jobs"] == 200
    lines = (tmp_path / "o" / "jobs.csv").read_text().splitlines()
    assert lines[0].startswith("seed,job_id,submit_s,start_s,end_s,cores")
    assert len(lines) == 201
    assert json.loads((tmp_path / "o" / "metrics.json").read_text())["metrics"] == m


def test_simulate_overrides_and_seeds(config, capsys):
    assert main(["simulate", str(config), "--json", "--n-jobs", "50", "--seeds", "1,2"]) == 0
    mean = json.loads(capsys.readouterr().out)
    assert mean["n_jobs"] == 50
    ones = []
    for s in ("1", "2"):
        main(["simulate", str(config), "--json", "--n-jobs", "50", "--seed", s])
        ones.append(json.loads(capsys.readouterr().out))
    assert mean["energy_j"] == pytest.approx((ones[0]["energy_j"] + ones[1]["energy_j"]) / 2, rel=1e-15)


def test_simulate_table(config, capsys):
    assert main(["simulate", str(config)]) == 0
    out = capsys.readouterr().out
    assert "energy (kWh)" in out and "mean bounded slowdown" in out and "200 loaded" in out


def _bad(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("setup,expected", [
    (lambda t: _bad(t, "a.yaml", CONFIG.replace("shortest", "quickest")),
     "scheduler.job_policy: Input should be"),
    (lambda t: _bad(t, "b.yaml", CONFIG.replace("gaia-mini", "gaia-maxi")), "unknown platform 'gaia-maxi'"),
    (lambda t: _bad(t, "c.yaml", CONFIG.replace("builtin:hpc2n-3k.swf.gz", "missing.swf")), "missing.swf: trace file not found"),
    (lambda t: t / "nowhere.yaml", "nowhere.yaml: file not found"),
    (lambda t: _bad(t, "d.yaml", CONFIG + "extra: 1\n"), "d.yaml: extra: unknown key"),
    (lambda t: _bad(t, "e.yaml", "platform: [\n"), "e.yaml:2: invalid YAML"),
    (lambda t: _bad(t, "h.yaml", CONFIG.replace("gaia-mini", "5")),
     "h.yaml: platform: Input should be a valid string (got 5)"),  # no pydantic union label ('platform.str')
    (lambda t: _bad(t, "g.yaml", CONFIG.replace("n_jobs: 200", "n_jobs: '200'")),
     "g.yaml: workload.n_jobs: Input should be a valid integer (got '200')"),  # no silent coercion
    (lambda t: _bad(t, "f.yaml", CONFIG.replace("n_jobs: 200", "first_job: 5000, n_jobs: 200")),
     "hpc2n-3k.swf.gz: skipping 5000 job lines (first_job) leaves no job; the trace has 3000 job lines"),
])
def test_bad_input_one_line_exit_2(tmp_path, capsys, setup, expected):
    assert main(["simulate", str(setup(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("content,expected", [
    ("1 0 0 5 1\n", "t.swf:1: expected 18 SWF fields, got 5"),
    ("1 0 0 abc 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n", "t.swf:1: field 4 (run time) is not a number: 'abc'"),
])
def test_bad_trace_in_subprocess(tmp_path, content, expected):
    (tmp_path / "t.swf").write_text(content)
    cfg = _bad(tmp_path, "cfg.yaml", CONFIG.replace("builtin:hpc2n-3k.swf.gz", "t.swf"))
    proc = subprocess.run([sys.executable, "-m", "paretosched.cli", "simulate", str(cfg)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert expected in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_simulate_notes_a_window_cut_short_by_the_end_of_the_trace(config, capsys):
    assert main(["simulate", str(config), "--json", "--first-job", "2950"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["n_jobs"] == 50
    assert cap.err.strip().endswith("the window holds 50 jobs, fewer than n_jobs=200 (the trace ends after job line 3000)")


def test_optimise_bad_paths_are_one_line_errors(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    study = tmp_path / "s.yaml"
    study.write_text("name: s\n")
    for argv, expected in ((["optimise", str(tmp_path), "--resume"], "neither a study file nor a run directory"),
                           (["optimise", str(study), "--local", "--dask", "tcp://x:1"], "--local and --dask: choose one")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert expected in err and len(err.strip().splitlines()) == 1


def test_platform_show(capsys):
    assert main(["platform", "show", "gaia"]) == 0
    out = capsys.readouterr().out
    assert "153 nodes, 342 processors, 2280 cores" in out


def test_simulate_imports_stay_lean():
    code = ("import sys; from paretosched.cli import main; import paretosched.commands.simulate, paretosched.sim.run;"
            "print(sorted(m for m in ('pandas','plotly','pymoo','sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_simulate_freezes_the_collector_only_in_a_process_of_its_own(config, capsys):
    """`paretosched simulate` as a command freezes what its imports made (the collector skips it);
    called in-process it must not, or the caller's garbage cycles would never be collected."""
    import gc

    before = gc.get_freeze_count()
    assert main(["simulate", str(config), "--json", "--n-jobs", "20"]) == 0
    assert gc.get_freeze_count() == before
    # a program that sets sys.argv and calls main() is still a caller: nothing frozen
    code = ("import gc, sys; from paretosched.cli import main; sys.argv[1:] = ['simulate', sys.argv[1], '--json', "
            "'--n-jobs', '20']; c = gc.get_freeze_count(); main(); print(gc.get_freeze_count() > c, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "False" and json.loads(out.stdout)["n_jobs"] == 20
    # the command as its own process (what the console script and `python -m` call): frozen
    code = ("import gc, sys; import paretosched.cli as cli; sys.argv[1:] = ['simulate', sys.argv[1], '--json', "
            "'--n-jobs', '20']; rc = cli.main(own_process=True); print(gc.get_freeze_count() > 0, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "True" and json.loads(out.stdout)["n_jobs"] == 20


def test_simulate_timeline_and_plots(config, tmp_path, capsys):
    out, plots = tmp_path / "o", tmp_path / "p"
    assert main(["simulate", str(config), "--json", "--n-jobs", "60", "--timeline", "--out", str(out),
                 "--plots", str(plots)]) == 0
    m = json.loads(capsys.readouterr().out)
    import csv

    rows = list(csv.DictReader(open(out / "timeline.csv")))
    assert sum(float(r["energy_j"]) for r in rows) == pytest.approx(m["energy_j"], rel=1e-9)
    assert float(rows[-1]["t_end_s"]) == pytest.approx(m["makespan_s"])
    page = (plots / "run.html").read_text()
    for div in ("plot-gantt", "plot-utilisation", "plot-power", "plot-lifecycle", "plot-pstates", "plot-overuse"):
        assert f'id="{div}"' in page
    assert "plotly.js v" not in page and '<script src="plotly.min.js"' in page  # shared with its folder
    assert "plotly.js v" in (plots / "plotly.min.js").read_text()


def test_simulate_notes_a_different_twin_version(config, tmp_path, capsys):
    cfg = tmp_path / "exported.yaml"
    cfg.write_text(CONFIG.replace("n_jobs: 200", "n_jobs: 20") + "provenance: {twin_version: 0.0.1+twin.0, seeds: [0]}\n")
    assert main(["simulate", str(cfg), "--json"]) == 0
    assert "recorded by twin 0.0.1+twin.0" in capsys.readouterr().err
    from paretosched.sim import twin_version

    cfg.write_text(CONFIG.replace("n_jobs: 200", "n_jobs: 20") + f"provenance: {{twin_version: {twin_version()}}}\n")
    assert main(["simulate", str(cfg), "--json"]) == 0
    assert capsys.readouterr().err == ""
