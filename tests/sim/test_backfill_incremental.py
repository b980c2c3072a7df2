"""The incremental EASY reservation equals the general pass that releases every job and asks the allocator."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.sim.backfill import easy, easy_count
from paretosched.sim.readers.platform import build_platform, load_platform_spec
from tests.sim.test_invariants import (
    platforms,
    simulate,  # drawn runs in which no job fits: rejected
    workloads,
)

REAL = easy.reservation  # hypothesis reuses the fixture across examples: never wrap a wrapper


def _binding(twin, caps: dict[int, int]) -> dict[int, int]:
    """Caps matter only on processors with a free core (resources only shrink in a pass), and only
    below its free cores (a cap at or above them limits nothing)."""
    free = {p.idx: len(p.free) for p in twin.procs if p.free}
    return {i: v for i, v in caps.items() if i in free and v < free[i]}


def _held_checked(monkeypatch, calls: list[int]) -> None:
    """Check the counted pass (one-core processors, `easy_count.backfill_counted`) at its reservation
    and after every start against the general pass's caps, updated as `backfill` updates them."""
    ref_caps: dict[int, int] = {}
    ranked: list = []  # the pass's ranking, fixed at its reservation (as the pass's own)

    def check(twin, head, rsel, res, alloc, long):
        calls[0] += 1
        if alloc is None:  # the reservation: the general pass from scratch
            ref = REAL(twin, head, rsel, incremental=False)
            assert (ref is None) == (res is None)
            if ref is None:
                return
            assert ref[0] == res[0]
            ref_caps.clear()
            ref_caps.update(ref[1])
            ranked[:] = rsel.ranked()
        elif long:
            for p, k in alloc:
                if p.idx in ref_caps:
                    ref_caps[p.idx] -= k
        held = res[1]
        if twin.free_total:  # where the allocator's walk starts: the first processor with a free core
            for ff in twin.sched_state.get("first_free", {}).values():
                assert ff.first() == next(i for i, p in enumerate(ff.ranked) if p.free)
        want = _binding(twin, ref_caps)
        assert _binding(twin, easy_count.held_caps(ranked, held)) == want
        assert twin.free_total - held == easy._long_capacity(twin, ref_caps)

    monkeypatch.setattr(easy_count, "CHECK", check)


def _checked(monkeypatch) -> list[int]:
    """Run every reservation both ways and assert they agree where it can matter; returns a counter."""
    calls = [0]
    real = REAL
    _held_checked(monkeypatch, calls)

    def both(twin, head, rsel, incremental=True):
        fast = real(twin, head, rsel)
        ref = real(twin, head, rsel, incremental=False)
        assert (fast is None) == (ref is None)
        calls[0] += 1
        if fast is not None:
            assert fast[0] == ref[0]
            assert _binding(twin, fast[1]) == _binding(twin, ref[1])  # memory caps: on finite nodes
            finite = {n.idx for n in twin.nodes if n.mem_cap < math.inf}
            assert {i: v for i, v in fast[2].items() if i in finite} == {i: v for i, v in ref[2].items() if i in finite}
        return fast

    monkeypatch.setattr(easy, "reservation", both)
    return calls


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_incremental_reservation_equals_the_general_pass(monkeypatch, data):
    calls = _checked(monkeypatch)
    plat = data.draw(platforms())
    n_cores = build_platform(load_platform_spec(plat)).n_cores
    jobs = data.draw(workloads(n_cores))
    if data.draw(st.booleans()):  # the count-only case on a platform with memory: jobs without memory
        for j in jobs:
            j["mem_mb"] = 0.0
    # at 0: a job leaving one core free, a whole-platform job that must wait for it (a blocked head)
    # and a one-core job to backfill: in arrival order on more than one core, a reservation is compared
    def job(cores: int, run: int) -> dict:
        return {"submit_s": 0, "cores": cores, "run_s": run, "mem_mb": 0.0, "bw_gbs": 0.0}

    jobs = [job(max(1, n_cores - 1), 10), job(n_cores, 10), job(1, 1), *jobs]
    sched = {"job_policy": data.draw(st.sampled_from(["first", "shortest", "smallest"])),
             "resource_policy": data.draw(st.sampled_from(["high_gflops", "low_power"])), "backfilling": "easy",
             "power_off_idle_s": data.draw(st.sampled_from([None, 0.0, 5.0]))}
    cfg = config_from_dict({"platform": plat, "workload": {"jobs": jobs}, "scheduler": sched,
                            "model": {"interference": data.draw(st.sampled_from(["thesis", "none"]))}})
    simulate(cfg)
    if sched["job_policy"] == "first" and n_cores > 1:
        assert calls[0] > 0  # the comparison ran (an example without a blocked head compares nothing)


@pytest.mark.parametrize("policy", ["high_gflops", "low_power"])
def test_incremental_reservation_on_a_trace(monkeypatch, policy):
    calls = _checked(monkeypatch)
    cfg = config_from_dict({"platform": "homogeneous-64", "workload": {"path": "builtin:hpc2n-3k.swf.gz",
                                                                       "n_jobs": 400},
                            "scheduler": {"job_policy": "first", "resource_policy": policy, "backfilling": "easy"}})
    fast = simulate(cfg, record_jobs=True)
    assert calls[0] > 100  # the check ran on many passes
    monkeypatch.setattr(easy, "COUNTED", False)  # the same schedule from `backfill`'s caps
    ref = simulate(cfg, record_jobs=True)
    assert fast.jobs == ref.jobs and fast.metrics == ref.metrics
    plain = simulate(cfg)  # without the record (the path of searches and benchmarks)
    monkeypatch.setattr(easy, "COUNTED", True)
    assert simulate(cfg).metrics == plain.metrics == ref.metrics


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_counted_pass_on_one_core_processors_equals_the_general_pass(monkeypatch, data):
    # one-core processors without memory limits, of one speed or two: `backfill`'s counted pass
    calls = _checked(monkeypatch)
    n = data.draw(st.integers(2, 12))
    if data.draw(st.booleans()):
        plat = f"homogeneous-{n}"
    else:
        ptypes = {f"p{i}": {"cores": 1, "clock_ghz": c, "flops_per_cycle": 1, "power_w": w,
                            "mem_bw_gbs": data.draw(st.sampled_from([None, 8.0]))}
                  for i, (c, w) in enumerate([(1.0, 40.0), (2.0, 100.0)])}
        plat = {"name": "one-core", "processor_types": ptypes,
                "node_types": {"a": {"processors": {"p0": 1}}, "b": {"processors": {"p1": 1}}},
                "clusters": [{"name": "c", "nodes": {"a": n // 2, "b": n - n // 2}}]}
    jobs = data.draw(workloads(n))
    lead = [{"submit_s": 0, "cores": n - 1, "run_s": 10, "mem_mb": 0.0, "bw_gbs": 0.0},
            {"submit_s": 0, "cores": n, "run_s": 10, "mem_mb": 0.0, "bw_gbs": 0.0},
            {"submit_s": 0, "cores": 1, "run_s": 1, "mem_mb": 0.0, "bw_gbs": 0.0}]
    sched = {"job_policy": data.draw(st.sampled_from(["first", "shortest", "smallest"])),
             "resource_policy": data.draw(st.sampled_from(["high_gflops", "low_power"])), "backfilling": "easy",
             "power_off_idle_s": data.draw(st.sampled_from([None, 0.0, 5.0]))}
    cfg = config_from_dict({"platform": plat, "workload": {"jobs": lead + jobs}, "scheduler": sched,
                            "model": {"interference": data.draw(st.sampled_from(["thesis", "none"]))}})
    fast = simulate(cfg, record_jobs=True)
    if sched["job_policy"] == "first":
        assert calls[0] > 0
    monkeypatch.setattr(easy, "COUNTED", False)  # the same schedule from `backfill`'s caps
    ref = simulate(cfg, record_jobs=True)
    assert [(j["job_id"], j["start_s"], j["end_s"]) for j in fast.jobs] == \
        [(j["job_id"], j["start_s"], j["end_s"]) for j in ref.jobs]
    assert fast.metrics == ref.metrics


def test_counted_pass_keeps_a_short_job_off_slow_cores(monkeypatch):
    # one-core processors of two speeds: the 1-core job would end before the shadow time on a fast
    # core, but only a slow one is free, where it would delay the head; it must wait
    calls = _checked(monkeypatch)
    ptypes = {"p0": {"cores": 1, "clock_ghz": 1.0, "flops_per_cycle": 1, "power_w": 40.0},
              "p1": {"cores": 1, "clock_ghz": 2.0, "flops_per_cycle": 1, "power_w": 100.0}}
    plat = {"name": "one-core", "processor_types": ptypes,
            "node_types": {"a": {"processors": {"p0": 1}}, "b": {"processors": {"p1": 1}}},
            "clusters": [{"name": "c", "nodes": {"a": 2, "b": 2}}]}
    jobs = [{"submit_s": 0, "cores": c, "run_s": r, "mem_mb": 0.0, "bw_gbs": 0.0} for c, r in [(3, 10), (4, 10), (1,
                                                                                                                  12)]]
    cfg = config_from_dict({"platform": plat, "workload": {"jobs": jobs},
                            "scheduler": {"job_policy": "first", "resource_policy": "high_gflops",
                                          "backfilling": "easy"},
                            "model": {"interference": "none"}})
    starts = {j["job_id"]: j["start_s"] for j in simulate(cfg, record_jobs=True).jobs}
    assert calls[0] > 0
    assert starts == {1: 0.0, 2: 15.0, 3: 30.0}


@pytest.mark.parametrize("backfilling", ["easy", "conservative"])
def test_finished_twins_are_collected(backfilling):
    # the end order was kept in a module-level map whose values pointed back at their twin: every
    # EASY run (each RL episode, each evaluation) stayed in memory
    import gc

    from paretosched.sim.engine.twin import Twin

    cfg = config_from_dict({"platform": "homogeneous-64", "workload": {"path": "builtin:hpc2n-3k.swf.gz",
                                                                       "n_jobs": 200},
                            "scheduler": {"job_policy": "first", "backfilling": backfilling}})
    for _ in range(3):
        simulate(cfg)
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, Twin)]
