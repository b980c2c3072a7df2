"""Resource-policy semantics that hand-worked schedules do not pin down."""

from __future__ import annotations

from paretosched.config import config_from_dict
from paretosched.sim.run import simulate

# one processor of 1 core and one of 3 cores (same speed and power)
PLAT = {"name": "t", "node_types": {"n": {"processors": {"a": 1, "b": 1}}}, "clusters": [{"name": "c", "nodes": {"n": 1}}],
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
