"""The incremental EASY reservation equals the general pass that releases every job and asks the allocator."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.sim import backfill
from tests.sim.test_invariants import simulate  # drawn runs in which no job fits: rejected
from paretosched.sim.platform import build_platform, load_platform_spec
from tests.sim.test_invariants import platforms, workloads

REAL = backfill.reservation  # hypothesis reuses the fixture across examples: never wrap a wrapper


def _checked(monkeypatch) -> list[int]:
    """Run every reservation both ways and assert they agree where it can matter; returns a counter."""
    calls = [0]
    real = REAL

    def both(twin, head, rsel, incremental=True):
        fast = real(twin, head, rsel)
        ref = real(twin, head, rsel, incremental=False)
        assert (fast is None) == (ref is None)
        calls[0] += 1
        if fast is not None:
            assert fast[0] == ref[0]
            # caps matter only on processors with a free core (resources only shrink in a pass),
            # and only below its free cores (a cap at or above them limits nothing); memory caps
            # only on nodes with finite memory
            free = {p.idx: len(p.free) for p in twin.procs if p.free}

            def binding(caps: dict[int, int]) -> dict[int, int]:
                return {i: v for i, v in caps.items() if i in free and v < free[i]}

            assert binding(fast[1]) == binding(ref[1])
            finite = {n.idx for n in twin.nodes if n.mem_cap < math.inf}
            assert {i: v for i, v in fast[2].items() if i in finite} == {i: v for i, v in ref[2].items() if i in finite}
        return fast

    monkeypatch.setattr(backfill, "reservation", both)
    return calls


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
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
    cfg = config_from_dict({"platform": "homogeneous-64", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 400},
                            "scheduler": {"job_policy": "first", "resource_policy": policy, "backfilling": "easy"}})
    simulate(cfg)
    assert calls[0] > 100  # the check ran on many passes


@pytest.mark.parametrize("backfilling", ["easy", "conservative"])
def test_finished_twins_are_collected(backfilling):
    # the end order was kept in a module-level map whose values pointed back at their twin: every
    # EASY run (each RL episode, each evaluation) stayed in memory
    import gc

    from paretosched.sim.twin import Twin

    cfg = config_from_dict({"platform": "homogeneous-64", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 200},
                            "scheduler": {"job_policy": "first", "backfilling": backfilling}})
    for _ in range(3):
        simulate(cfg)
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, Twin)]
