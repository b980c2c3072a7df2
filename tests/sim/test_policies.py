"""Resource-policy semantics that hand-worked schedules do not pin down."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.sim.run import simulate
from tests.sim.test_invariants import _random_run
from tests.sim.test_invariants import simulate as simulate_or_reject  # drawn runs where no job fits: rejected

# one processor of 1 core and one of 3 cores (same speed and power)
PLAT = {"name": "t", "node_types": {"n": {"processors": {"a": 1, "b": 1}}}, "clusters": [{"name": "c",
                                                                                          "nodes": {"n": 1}}],
        "processor_types": {"a": {"cores": 1, "clock_ghz": 1, "flops_per_cycle": 1, "power_w": 10},
                            "b": {"cores": 3, "clock_ghz": 1, "flops_per_cycle": 1, "power_w": 30}}}


def test_random_policy_picks_a_uniformly_random_free_core():
    cfg = config_from_dict({"platform": PLAT, "workload": {"jobs": [{"cores": 1, "run_s": 1}]},
                            "scheduler": {"resource_policy": "random"}})
    on_b = sum(simulate(cfg, seed=s, record_jobs=True).jobs[0]["core_ids"] != "0" for s in range(600))
    # P(core on b) = 3/4; 600 draws: sd ~ 0.018, so +-0.07 is ~4 sd
    assert abs(on_b / 600 - 0.75) < 0.07


def test_random_policy_takes_the_rest_of_the_processor_first():
    # a 2-core job starting on b takes a second core of b, not a's only core
    cfg = config_from_dict({"platform": PLAT, "workload": {"jobs": [{"cores": 2, "run_s": 1}]},
                            "scheduler": {"resource_policy": "random"}})
    layouts = {simulate(cfg, seed=s, record_jobs=True).jobs[0]["core_ids"] for s in range(200)}
    # a first (1/4): a + one core of b; b first (3/4): two cores of b
    assert layouts <= {"0 1", "1 2"} and layouts == {"0 1", "1 2"}


# -- the dynamic policies' incremental index against a full re-ranking per core -----------------

def _rerank_per_core(sel, job, limits, mem_limits):
    """Reference: before every core, rank all processors by (power rank, -value, idx) from scratch."""
    import math

    from paretosched.sim.placement.taking import power_rank as _power_rank
    from paretosched.sim.placement.taking import take_once as _take_once

    if _take_once([p for p in sel.procs if p.free], job.size, job.mem, limits, mem_limits) is None:
        return None
    taken, node_mem, need = {}, {}, job.size

    def mem_left(node):
        if node in node_mem:
            return node_mem[node]
        left = node.mem_free
        if mem_limits is not None and node.idx in mem_limits:
            left = min(left, mem_limits[node.idx])
        return left

    def value(p):
        have = taken.get(p, 0)
        return {"high_cores": lambda: len(p.free) - have, "high_mem": lambda: mem_left(p.node),
                "high_mem_bw": lambda: p.bw_cap - p.bw_used - have * job.bw}[sel.name]()

    def room(p, cap):
        have = taken.get(p, 0)
        if have >= len(p.free) or (limits is not None and have >= limits.get(p.idx, have + 1)):
            return False
        if job.mem > 0 and p.node.mem_cap < math.inf and mem_left(p.node) < job.mem - 1e-9:
            return False
        return cap is None or p.bw_used + (have + 1) * job.bw <= cap * p.bw_cap + 1e-9

    for cap in ((sel.bw_cap, None) if sel.bw_cap is not None and job.bw > 0 else (None,)):
        while need:
            fits = [p for p in sel.procs if room(p, cap)]
            if not fits:
                break
            p = min(fits, key=lambda p: (_power_rank(p) if sel.prefer_on else 0, -value(p), p.idx))
            taken[p] = taken.get(p, 0) + 1
            if job.mem > 0 and p.node.mem_cap < math.inf:
                node_mem[p.node] = mem_left(p.node) - job.mem
            need -= 1
    return None if need else list(taken.items())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_dynamic_policies_pick_as_a_full_rerank_per_core(data):
    from paretosched.sim.placement import policies

    levers = {"power_off_idle_s": data.draw(st.sampled_from([None, 0.0, 5.0])),
              "boot_s": data.draw(st.sampled_from([0.0, 4.0])),
              "bw_cap": data.draw(st.sampled_from([None, 0.5, 1.0]))}
    plat, _, cfg = _random_run(data, levers)
    policy = data.draw(st.sampled_from(["high_cores", "high_mem", "high_mem_bw"]))
    cfg = cfg.model_copy(update={"scheduler": cfg.scheduler.model_copy(update={"resource_policy": policy})})
    original = policies._Spreading.allocate
    calls = []

    def checked(self, job, limits=None, mem_limits=None, ranked=None):
        got = original(self, job, limits, mem_limits, ranked)
        assert got == _rerank_per_core(self, job, limits, mem_limits)
        calls.append(got is not None)
        return got

    with pytest.MonkeyPatch.context() as m:
        m.setattr(policies._Spreading, "allocate", checked)
        res = simulate_or_reject(cfg, seed=data.draw(st.integers(0, 3)))
    assert any(calls) == (res.load["loaded"] > 0)  # every loaded job was placed by the policy


@pytest.mark.parametrize("policy", ["high_cores", "high_mem", "high_mem_bw"])
def test_dynamic_policies_rebuilding_the_index_every_call_changes_nothing(policy):
    from paretosched.sim.placement import policies, spreading

    cfg = config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "mode": "hdeeprm",
                                                                  "n_jobs": 300},
                            "scheduler": {"job_policy": "first", "resource_policy": policy, "backfilling": "easy",
                                          "power_off_idle_s": 60.0}})
    kept = simulate(cfg, seed=1).metrics
    original = policies._Spreading.allocate
    calls = []

    def checked(self, job, limits=None, mem_limits=None, ranked=None):
        got = original(self, job, limits, mem_limits, ranked)
        assert got == _rerank_per_core(self, job, limits, mem_limits)
        calls.append(len(self._index.heap))
        return got

    with pytest.MonkeyPatch.context() as m:
        m.setattr(spreading, "_HEAP_SLACK", 0)
        m.setattr(spreading, "_HEAP_MIN", 0)
        m.setattr(policies._Spreading, "allocate", checked)
        rebuilt = simulate(cfg, seed=1).metrics
    assert len(calls) >= 300 and rebuilt == kept


# -- policies as strategy objects: one class per name the user writes ---------------------------

def test_every_policy_name_in_the_config_has_exactly_one_strategy_class():
    import random

    from paretosched.config import JOB_POLICIES, RESOURCE_POLICIES
    from paretosched.sim.placement import policies

    assert sorted(policies.JOB_SELECTORS) == sorted(JOB_POLICIES)
    assert sorted(policies.RESOURCE_SELECTORS) == sorted(RESOURCE_POLICIES)
    assert all(c.name == n for n, c in policies.RESOURCE_SELECTORS.items())
    rng = random.Random(0)
    assert [type(policies.job_selector(n, rng)).__name__ for n in ("first", "random", "low_mem_bw")] == \
        ["FirstCome", "RandomJob", "ByKey"]


def _queue():
    from types import SimpleNamespace as J

    return [J(seq=0, req_time=50, size=4, mem=2.0, bw=1.0), J(seq=1, req_time=10, size=8, mem=1.0, bw=3.0),
            J(seq=2, req_time=10, size=2, mem=3.0, bw=2.0)]


@pytest.mark.parametrize("name,head,order", [("first", 0, [0, 1, 2]), ("shortest", 1, [1, 2, 0]),
                                             ("smallest", 2, [2, 0, 1]), ("low_mem", 1, [1, 0, 2]),
                                             ("low_mem_bw", 0, [0, 2, 1])])
def test_job_policies_pick_by_their_key_ties_on_arrival(name, head, order):
    import random

    from paretosched.sim.placement.policies import job_selector

    sel, q = job_selector(name, random.Random(0)), _queue()
    assert sel.head(q).seq == head and [j.seq for j in sel.order(q)] == order


def test_random_job_policy_draws_from_the_runs_stream():
    import random

    from paretosched.sim.placement.policies import job_selector

    q = _queue()
    a, b = random.Random(7), random.Random(7)
    sel = job_selector("random", a)
    assert sel.head(q) is q[b.randrange(3)]
    shuffled = list(q)
    b.shuffle(shuffled)
    assert sel.order(q) == shuffled and [j.seq for j in q] == [0, 1, 2]  # the queue itself is not reordered


def test_static_and_dynamic_rankings_on_a_twin():
    import random

    from paretosched.sim.engine.twin import Twin
    from paretosched.sim.placement.policies import resource_selector
    from paretosched.sim.run import prepare

    cfg = config_from_dict({"platform": PLAT, "workload": {"jobs": [{"cores": 1, "run_s": 1}]}})
    procs = Twin(prepare(cfg).platform, [], cfg.model, cfg.scheduler).procs
    a, b = procs  # a: 1 core, b: 3 cores, same speed and power per core
    gflops = resource_selector("high_gflops", procs, random.Random(0), None)
    assert gflops.static and gflops.ranked() == [a, b] and sorted([b, a], key=gflops.rank_pos()) == [a, b]
    cores = resource_selector("high_cores", procs, random.Random(0), None)
    assert not cores.static and cores.ranked() == [b, a]
    with pytest.raises(TypeError):
        cores.rank_pos()


def test_every_backfilling_name_builds_its_strategy_once():
    from typing import get_args

    from paretosched.config import ClassicScheduler, RLScheduler
    from paretosched.sim.backfill.strategies import BACKFILLINGS, Conservative, Easy, backfill_strategy

    names = set(get_args(ClassicScheduler.model_fields["backfilling"].annotation))
    assert set(BACKFILLINGS) == names == {"none", "easy", "conservative"}
    assert set(get_args(RLScheduler.model_fields["backfilling"].annotation)) <= names
    assert isinstance(backfill_strategy("easy"), Easy) and isinstance(backfill_strategy("conservative"), Conservative)
    assert type(backfill_strategy("none")).__name__ == "Backfilling" and backfill_strategy("easy").name == "easy"
