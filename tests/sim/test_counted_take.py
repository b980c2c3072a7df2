"""The one-core shortcut of a static ranking's allocation (`policies.COUNTED_TAKE`): the first free
processors in rank order, as `taking.take` finds them one part at a time; the same schedules."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.sim.engine.state import build_state
from paretosched.sim.placement import policies
from paretosched.sim.placement.taking import take
from paretosched.sim.run import prepare, simulate


class _Job:
    def __init__(self, size, mem=0.0, bw=0.0):
        self.size, self.mem, self.bw = size, mem, bw


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(1, 45), st.sampled_from(["high_gflops",
                                                                                              "low_power"]),
       st.floats(0, 100))
def test_shortcut_is_take(busy, size, name, mem):
    prep = prepare(config_from_dict({"platform": f"homogeneous-{len(busy)}", "workload": {"jobs": [{"run_s": 1}]}}))
    _, procs = build_state(prep.platform, 0.25, 0.05, 0.3, 1.0, {})
    for p, b in zip(procs, busy):
        if b:
            p.free.clear()
    rsel = policies.resource_selector(name, procs, random.Random(0), None)
    assert rsel._counted
    job = _Job(size, mem)
    assert rsel.allocate(job) == take(rsel.ranked(), job, None, None, None)


@pytest.mark.parametrize("backfilling", ["none", "easy", "conservative"])
@pytest.mark.parametrize("resource,levers", [("high_gflops", {}), ("low_power", {"power_off_idle_s": 600.0})])
def test_same_schedule_without_the_shortcut(backfilling, resource, levers, monkeypatch):
    cfg = config_from_dict({"platform": "homogeneous-128", "seed": 2,
                            "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 500},
                            "scheduler": {"job_policy": "smallest", "resource_policy": resource,
                                          "backfilling": backfilling, **levers}})
    one = simulate(cfg, record_jobs=True)
    monkeypatch.setattr(policies, "COUNTED_TAKE", False)
    two = simulate(cfg, record_jobs=True)
    assert one.jobs == two.jobs and one.metrics == two.metrics
    assert one.metrics["energy_j"].hex() == two.metrics["energy_j"].hex()
