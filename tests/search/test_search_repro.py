"""Reproducibility: the same study gives the same log and front with 1 or 2 workers, joblib or
Dask, one run or a run interrupted by SIGKILL and resumed; failures and the cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paretosched.errors import UserError

from conftest import genome_seed_pairs, log_json, run_quiet, stable_rows, summary, write_study

SMALL = dict(budget={"generations": 5}, algorithm={"pop_size": 12}, seeds=2, recheck=2)


def _same_run(a: Path, b: Path) -> None:
    assert stable_rows(a) == stable_rows(b)
    assert (a / "front.csv").read_text() == (b / "front.csv").read_text()
    assert json.loads((a / "population.json").read_text()) == json.loads((b / "population.json").read_text())
    sa, sb = summary(a), summary(b)
    for key in ("front", "hv", "generations", "reference_point", "baselines", "recheck", "n_evaluations"):
        assert sa[key] == sb[key], key


def test_workers_1_and_2_give_identical_logs(tmp_path: Path) -> None:
    study = write_study(tmp_path, cache=False, **SMALL)
    one = run_quiet(study, tmp_path / "w1", workers=1)
    two = run_quiet(study, tmp_path / "w2", workers=2)
    _same_run(one, two)
    rows = log_json(one)
    assert len(rows) > 12 and {r["kind"] for r in rows} == {"search", "recheck"}
    assert all(not s["cached"] for r in rows for s in r["per_seed"])  # cache off: all simulated


def test_dask_local_cluster_matches_local(tmp_path: Path) -> None:
    from dask.distributed import LocalCluster

    study = write_study(tmp_path, cache=False, **SMALL)
    local = run_quiet(study, tmp_path / "local", workers=1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        dist = run_quiet(study, tmp_path / "dask", dask=cluster.scheduler_address)
    _same_run(local, dist)
    assert json.loads(json.dumps(summary(dist)))["status"] == "done"


def test_log_rows_hold_per_seed_values_and_their_means(tmp_path: Path) -> None:
    study = write_study(tmp_path, evaluator="paretosched.search.analytic:evaluate_noisy",
                        baselines={"fcfs": {"scheduler": {"job_policy": "first", "freq": 1.0}}}, **SMALL)
    run = run_quiet(study, tmp_path / "run")
    rows = log_json(run)
    seeds = summary(run)["seeds"]
    assert rows[0]["kind"] == "baseline" and rows[0]["name"] == "fcfs" and rows[0]["generation"] == -1
    for r in rows:
        assert [s["seed"] for s in r["per_seed"]] == r["seeds"]
        if r["kind"] != "recheck":
            assert r["seeds"] == seeds  # common random numbers: same seeds for every genome
        vals = [s["metrics"]["mean_bsld"] for s in r["per_seed"]]
        assert len(set(vals)) == 2  # the seeded noise differs per seed ...
        assert r["objectives"]["mean_bsld"] == pytest.approx(sum(vals) / 2)  # ... and the mean is the objective
    assert [r["eval_id"] for r in rows] == list(range(len(rows)))
    assert len(set(genome_seed_pairs(rows))) == len(genome_seed_pairs(rows))
    # re-check: one row per front point, on fresh seeds, and its values in front.csv
    s = summary(run)
    rechecks = [r for r in rows if r["kind"] == "recheck"]
    # the front and the baselines, on the same fresh seeds
    assert sorted(r["recheck_of"] for r in rechecks) == sorted([*s["front"], s["baselines"]["fcfs"]["eval_id"]])
    assert len({tuple(r["seeds"]) for r in rechecks}) == 1
    assert all(not set(r["seeds"]) & set(seeds) for r in rechecks)
    header = (run / "front.csv").read_text().splitlines()[0].split(",")
    assert "recheck_mean_bsld" in header
    assert all(line.split(",")[-1] != "" for line in (run / "front.csv").read_text().splitlines()[1:])
    fcfs = s["baselines"]["fcfs"]
    assert fcfs["dominated_on_search_seeds"] == bool(fcfs["dominated_by_on_search_seeds"])
    assert set(fcfs["dominated_by_on_search_seeds"]) <= set(s["front"])


def test_failing_genome_is_logged_failed_and_run_completes(tmp_path: Path) -> None:
    study = write_study(tmp_path, evaluator="tests.doubles:evaluate_flaky", **SMALL)
    run = run_quiet(study, tmp_path / "run")
    rows = [r for r in log_json(run) if r["kind"] == "search"]
    failed = [r for r in rows if r["status"] == "failed"]
    assert failed, "the random job policy is sampled in generation 0"
    assert all(r["genome"]["scheduler.job_policy"] == "random" for r in failed)
    assert all(r["objectives"] is None and "simulated twin failure" in r["error"] for r in failed)
    assert all(s["status"] == "failed" for r in failed for s in r["per_seed"])
    s = summary(run)
    assert s["status"] == "done" and s["n_failed"] == len(failed)
    assert len(s["generations"]) == 5
    front_ids = set(s["front"])
    assert front_ids and not front_ids & {r["eval_id"] for r in failed}
    # infeasible genomes lose every tournament/survival comparison: none in the final population
    pop = json.loads((run / "population.json").read_text())
    assert pop["final"] and not set(pop["eval_ids"]) & {r["eval_id"] for r in failed}


def test_cache_is_shared_across_runs_of_a_study(tmp_path: Path) -> None:
    study = write_study(tmp_path, **SMALL)
    first = run_quiet(study, tmp_path / "runs" / "a")
    second = run_quiet(study, tmp_path / "runs" / "b")
    assert (tmp_path / "runs" / ".cache" / "analytic").is_dir()
    _same_run(first, second)
    assert summary(first)["n_cache_hits"] == 0 and summary(first)["n_simulations"] > 0
    assert summary(second)["n_simulations"] == 0  # nothing simulated twice
    assert summary(second)["n_cache_hits"] == summary(first)["n_simulations"]


def test_run_dir_guards(tmp_path: Path) -> None:
    study = write_study(tmp_path, **SMALL)
    run = run_quiet(study, tmp_path / "run")
    with pytest.raises(UserError, match="exists and is not empty"):
        run_quiet(study, run)
    with pytest.raises(UserError, match="add --resume"):
        run_quiet(run, run)
    before = stable_rows(run)
    assert run_quiet(run, run, resume=True) == run  # finished: resume is a no-op
    assert stable_rows(run) == before
    changed = write_study(tmp_path, name="changed.yaml", **dict(SMALL, seed=99))
    with pytest.raises(UserError, match="differs from the study"):
        run_quiet(changed, run, resume=True)


def test_resume_refuses_a_run_another_twin_started(tmp_path: Path) -> None:
    from paretosched.search.checkpoint import load_checkpoint, save_checkpoint
    from paretosched.sim import twin_version

    run = run_quiet(write_study(tmp_path, **SMALL), tmp_path / "run")
    state = load_checkpoint(run)
    assert state is not None and state.twin == twin_version()
    state.done = False  # as if killed before the re-check
    save_checkpoint(run, state)
    before = stable_rows(run)
    assert run_quiet(run, run, resume=True) == run  # same twin: resumes
    assert stable_rows(run) == before

    state.twin = "0.0.1+twin.0"
    save_checkpoint(run, state)
    with pytest.raises(UserError, match=r"started with twin 0\.0\.1\+twin\.0, this paretosched is"):
        run_quiet(run, run, resume=True)
    state.twin = None  # a checkpoint older than the field: the summary says which twin wrote it
    save_checkpoint(run, state)
    s = summary(run)
    s["versions"]["twin"] = "0.0.2+twin.0"
    (run / "summary.json").write_text(json.dumps(s))
    with pytest.raises(UserError, match=r"started with twin 0\.0\.2\+twin\.0"):
        run_quiet(run, run, resume=True)
    assert stable_rows(run) == before  # refused before touching anything


_CHILD = """
import sys
from paretosched.search.optimise import optimise
optimise(sys.argv[1], out=sys.argv[2], resume=sys.argv[3] == "1", workers=int(sys.argv[4]), quiet=True)
"""


def _start(study: Path, out: Path, resume: bool, workers: int = 1, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(study), str(out), "1" if resume else "0", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, **(env or {})})


def _kill_when(proc: subprocess.Popen, log: Path, rows: int, delay: float, timeout: float = 60) -> None:
    """SIGKILL the child (and its workers) `delay` s after the log holds >= `rows` rows."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if log.exists() and log.read_bytes().count(b"\n") >= rows:
            break
        if proc.poll() is not None:
            raise AssertionError(f"child ended before the kill: {proc.stderr.read().decode()}")
        time.sleep(0.002)
    time.sleep(delay)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.slow
def test_sigkill_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    # 20 ms per simulation (12 genomes x 2 seeds per generation) so kills land inside a generation
    kw = dict(SMALL, evaluator="tests.doubles:evaluate_slow", budget={"generations": 6})
    study = write_study(tmp_path, cache=False, **kw)
    ref = run_quiet(study, tmp_path / "ref")

    study_c = write_study(tmp_path, name="cached.yaml", **kw)  # cache on: resumes reuse finished simulations
    out = tmp_path / "killed"
    log = out / "evaluations.jsonl"
    counter = tmp_path / "simulations.txt"
    env = {"PARETOSCHED_COUNT_FILE": str(counter)}
    # 1st kill: right after generation 0's rows were appended, before its checkpoint (replay path);
    # 2nd kill: in the middle of evaluating a later generation (cache path)
    for k, (rows, delay) in enumerate([(12, 0.0), (30, 0.12)]):
        proc = _start(study_c, out, resume=k > 0, workers=2, env=env)
        _kill_when(proc, log, rows, delay)
        if k:
            assert summary(out)["status"] == "running"
    # a SIGKILL in the middle of an append leaves a torn last line: add the worst case by hand
    n_complete = log.read_bytes().count(b"\n")
    with open(log, "ab") as f:
        f.write(b'{"eval_id": 999, "kind": "sea')
    assert len(log_json(out)) == n_complete  # readers drop the torn line
    proc = _start(out, out, resume=True, env=env)  # resume from the run dir alone
    assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()

    _same_run(ref, out)
    rows = log_json(out)
    pairs = genome_seed_pairs(rows)
    assert len(pairs) == len(set(pairs)), "no (genome, seed) is logged twice"
    assert summary(out)["status"] == "done"
    # simulations across the three sessions: every logged one once, plus at most the few that
    # were running (or finished but not yet handed back in order) when a kill struck
    n_sims = len(counter.read_text().splitlines())
    assert len(pairs) <= n_sims <= len(pairs) + 2 * 12, (n_sims, len(pairs))


def _children(pid: int) -> set[int]:
    """Pids whose parent is `pid` (Linux /proc)."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_sigterm_stops_the_workers_and_leaves_a_resumable_run(tmp_path: Path, monkeypatch) -> None:
    # each simulation sleeps 60 s: without stopping them, the workers would outlive the run by that
    study = write_study(tmp_path, cache=False, evaluator="tests.doubles:evaluate_slow", **SMALL)
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from paretosched.cli import main; sys.exit(main())",
                             "optimise", str(study), "--out", str(out), "--workers", "2", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "PARETOSCHED_SLOW_S": "60"})
    workers: set[int] = set()
    try:
        t0 = time.monotonic()
        while len(workers) < 2 and time.monotonic() - t0 < 60:  # the pool is up and busy
            time.sleep(0.2)
            workers = {p for p in _children(proc.pid)  # loky's workers, not its resource tracker
                       if b"popen_loky_posix" in Path(f"/proc/{p}/cmdline").read_bytes()}
        assert len(workers) >= 2, "workers never started"
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 143
        assert b"terminated" in proc.stderr.read()
        t1 = time.monotonic()
        while any(_alive(p) for p in workers) and time.monotonic() - t1 < 10:
            time.sleep(0.2)
        assert not any(_alive(p) for p in workers), "workers outlived the run"
    finally:  # whatever failed, nothing of this test may keep sleeping
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for p in workers:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
    monkeypatch.setenv("PARETOSCHED_SLOW_S", "0")
    resumed = run_quiet(out, out, resume=True)  # the run directory resumes to the uninterrupted result
    _same_run(resumed, run_quiet(study, tmp_path / "ref"))
