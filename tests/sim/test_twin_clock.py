"""The twin's clock loop: SimPy's order of events, and a clock stuck at one instant is an error."""

from __future__ import annotations

import numpy as np
import pytest

import paretosched.sim.engine.twin as twin_mod
from paretosched.config import config_from_dict
from paretosched.sim.engine.twin import ClockStuck, Twin, make_rng
from paretosched.sim.readers.platform import fits_factory
from paretosched.sim.readers.workload import build_jobs
from paretosched.sim.run import prepare
from paretosched.sim.schedulers import build_scheduler


def _twin(jobs: list[dict]) -> tuple[Twin, object]:
    cfg = config_from_dict({"platform": "homogeneous-4", "workload": {"jobs": jobs},
                            "scheduler": {"job_policy": "first", "resource_policy": "high_gflops",
                                          "backfilling": "easy"}})
    prep = prepare(cfg)
    js, _ = build_jobs(prep.raw, "trace", prep.platform.ref_speed, np.random.default_rng(0),
                       fits_factory(prep.platform))
    return Twin(prep.platform, js, cfg.model, cfg.scheduler), cfg.scheduler


def _loop_forever(tw: Twin) -> None:
    # a scheduler that starts nothing and asks again at the same instant: the clock never moves
    ev = tw.env.timeout(0)
    ev.callbacks.append(lambda _ev: tw.request_decision())


@pytest.mark.timeout(60)  # without the guard this loops for ever: fail, do not hang the suite
def test_a_clock_stuck_at_one_instant_raises(monkeypatch):
    monkeypatch.setattr(twin_mod, "STUCK_EVENTS", 1 << 17)
    tw, _ = _twin([{"id": 1, "submit_s": 0, "cores": 1, "run_s": 10}])
    tw.decide = _loop_forever
    with pytest.raises(ClockStuck, match=r"stayed at t=0 s for 131,072 events"):  # submits start at 0
        tw.run()


def _schedule(jobs: list[dict]) -> tuple[list[tuple], float]:
    tw, spec = _twin(jobs)
    tw.decide = build_scheduler(tw, spec, make_rng(np.random.SeedSequence(0))).decide
    tw.run()
    return sorted((j.id, j.start, j.end, j.nodes) for j in tw.done), tw.energy


def test_the_guarded_loop_runs_simpys_order_and_a_moving_clock_passes(monkeypatch):
    # the clock looked at every 256 events: far tighter than the real guard, and every instant
    # of this run (up to 4 jobs ending, one arriving) takes far fewer events
    jobs = [{"id": k, "submit_s": k // 3, "cores": 1 + k % 4, "run_s": 1 + (7 * k) % 13} for k in range(1, 3001)]
    monkeypatch.setattr(twin_mod, "STUCK_EVENTS", 256)
    guarded = _schedule(jobs)
    monkeypatch.setattr(twin_mod, "run_clock", lambda env, until: env.run(until=until))
    assert guarded == _schedule(jobs)  # SimPy's own loop: the same schedule and energy, bit for bit
    assert len(guarded[0]) == 3000


def test_a_scheduler_that_never_starts_a_job_is_reported_not_hung():
    tw, _ = _twin([{"id": 7, "submit_s": 0, "cores": 1, "run_s": 10}])
    tw.decide = lambda _tw: None  # the queue never empties, nothing else happens: the events run out
    with pytest.raises(RuntimeError, match="job 7 never completed"):
        tw.run()
