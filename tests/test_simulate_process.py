"""`paretosched simulate` as a process of its own: the last run is left to the exit, and the
process ends without the interpreter's teardown; the output must be whole and the numbers the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from paretosched.cli import main

CONFIG = """platform: gaia-mini
workload: {path: builtin:hpc2n-3k.swf.gz, n_jobs: 150}
scheduler: {job_policy: shortest, resource_policy: high_gflops, backfilling: easy}
"""


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "cfg.yaml"
    p.write_text(CONFIG)
    return p


# block-buffered stdout, as a shell pipe gives it (PYTHONUNBUFFERED would hide a missing flush)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _in_process(argv, capsys):
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("extra", [[], ["--seeds", "3,4"], ["--json"], ["--json", "--seeds", "1,2,5"]])
def test_command_process_prints_what_main_prints(config, capsys, extra):
    """The process ends with os._exit: its stdout (a pipe here, so block-buffered) is flushed first."""
    argv = ["simulate", str(config), *extra]
    proc = subprocess.run([sys.executable, "-m", "paretosched.cli", *argv], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == _in_process(argv, capsys)
    if "--json" in extra:
        assert json.loads(proc.stdout)["n_jobs"] == 150


def test_command_process_errors_and_out(config, tmp_path, capsys):
    bad = subprocess.run([sys.executable, "-m", "paretosched.cli", "simulate", str(config), "--n-jobs", "0"],
                         capture_output=True, text=True, env=ENV)
    assert bad.returncode == 2 and bad.stderr.startswith("paretosched: error: ") and bad.stdout == ""
    out = tmp_path / "o"
    proc = subprocess.run([sys.executable, "-m", "paretosched.cli", "simulate", str(config), "--json", "--out",
                           str(out)], capture_output=True, text=True, check=True, env=ENV)
    assert json.loads((out / "metrics.json").read_text())["metrics"] == json.loads(proc.stdout)
    assert len((out / "jobs.csv").read_text().splitlines()) == 151


def test_process_ends_freezes_the_run_and_keeps_the_numbers(config):
    """`simulate(process_ends=True)` leaves the run's parts linked and frozen (the collector never
    scans them, nothing frees them before the exit); without it they are unlinked. Same metrics."""
    code = ("import gc, json, sys; from paretosched.config import load_config; from paretosched.sim.run import simulate;"
            "from paretosched.sim.engine.twin import Twin; kept = []; run = Twin.run;"
            "Twin.run = lambda self: (run(self), kept.append(self))[0]; cfg = load_config(sys.argv[1]);"
            "a = simulate(cfg).metrics; c = gc.get_freeze_count(); b = simulate(cfg, process_ends=True).metrics;"
            "parts = [sum(len(j.groups) for j in t.done) for t in kept];"
            "print(json.dumps([a == b, gc.get_freeze_count() - c, parts]))")
    out = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True, check=True)
    same, frozen, parts = json.loads(out.stdout)
    assert same and parts[0] == 0 and parts[1] >= 150
    assert frozen > 4 * parts[1]  # the jobs, their parts and their core lists at least


@pytest.mark.parametrize("fd", [1, 2])
def test_command_process_with_a_closed_stream(config, fd):
    """Run with stdout or stderr closed (`>&-`, as a daemon or cron may start it), Python makes that
    stream None: the process still ends with code 0, no traceback, the other stream whole."""
    proc = subprocess.run([sys.executable, "-m", "paretosched.cli", "simulate", str(config), "--json"],
                          capture_output=True, text=True, env=ENV, preexec_fn=lambda: os.close(fd))
    assert proc.returncode == 0
    if fd == 1:
        assert proc.stderr == ""
    else:
        assert json.loads(proc.stdout)["n_jobs"] == 150


def test_command_process_under_a_profiler_reports(config, tmp_path):
    """`python -m cProfile -o FILE -m paretosched.cli simulate ...`: the profiler writes its file
    when the command returns, so the process must not end at once under it (nor under a tracer)."""
    prof = tmp_path / "p.out"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "paretosched.cli", "simulate",
                           str(config), "--json"], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and json.loads(proc.stdout)["n_jobs"] == 150
    import pstats

    assert any(fn == "run_simulate" for _, _, fn in pstats.Stats(str(prof)).stats)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_full_standard_output_is_named_as_such(config, extra):
    """Printing to a full device: one line naming standard output (not `--out`, which was not given), exit 2."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-c", "from paretosched.cli import run; run()", "simulate", str(config),
                            *extra], stdout=full, stderr=subprocess.PIPE, text=True, env=ENV, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "paretosched: error: standard output: no space left on the device; free some and run the command again"]
