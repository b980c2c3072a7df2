"""Conservative backfilling skips the jobs that provably cannot move earlier: never one that could."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.config import JOB_POLICIES, RESOURCE_POLICIES, config_from_dict
from paretosched.sim.backfill.conservative import decide as cons
from paretosched.sim.backfill.conservative.plan import Plan
from paretosched.sim.readers.platform import build_platform, load_platform_spec
from tests.sim.test_invariants import platforms, simulate, workloads


def _run(data):
    plat = data.draw(platforms())
    n_cores = build_platform(load_platform_spec(plat)).n_cores
    jobs = data.draw(workloads(n_cores, zero_runs=data.draw(st.booleans())))
    # loose estimates (jobs end early, so reservations move) and interference (jobs are re-timed)
    for j in jobs:
        if j["req_s"] and data.draw(st.booleans()):
            j["req_s"] = j["req_s"] * data.draw(st.sampled_from([2, 5]))
    return config_from_dict({
        "platform": plat, "workload": {"jobs": jobs},
        "model": {"interference": data.draw(st.sampled_from(["thesis", "proportional", "none"]))},
        "scheduler": {"job_policy": data.draw(st.sampled_from(JOB_POLICIES)),
                      "resource_policy": data.draw(st.sampled_from(RESOURCE_POLICIES)),
                      "backfilling": "conservative"}})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_skipped_job_has_no_earlier_start(data):
    # every job skipped as stuck is checked against a full count of its earlier starts, and the
    # free cores per group kept from the twin's marks against a fresh count, at every decision
    cfg = _run(data)
    with mock.patch.object(cons._Cache, "verify", True):
        checked = simulate(cfg, record_jobs=True)
    # and skipping changes no schedule: the same run examining every job
    with mock.patch.object(Plan, "still_stuck", lambda self, job, limit: False):
        full = simulate(cfg, record_jobs=True)
    assert [(j["start_s"], j["core_ids"]) for j in checked.jobs] == [(j["start_s"], j["core_ids"]) for j in full.jobs]


def _bundled(job_policy: str, resource_policy: str, interference: str, n_jobs: int = 600):
    return config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": n_jobs},
                             "model": {"interference": interference},
                             "scheduler": {"job_policy": job_policy, "resource_policy": resource_policy,
                                           "backfilling": "conservative"}})


@pytest.mark.parametrize("pair", [("first", "high_gflops", "thesis", 600), ("random", "random", "proportional", 400),
                                  ("smallest", "high_mem", "none", 600)])
def test_skips_on_a_trace_are_right_and_change_nothing(pair):
    # thousands of skips per run on the bundled HPC2N window (random draws included): each checked
    # by a full count, and the schedule equal to the one examining every job
    cfg = _bundled(*pair)
    skips = []
    real = cons.verify_stuck
    with mock.patch.object(cons._Cache, "verify", True), \
            mock.patch.object(cons, "verify_stuck", lambda *a: skips.append(1) or real(*a)):
        checked = simulate(cfg, record_jobs=True)
    with mock.patch.object(Plan, "still_stuck", lambda self, job, limit: False):
        full = simulate(cfg, record_jobs=True)
    assert len(skips) > 1000
    assert [(j["start_s"], j["core_ids"]) for j in checked.jobs] == [(j["start_s"], j["core_ids"]) for j in full.jobs]
    assert checked.metrics == full.metrics


def test_trimming_the_given_back_log_keeps_skips_right(monkeypatch):
    # trimmed at almost every decision (the real bound trims a run of the bundled window rarely)
    import paretosched.sim.backfill.conservative.plan as plan_module

    cfg = _bundled("random", "random", "proportional", 400)
    monkeypatch.setattr(plan_module, "TRIM_GIVEN", 4)
    with mock.patch.object(cons._Cache, "verify", True):
        checked = simulate(cfg, record_jobs=True)
    with mock.patch.object(Plan, "still_stuck", lambda self, job, limit: False):
        full = simulate(cfg, record_jobs=True)
    assert [(j["start_s"], j["core_ids"]) for j in checked.jobs] == [(j["start_s"], j["core_ids"]) for j in full.jobs]


def _forget_jobs_that_changed(self, twin, est):
    self.changed = []
    self.release = dict(est)
    self.at = twin.now


def _forget_all_given_back(self, job, limit):
    return job in self.stuck


@pytest.mark.parametrize("broken", [_forget_jobs_that_changed, _forget_all_given_back])
def test_the_check_catches_cores_given_back_unseen(broken, monkeypatch):
    # the bound must count every core given back: forget some and the check finds a skipped job
    # that could have moved (the bundled HPC2N window on gaia-mini)
    monkeypatch.setattr(Plan, "count_given" if broken is _forget_jobs_that_changed else "still_stuck", broken)
    monkeypatch.setattr(cons._Cache, "verify", True)
    with pytest.raises(AssertionError, match="skipped as stuck"):
        simulate(_bundled("first", "high_gflops", "thesis"))


def test_the_check_catches_free_counts_kept_wrong(monkeypatch):
    # the free cores per group are kept from the twin's processor marks: drop the marks and the
    # fresh count at each decision disagrees
    real = cons._Cache.free_by_group

    def unmarked(self, twin):
        if self._dirty:
            self._dirty.clear()
        return real(self, twin)
    monkeypatch.setattr(cons._Cache, "free_by_group", unmarked)
    monkeypatch.setattr(cons._Cache, "verify", True)
    with pytest.raises(AssertionError, match="free cores per group differ"):
        simulate(_bundled("first", "high_gflops", "thesis"))


def test_the_check_catches_totals_left_behind(monkeypatch):
    # a kept job without memory that finds a row gives its cores back in the totals late
    # (`Profile.give_totals`): skip that and the totals checked against the matrix after each pass
    # disagree, or a later job is skipped on totals too low (memory dropped: a reservation holding
    # memory is given back whole at once)
    from paretosched.sim.backfill.conservative.profile import Profile
    from paretosched.sim.readers import workload

    monkeypatch.setattr(workload, "_mem_mb", lambda raw, i: 0.0)
    monkeypatch.setattr(Profile, "give_totals", lambda self, a, b, size: None)
    monkeypatch.setattr(cons._Cache, "verify", True)
    with pytest.raises(AssertionError, match="totals differ|skipped as stuck"):
        simulate(_bundled("first", "high_gflops", "thesis"))
