"""Speculation in the steady schedule (TaskPool.speculate, docs/search.md): idle workers run the seeds
resampling is likely to ask for next. It may change when results are ready, never what is decided:
the log is the same with it on or off, a resumed run is exact, and no speculation outlives the pool."""

from __future__ import annotations

import contextlib
import io
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from paretosched.search import optimise as optimise_module, steady as steady_module
from paretosched.search.blocks import Speculation
from paretosched.search.cache import Cache
from paretosched.search.evaluate import Engine, TaskPool
from paretosched.search.summary import read_summary

from conftest import run_quiet, stable_rows, summary, write_study
from test_steady_replay import NOISY, _virtual_run, _VirtualEngine, _VirtualPool, duration


def _steady(lag: int, **extra: Any) -> dict[str, Any]:
    return dict(algorithm={"pop_size": 12, "schedule": "steady", "lag": lag}, **NOISY, **extra)


@pytest.mark.parametrize("n, lag, seed", [(16, 32, 1), (6, 5, 2), (12, 2, 3), (4, 8, 4)])
def test_speculation_never_changes_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, lag: int,
                                           seed: int) -> None:
    on = _virtual_run(tmp_path, monkeypatch, "on", n, budget={"generations": 5}, seed=seed, **_steady(lag))
    used = sum(s.used for s in _VirtualPool.stats)
    off = _virtual_run(tmp_path, monkeypatch, "off", n, budget={"generations": 5}, seed=seed,
                       parallel={"speculate": False}, **_steady(lag))
    assert sum(s.speculated for s in _VirtualPool.stats) == 0  # off is off
    assert used > 0  # speculations were used in the run compared
    assert stable_rows(on) == stable_rows(off)
    assert summary(on)["generations"] == summary(off)["generations"]
    assert summary(on)["front"] == summary(off)["front"]


def test_an_evaluations_budget_stops_at_the_same_genome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on = _virtual_run(tmp_path, monkeypatch, "on", 10, budget={"evaluations": 90}, **_steady(6))
    off = _virtual_run(tmp_path, monkeypatch, "off", 10, budget={"evaluations": 90}, parallel={"speculate": False},
                       **_steady(6))
    assert stable_rows(on) == stable_rows(off)


def test_a_run_killed_while_speculating_resumes_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # study seed 2: speculations are running or kept when generation 2's round is folded in
    study = write_study(tmp_path, budget={"generations": 5}, seed=2, **_steady(5))
    whole = _virtual_run(tmp_path, monkeypatch, "whole", 8, budget={"generations": 5}, seed=2, **_steady(5))
    real, calls = steady_module.SteadyLoop._fold, {"n": 0}

    def dying(self: Any, pool: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 3:  # generation 2's round out, speculations running or kept
            assert pool._running or pool._kept
            raise KeyboardInterrupt
        real(self, pool)

    monkeypatch.setattr(steady_module.SteadyLoop, "_fold", dying)
    with pytest.raises(KeyboardInterrupt):
        run_quiet(study, tmp_path / "killed")
    monkeypatch.setattr(steady_module.SteadyLoop, "_fold", real)
    with contextlib.redirect_stderr(io.StringIO()):
        resumed = optimise_module.optimise(str(study), out=str(tmp_path / "killed"), resume=True, quiet=True)
    assert stable_rows(resumed) == stable_rows(whole)
    assert summary(resumed)["generations"] == summary(whole)["generations"]
    # summary.json's counts: the killed session's up to its last checkpoint, plus the resumed one's
    _, killed, again = _VirtualPool.stats
    assert again.speculated < summary(resumed)["speculation"]["speculated"] <= killed.speculated + again.speculated


def _engine(n: int) -> Engine:
    return _VirtualEngine("paretosched.search.analytic:evaluate", n, cache=Cache(None))


def _cfg(freq: float) -> dict[str, Any]:
    return {"scheduler": {"freq": freq, "job_policy": "first"}}


def test_a_speculation_takes_only_an_idle_worker_with_nothing_queued(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_VirtualPool, "n", 2)
    with _engine(2) as engine, engine.pool() as pool:
        pool.speculate([(_cfg(0.5), 7), (_cfg(0.6), 7), (_cfg(0.7), 7)])
        pool.submit_all([("a", _cfg(0.1), 1), ("b", _cfg(0.2), 1), ("c", _cfg(0.3), 1)])
        assert [t for t, _ in pool.wait()] == ["a"]  # a and b ran, c queued: nothing speculated
        assert [t for t, _ in pool.wait()] == ["b"]  # b and c ran: no worker idle
        assert pool.stats.speculated == 0
        assert [t for t, _ in pool.wait()] == ["c"]  # c ran alone: the idle worker took one
        assert pool.stats.speculated == 1 and len(pool._running) + len(pool._kept) == 1


def test_a_task_speculated_completes_from_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_VirtualPool, "n", 3)
    with _engine(3) as engine, engine.pool() as pool:
        pool.speculate([(_cfg(0.5), 7), (_cfg(0.6), 7)])
        pool.submit("a", _cfg(0.1), 1)
        pool.wait()
        assert pool.stats.speculated == 2
        done, running = list(pool._kept), list(pool._running)
        pool.submit("s", _cfg(0.5), 7)
        pool.submit("t", _cfg(0.6), 7)
        got = dict(pool.wait())
        while len(got) < 2:
            got.update(pool.wait())
        assert pool.stats.used == 2 and not pool._kept and not pool._running
        for tag, freq in (("s", 0.5), ("t", 0.6)):  # simulated by this run: logged as such, with its time
            assert not got[tag].cached and got[tag].wall_s > 0
            assert got[tag].metrics == engine.evaluate([(_cfg(freq), 7)])[0].metrics
        assert done or running


def test_a_task_queued_behind_speculations_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_VirtualPool, "n", 2)
    with _engine(2) as engine, engine.pool() as pool:
        pool.speculate([(_cfg(0.5), 7), (_cfg(0.6), 7)])
        pool._speculate()  # both workers took a speculation (as when the search waited with nothing out)
        pool.submit("a", _cfg(0.1), 1)  # queued: no worker free
        assert [t for t, _ in pool.wait()] == ["a"]


def test_a_serial_pool_never_speculates() -> None:
    with Engine("paretosched.search.analytic:evaluate", 1, cache=Cache(None)) as engine, engine.pool() as pool:
        pool.speculate([(_cfg(0.5), 7)])
        pool.submit("a", _cfg(0.1), 1)
        assert [t for t, _ in pool.wait()] == ["a"] and pool.stats.speculated == 0


def _sleepy(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    if cfg.get("mark"):  # a speculation that would run for 20 s
        Path(cfg["mark"]).write_text(str(os.getpid()))
        time.sleep(20)
        Path(cfg["mark"] + ".done").write_text("")
    return {"energy_kwh": 1.0, "mean_bsld": 1.0}


@pytest.mark.parametrize("interrupted", [False, True])  # the search done, or Ctrl-C
def test_closing_the_pool_leaves_no_speculation_running(tmp_path: Path, interrupted: bool) -> None:
    mark = tmp_path / "pid"
    with Engine(_sleepy, 2, cache=Cache(None)) as engine:
        with contextlib.suppress(KeyboardInterrupt), engine.pool() as pool:
            pool.speculate([({"mark": str(mark)}, 1)])
            pool.submit("a", {}, 1)
            assert [t for t, _ in pool.wait()] == ["a"]
            while not mark.exists() or not mark.read_text():  # the speculation started on the other worker
                time.sleep(0.05)
            pid = int(mark.read_text())
            if interrupted:
                raise KeyboardInterrupt
        assert not Path(f"{mark}.done").exists()  # its worker was stopped with the pool, not waited for
        for _ in range(100):  # after Ctrl-C the kill is not waited for: give it up to 10 s (the task sleeps 20)
            if not _alive(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie, killed and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the OS
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_speculation_on_loky_and_dask_workers_gives_the_serial_log(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from dask.distributed import LocalCluster

    stats: list[Speculation] = []
    real_exit = TaskPool.__exit__

    def recorded(self: TaskPool, *exc: Any) -> None:
        real_exit(self, *exc)
        stats.append(replace(self.stats))

    monkeypatch.setattr(TaskPool, "__exit__", recorded)
    study = write_study(tmp_path, budget={"generations": 4}, **_steady(4))
    local = run_quiet(study, tmp_path / "local", workers=1)  # serial: never speculates
    loky = run_quiet(study, tmp_path / "loky", workers=2)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        dist = run_quiet(study, tmp_path / "dask", dask=cluster.scheduler_address)
    # whatever the workers' timing (whether idle workers found seeds to run ahead is the machine's
    # load; the virtual-time tests above show speculations used): serial never speculates, each
    # run's summary counts what its pool did, and the logs are the serial one
    assert len(stats) == 3 and stats[0].speculated == 0
    for st, run in zip(stats, (local, loky, dist)):
        assert st.used <= st.speculated
        assert summary(run)["speculation"] == {"speculated": st.speculated, "used": st.used,
                                               "unused_s": round(st.unused_s, 3)}
    assert stable_rows(local) == stable_rows(loky) == stable_rows(dist)


def _gives_up(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    if cfg.get("boom"):  # raised past run_one, as a worker lost or a library's sys.exit would be
        raise SystemExit("the evaluator gave up")
    return {"energy_kwh": float(seed), "mean_bsld": 1.0}


def test_a_speculation_that_raises_is_forgotten(tmp_path: Path) -> None:
    """Its task may never be asked for: the run must not die of it; asked for, it runs as without speculation."""
    with Engine(_gives_up, 2, cache=Cache(None)) as engine, engine.pool() as pool:
        pool.speculate([({"boom": True}, 1), ({}, 2)])
        pool.submit("a", {}, 1)
        got = dict(pool.wait())
        # until both speculations have started and ended (the one that raised among them): which
        # ends first is the workers' timing, so the second may start only after a later wait
        # by time, not a count of rounds: the raising one kills its loky worker, whose restart takes
        # seconds on a loaded machine (200 rounds were not enough under CI at load ~4)
        deadline, k = time.monotonic() + 120, 0
        while time.monotonic() < deadline:
            if pool.stats.speculated == 2 and not pool._running:
                break
            pool.submit(f"x{k}", {"x": k}, 3)
            got.update(pool.wait())
            k += 1
        assert got["a"].metrics == {"energy_kwh": 1.0, "mean_bsld": 1.0}
        # both ended: the raising one went through the pool's handling, not joined by the task below
        assert pool.stats.speculated == 2 and not pool._running and list(pool._kept) != []  # ({}, 2) kept
        pool.submit("b", {}, 2)
        assert [(t, r.metrics) for t, r in pool.wait()] == [("b", {"energy_kwh": 2.0, "mean_bsld": 1.0})]
        assert pool.stats.used == 1
        pool.submit("boom", {"boom": True}, 1)  # asked for: it fails as it would have without speculation
        with pytest.raises(SystemExit, match="gave up"):
            pool.wait()


def test_a_speculation_cut_at_the_close_counts_as_unused(tmp_path: Path) -> None:
    """The worker-time of a speculation stopped when the pool closes was spent for nothing: it is counted."""
    mark = tmp_path / "pid"
    with Engine(_sleepy, 2, cache=Cache(None)) as engine:
        with engine.pool() as pool:
            pool.speculate([({"mark": str(mark)}, 1)])
            pool.submit("a", {}, 1)
            pool.wait()
            while not mark.exists() or not mark.read_text():
                time.sleep(0.05)
            seen = time.perf_counter()  # the speculation started before this
            time.sleep(0.3)
            ran = time.perf_counter() - seen  # and ran at least this long before the close
    assert pool.stats.speculated == 1 and pool.stats.used == 0
    assert pool.stats.unused_s >= ran >= 0.3  # a lower bound, whatever the machine's load


def test_the_summary_says_what_speculation_cost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its CPU is billed like any other: summary.json keeps it (quiet batch jobs lose stderr), apart from
    n_simulations, which counts the used ones only (they are the log's rows)."""
    on = _virtual_run(tmp_path, monkeypatch, "on", 16, budget={"generations": 5}, **_steady(32))
    st = _VirtualPool.stats[0]
    assert 0 < st.used < st.speculated and st.unused_s > 0
    assert summary(on)["speculation"] == {"speculated": st.speculated, "used": st.used,
                                          "unused_s": round(st.unused_s, 3)}
    off = _virtual_run(tmp_path, monkeypatch, "off", 16, budget={"generations": 5}, parallel={"speculate": False},
                       **_steady(32))
    assert summary(off)["speculation"] == {"speculated": 0, "used": 0, "unused_s": 0.0}
    assert read_summary(on).speculation == replace(st, unused_s=round(st.unused_s, 3))  # read back typed
    assert summary(on)["n_simulations"] == summary(off)["n_simulations"]


def test_the_cost_line_says_speculation_may_run_more(tmp_path: Path) -> None:
    """The cost line counts the simulations the budget allows; speculation's unused ones come on top."""
    from paretosched.search.guards import check_cost
    from paretosched.search.study import load_study

    def cost(workers: int, **extra: Any) -> str:
        study = load_study(write_study(tmp_path, budget={"generations": 5}, **{**_steady(4), **extra}))
        return check_cost(study.model_copy(update={"parallel": study.parallel.model_copy(
            update={"workers": workers})}), "s")

    assert "speculation: idle workers" in cost(4)
    assert "speculation" not in cost(1)  # a serial pool never speculates
    assert "speculation" not in cost(4, parallel={"speculate": False})
    assert "speculation" not in cost(4, algorithm={"pop_size": 12})  # generational
    assert "speculation" not in cost(4, resampling=None)  # nothing to speculate


def evaluate_failing(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """`analytic.evaluate_noisy`, failing on about one (config, seed) in six (fixed by both)."""
    from paretosched.search.analytic import evaluate_noisy

    if duration(cfg, seed) < 0.2:
        raise ValueError("simulated failure")
    return evaluate_noisy(cfg, seed)


def test_a_failed_speculation_gives_the_failure_the_log_would_hold(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARETOSCHED_EVALUATORS", "test_steady_speculation:*")
    failed_used = []
    real = TaskPool.submit_all

    def submit_all(self: TaskPool, tasks: list[Any], first: bool = False) -> None:
        keys = [self.engine._key(cfg, seed, self._digests) for _, cfg, seed in tasks]
        failed_used.extend(k for k in keys if k in self._kept and self._kept[k].status == "failed")
        real(self, tasks, first)

    monkeypatch.setattr(TaskPool, "submit_all", submit_all)
    kw = dict(budget={"generations": 10}, **{**_steady(32), "evaluator": "test_steady_speculation:evaluate_failing"})
    on = _virtual_run(tmp_path, monkeypatch, "on", 16, **kw)
    assert failed_used  # a speculation that failed completed a task
    off = _virtual_run(tmp_path, monkeypatch, "off", 16, parallel={"speculate": False}, **kw)
    assert stable_rows(on) == stable_rows(off)
