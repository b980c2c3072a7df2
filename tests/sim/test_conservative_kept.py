"""Conservative backfilling's group profile from kept releases equals one built part by part."""

from __future__ import annotations

from contextlib import nullcontext
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.config import JOB_POLICIES, RESOURCE_POLICIES, config_from_dict
from paretosched.sim.backfill.conservative import decide as cons
from paretosched.sim.backfill.conservative import profile
from paretosched.sim.backfill.conservative.kept import Releases
from paretosched.sim.readers import workload
from paretosched.sim.readers.platform import build_platform, load_platform_spec
from tests.sim.test_invariants import loose_jobs, platforms, simulate, workloads


def _checked(cfg, no_mem: bool = False):
    """The run with every profile compared to a fresh build (and its kept builds counted), and
    the same run building every profile part by part."""
    kept = []
    real = cons._verify_profile
    zero = mock.patch.object(workload, "_mem_mb", lambda raw, i: 0.0) if no_mem else nullcontext()
    with zero, mock.patch.object(cons._Cache, "verify", True), \
            mock.patch.object(cons, "_verify_profile", lambda a, b: kept.append(1) or real(a, b)):
        checked = simulate(cfg, record_jobs=True)
    zero = mock.patch.object(workload, "_mem_mb", lambda raw, i: 0.0) if no_mem else nullcontext()
    with zero, mock.patch.object(cons._Cache, "releases", lambda self, twin, est: None):
        fresh = simulate(cfg, record_jobs=True)
    assert [(j["start_s"], j["core_ids"]) for j in checked.jobs] == [(j["start_s"], j["core_ids"]) for j in fresh.jobs]
    assert checked.metrics == fresh.metrics
    return len(kept)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kept_releases_give_the_fresh_profile_at_every_decision(data):
    # random heterogeneous platforms, loose estimates (jobs end early) and interference (jobs are
    # re-timed), with and without memory: every profile is compared to a fresh build
    plat = data.draw(platforms())
    jobs, no_mem = loose_jobs(data, plat)
    cfg = config_from_dict({
        "platform": plat, "workload": {"jobs": jobs},
        "model": {"interference": data.draw(st.sampled_from(["thesis", "proportional", "none"]))},
        "scheduler": {"job_policy": data.draw(st.sampled_from(JOB_POLICIES)),
                      "resource_policy": data.draw(st.sampled_from(RESOURCE_POLICIES)),
                      "backfilling": "conservative",
                      "power_off_idle_s": data.draw(st.sampled_from([None, 0.0, 5.0]))}})
    _checked(cfg)


def _bundled(job_policy: str, resource_policy: str, interference: str, levers: dict | None = None):
    return config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 500},
                             "model": {"interference": interference},
                             "scheduler": {"job_policy": job_policy, "resource_policy": resource_policy,
                                           "backfilling": "conservative", **(levers or {})}})


def _count_kept(monkeypatch) -> list[bool]:
    """Each decision's answer to whether the last decision's profile is still the one to use."""
    asked = []
    real = cons.still_fresh

    def counting(*args):
        asked.append(real(*args))
        return asked[-1]
    monkeypatch.setattr(cons, "still_fresh", counting)
    return asked


@pytest.mark.parametrize("levers", [None, {"power_off_idle_s": 0.0, "boot_s": 30.0}])
def test_a_profile_kept_from_the_last_decision_equals_a_build(levers, monkeypatch):
    # where nothing but the time changed since the last decision its profile is used again (its
    # first step moved): checked against a fresh build at every decision, the same schedule
    asked = _count_kept(monkeypatch)
    assert _checked(_bundled("first", "high_gflops", "thesis", levers), no_mem=True) > 200
    assert sum(asked) > 30


def _always_kept(prof, cache, twin, now, est, holds):
    # a broken test: the profile kept whenever no job began or ended, reservations due or not
    prof.times[0] = now
    return True


def _kept_unmoved(prof, cache, twin, now, est, holds):
    # a broken move: the profile kept with its first step left at the last decision's time
    t = prof.times[0]
    return real_still_fresh(prof, cache, twin, now, est, holds) and not prof.times.__setitem__(0, t)


real_still_fresh = cons.still_fresh


@pytest.mark.parametrize("broken", [_always_kept, _kept_unmoved])
def test_the_check_catches_a_profile_kept_wrong(broken, monkeypatch):
    monkeypatch.setattr(cons, "still_fresh", broken)
    monkeypatch.setattr(workload, "_mem_mb", lambda raw, i: 0.0)
    monkeypatch.setattr(cons._Cache, "verify", True)
    with pytest.raises(AssertionError, match="differs from a fresh build"):
        simulate(_bundled("first", "high_gflops", "thesis"))


@pytest.mark.parametrize("pair", [("first", "high_gflops", "thesis"), ("random", "low_power", "proportional"),
                                  ("smallest", "high_mem", "none")])
def test_kept_releases_on_a_trace_without_memory(pair):
    # the bundled HPC2N window on gaia-mini with memory dropped (so the kept path is taken):
    # hundreds of decisions, each profile equal to a fresh build, and the same schedule
    assert _checked(_bundled(*pair), no_mem=True) > 200


def _forget_retimed(self, twin, est):
    # a broken update: jobs re-timed (still running, filed before) are not re-filed
    for job in [j for j in self.marks if j in self.of_job and j in twin.running]:
        del self.marks[job]
    real_sync(self, twin, est)


real_sync = Releases.sync


def _forget_ended(self, twin, est):
    # a broken update: jobs that ended stay filed
    for job in [j for j in self.marks if j not in twin.running]:
        del self.marks[job]
    real_sync(self, twin, est)


@pytest.mark.parametrize("broken", [_forget_retimed, _forget_ended])
def test_the_check_catches_releases_kept_wrong(broken, monkeypatch):
    monkeypatch.setattr(Releases, "sync", broken)
    monkeypatch.setattr(workload, "_mem_mb", lambda raw, i: 0.0)
    monkeypatch.setattr(cons._Cache, "verify", True)
    with pytest.raises(AssertionError, match="differs from a fresh build"):
        simulate(_bundled("first", "high_gflops", "thesis"))


def test_the_check_catches_free_memory_kept_wrong(monkeypatch):
    # each node's free memory is kept from the twin's node marks: drop those and the check against
    # the nodes at each decision disagrees (the bundled window, whose jobs ask memory)
    from paretosched.sim.engine.state import NodeState

    real = cons._Cache.free_by_group

    def no_node_marks(self, twin):
        if self._dirty:
            for x in [x for x in self._dirty if x.__class__ is NodeState]:
                del self._dirty[x]
        return real(self, twin)
    monkeypatch.setattr(cons._Cache, "free_by_group", no_node_marks)
    monkeypatch.setattr(cons._Cache, "verify", True)
    with pytest.raises(AssertionError, match="free memory per node differs"):
        simulate(_bundled("first", "high_gflops", "thesis"))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_memory_kept_as_one_row_gives_the_same_schedule(data):
    # memory per node is kept as one row until a reservation holds some (then made a matrix):
    # the same schedules as building every memory profile as a matrix, on random platforms whose
    # nodes have memory limits, jobs with and without memory
    plat = data.draw(platforms())
    for nt in plat["node_types"].values():
        nt["memory_gb"] = data.draw(st.sampled_from([4.0, 16.0]))
    n_cores = build_platform(load_platform_spec(plat)).n_cores
    jobs = data.draw(workloads(n_cores, zero_runs=False))
    cfg = config_from_dict({
        "platform": plat, "workload": {"jobs": jobs}, "model": {"interference": "none"},
        "scheduler": {"job_policy": data.draw(st.sampled_from(JOB_POLICIES)),
                      "resource_policy": data.draw(st.sampled_from(RESOURCE_POLICIES)),
                      "backfilling": "conservative"}})
    flat = simulate(cfg, record_jobs=True)
    with mock.patch.object(profile.Profile, "flat_mem", False):
        full = simulate(cfg, record_jobs=True)
    assert [(j["start_s"], j["core_ids"]) for j in flat.jobs] == [(j["start_s"], j["core_ids"]) for j in full.jobs]
