"""`algorithm.schedule: steady` in virtual time: resampling does not stop the telling, and
benchmarks/worker_efficiency.py's replay of a steady run gives the makespan the run really had.

A virtual pool runs the real search on N simulated workers whose tasks last a duration drawn
from their (config, seed), serving a freed worker before the search sees the result, as the
engine's TaskPool does; the clock when the pool closes is the search's makespan."""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import io
import sys
from pathlib import Path
from typing import Any

import pytest

from paretosched.search import evaluate, optimise as optimise_module, steady as steady_module
from paretosched.search.blocks import Speculation
from paretosched.search.evaluate import Engine, TaskPool
from paretosched.search.space import canonical

from conftest import log_json, run_quiet, stable_rows, summary, write_study

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
import worker_efficiency as we  # noqa: E402

sys.path.remove(str(BENCH))

NOISY = dict(evaluator="paretosched.search.analytic:evaluate_noisy", seeds=2, recheck=2, cache=False,
             resampling={"max_seeds": 6, "step": 2, "tolerance": 0.05},
             baselines={"fcfs": {"scheduler": {"job_policy": "first", "freq": 1.0}}})


def duration(cfg: dict[str, Any], seed: int) -> float:
    """A task's virtual duration, 0.05-1.0, fixed by what it computes."""
    h = hashlib.sha256(f"{canonical(cfg)}|{seed}".encode()).digest()
    return 0.05 + 0.95 * int.from_bytes(h[:8], "big") / 2 ** 64


class _VirtualPool(TaskPool):
    """The engine's TaskPool (queue, speculation) on n virtual workers: only starting a task and
    waiting for the next completion are virtual."""

    n = 3
    ends: list[float] = []
    busy_s = 0.0  # worker-time of the simulations whose results were used
    unused_s = 0.0  # and of speculations never used (cut when the pool closes)
    stats: list[Speculation] = []  # each pool's TaskPool.stats

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._slots, self.parallel = self.n, self.n > 1
        self.clock, self.seq = 0.0, 0
        self.events: list[tuple[float, int]] = []
        self.outcomes: dict[int, tuple[Any, ...]] = {}
        self.started: dict[int, tuple[float, float]] = {}

    def _start(self, cfg: dict[str, Any], seed: int) -> int:
        d = duration(cfg, seed)
        status, metrics, error, _ = evaluate.run_one(self.engine.fn, cfg, seed)
        heapq.heappush(self.events, (self.clock + d, self.seq))
        self.outcomes[self.seq], self.started[self.seq] = (status, metrics, error, d), (self.clock, d)
        self.seq += 1
        return self.seq - 1

    def _finished(self) -> set[Any]:
        self.clock, seq = heapq.heappop(self.events)
        return {seq}

    def _outcome(self, fut: Any) -> tuple[Any, ...]:
        return self.outcomes.pop(fut)

    def __exit__(self, *exc: Any) -> None:
        _VirtualPool.ends.append(self.clock)
        _VirtualPool.stats.append(self.stats)
        cut = sum(self.clock - self.started[f][0] for f in self._running.values())
        unused = sum(r.wall_s for r in self._kept.values()) + cut
        _VirtualPool.unused_s += unused
        _VirtualPool.busy_s += sum(d for _, d in self.started.values()) - unused \
            - sum(self.started[f][1] - (self.clock - self.started[f][0]) for f in self._running.values())
        self._futures.clear()  # virtual: nothing to cancel or kill
        self._running.clear()
        super().__exit__(*exc)


class _VirtualEngine(Engine):
    def pool(self) -> TaskPool:
        return _VirtualPool(self)


def _virtual_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, n: int, **study: Any) -> Path:
    monkeypatch.setattr(optimise_module, "Engine", _VirtualEngine)
    monkeypatch.setattr(_VirtualPool, "n", n)
    _VirtualPool.ends, _VirtualPool.busy_s, _VirtualPool.unused_s, _VirtualPool.stats = [], 0.0, 0.0, []
    return run_quiet(write_study(tmp_path, f"{name}.yaml", **study), tmp_path / name)


# the round folded in after lag (4, 2) or mu (12) results. Study seed 2; on seed 1 at (8, 2) and seed 5
# at (3, 4) the replay's makespan misses the run's (by 0.6% and 0.002%) (found when generation 0's design changed,
# issue 31; not yet explained): marked xfail so that the miss stays visible
@pytest.mark.parametrize("n, lag, seed", [(3, 4, 2), (8, 20, 2), (8, 2, 2),
                                          pytest.param(8, 2, 1, marks=pytest.mark.xfail(strict=True)),
                                          pytest.param(3, 4, 5, marks=pytest.mark.xfail(strict=True))])
def test_the_replay_gives_the_makespan_the_run_had(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int,
                                                   lag: int, seed: int) -> None:
    run = _virtual_run(tmp_path, monkeypatch, "run", n, budget={"generations": 6},
                       algorithm={"pop_size": 12, "schedule": "steady", "lag": lag}, **{**NOISY, "seed": seed})
    parts = we.parts(run, duration=duration)
    assert parts.lag == lag and len(parts.genomes) == parts.told == 72
    assert len(parts.rounds) >= 3 and len(parts.tail) >= 1  # rounds during the search, and at its end
    replay = we.lagged(parts, n)
    assert replay.search_end == pytest.approx(_VirtualPool.ends[0], rel=1e-12)
    busy = we.steady_busy(parts) - sum(parts.recheck)
    assert busy == pytest.approx(_VirtualPool.busy_s, rel=1e-12)  # every simulation the pool ran is replayed
    assert replay.unused_s == pytest.approx(_VirtualPool.unused_s, rel=1e-12, abs=1e-12)
    assert _VirtualPool.stats[0].used > 0  # speculations ran and were used (at n = 8, some not: unused_s > 0)
    assert _VirtualPool.unused_s > 0 or n < 8


def test_a_generations_round_is_folded_in_lag_results_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _virtual_run(tmp_path, monkeypatch, "run", 4, budget={"generations": 5},
                       algorithm={"pop_size": 12, "schedule": "steady", "lag": 5}, **NOISY)
    rows = log_json(run)
    told, where = 0, {}
    for r in rows:
        if r["kind"] == "search" and r["supersedes"] is None:
            told += 1
        elif r["supersedes"] is not None:
            where.setdefault(r["generation"], told)
    # generation g's round starts when result 12 (g+1) - 1 is told and lands 5 results later (the
    # generational way, where the telling waits for it, would log it after 12 (g+1)); the last
    # generation's resampling runs at the end
    assert where == {0: 17, 1: 29, 2: 41, 3: 53, 4: 60}
    s = summary(run)
    assert [g["generation"] for g in s["generations"]] == [0, 1, 2, 3, 4]
    assert sum(g["resampled"] for g in s["generations"]) == s["n_resampled"] > 0
    # at the end every genome near the front has all its seeds (resampling ran until stable)
    front = set(s["front"])
    assert front and all(len(r["seeds"]) == 6 for r in rows if r["eval_id"] in front)


def test_resampling_keeps_the_workers_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eff = {}
    for speculate in (False, True):
        _virtual_run(tmp_path, monkeypatch, f"run-{speculate}", 16, budget={"generations": 8},
                     parallel={"speculate": speculate},
                     algorithm={"pop_size": 12, "schedule": "steady", "lag": 32}, **NOISY)
        eff[speculate] = _VirtualPool.busy_s / (16 * _VirtualPool.ends[0])
    # useful busy worker-time / worker-time on 16 virtual workers, the re-check left out: 0.881 without
    # speculation (the search that stopped telling during each generation's resampling, session 9, gave
    # 0.722; what is left is the ramp-up, the last results and the resampling at the end, round after
    # round), 0.934 with it (12.7 worker-s of speculation unused against 180.1 used)
    assert eff[False] > 0.85 and eff[True] > 0.92


# and a pool of worker processes killed under it ends cleanly (futures it cancelled could make loky's
# manager thread fail, and the interpreter then hang at exit; seen once in this test, not reproducible at will)
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_run_killed_with_a_round_out_resumes_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = write_study(tmp_path, budget={"generations": 5}, algorithm={"pop_size": 12, "schedule": "steady", "lag": 5},
                        **NOISY)
    whole = run_quiet(study, tmp_path / "whole", workers=2)
    real, calls = steady_module.SteadyLoop._fold, {"n": 0}

    def dying(self: Any, pool: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # generation 1's round: out since result 23 was told and the checkpoint after it
            raise KeyboardInterrupt
        real(self, pool)

    monkeypatch.setattr(steady_module.SteadyLoop, "_fold", dying)
    with pytest.raises(KeyboardInterrupt):
        run_quiet(study, tmp_path / "killed", workers=2)
    monkeypatch.setattr(steady_module.SteadyLoop, "_fold", real)
    assert summary(tmp_path / "killed")["generations"][-1]["generation"] == 1
    with contextlib.redirect_stderr(io.StringIO()):
        resumed = optimise_module.optimise(str(study), out=str(tmp_path / "killed"), resume=True, quiet=True)
    assert stable_rows(resumed) == stable_rows(whole)
    assert summary(resumed)["generations"] == summary(whole)["generations"]


def test_a_search_that_ends_at_a_generations_end_records_it_once(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    real = steady_module.SteadyLoop._breed

    def no_more(self: Any) -> Any:  # pymoo finds nothing new once 36 genomes are bred
        return None if self.bred >= 36 else real(self)

    monkeypatch.setattr(steady_module.SteadyLoop, "_breed", no_more)
    study = write_study(tmp_path, budget={"generations": 10},
                        algorithm={"pop_size": 12, "schedule": "steady", "lag": 5}, **NOISY)
    run = run_quiet(study, tmp_path / "run")
    s, rows = summary(run), log_json(run)
    # generation 2 is recorded when result 35 is told, its round then out; the search ends there, so
    # the round lands and resampling runs until stable at the end, counted in that same record
    assert s["n_told"] == 36 and s["stop_reason"] == "no_new_offspring"
    assert [g["generation"] for g in s["generations"]] == [0, 1, 2]
    assert sum(g["resampled"] for g in s["generations"]) == s["n_resampled"]
    last = [r for r in rows if r["supersedes"] is not None and r["generation"] == 2]
    assert s["generations"][-1]["resampled"] == sum(len(r["seeds"]) - len(
        next(p for p in rows if p["eval_id"] == r["supersedes"])["seeds"]) for r in last) > 0
    front = set(s["front"])
    assert front and all(len(r["seeds"]) == 6 for r in rows if r["eval_id"] in front)


def test_the_replay_places_genomes_told_from_an_earlier_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = {"scheduler.job_policy": {"type": "choice", "values": ["random", "first", "shortest", "smallest"]},
             "scheduler.backfilling": {"type": "bool", "values": ["none", "easy"]},
             "scheduler.min_nodes_on": {"type": "int", "low": 0, "high": 10},
             "scheduler.freq": {"type": "choice", "values": [0.5, 0.7, 1.0]}}
    run = _virtual_run(tmp_path, monkeypatch, "run", 3, search=small, budget={"generations": 8},
                       algorithm={"pop_size": 12, "schedule": "steady", "lag": 4}, **NOISY)
    parts = we.parts(run, duration=duration)
    # a genome bred again is told from its earlier row: no row in the log, so its place is guessed
    # (just before the first round logged early); the makespan is then close, not exact: here 1.7%
    # long (48.44 against 47.63); on other such runs 0.3% long or short
    assert len(parts.genomes) == parts.told == 96 and sum(1 for g in parts.genomes if g) < 90
    assert we.lagged(parts, 3).search_end == pytest.approx(_VirtualPool.ends[0], rel=0.03)
