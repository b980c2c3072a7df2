"""Property (issue 29): every successful simulation's metrics are finite, non-negative and at or above
their floors, over generated platforms, configs and small traces that reach the edges of every range
the schemas allow (1 MHz and 1 THz clocks, 1 mW and 1 GW processors, instant and 300-year boots, jobs
of 0 s). A run may also be refused with a one-line UserError; it may never report inf, NaN or zeros."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.config import JOB_POLICIES, RESOURCE_POLICIES, config_from_dict
from paretosched.errors import UserError
from paretosched.sim.engine.metrics import METRIC_NAMES
from paretosched.sim.readers.platform import build_platform, load_platform_spec
from paretosched.sim.readers.workload import MIN_RUN_S
from paretosched.sim.run import simulate

EPS = 1e-9
# the metrics that are ratios bounded below by 1 whatever the platform (bounded slowdowns)
BSLD = [k for k in METRIC_NAMES if "bsld" in k]
# slowdowns charged against a run time: at least 1 on cores no faster than the platform's reference
# speed; a faster core (heterogeneous platforms) can beat the reference, by at most its speed ratio
SLOWDOWN = [k for k in METRIC_NAMES if "slowdown" in k]


@st.composite
def processor_types(draw):
    f_min = draw(st.sampled_from([0.0, 0.01, 0.55, 1.0]))
    pt = {"cores": draw(st.integers(1, 3)),
          "clock_ghz": draw(st.sampled_from([1e-3, 0.8, 2.4, 1e3])),
          "flops_per_cycle": draw(st.sampled_from([0.01, 4.0, 16.0, 1e4])),
          "mem_bw_gbs": draw(st.sampled_from([None, 1e-3, 24.0, 1e9])),
          "power_w": draw(st.sampled_from([1e-3, 95.0, 1e9])),
          "f_min": f_min}
    if draw(st.booleans()):
        low = max(f_min, 0.01)
        pt["dvfs_table"] = [[low, draw(st.sampled_from([1e-9, 0.3, 1.0]))], [1.0, 1.0]] if low < 1 else [[1.0, 1.0]]
    return pt


@st.composite
def platforms(draw):
    ptypes = {f"p{i}": draw(processor_types()) for i in range(draw(st.integers(1, 2)))}
    ntypes = {}
    for i in range(draw(st.integers(1, 2))):
        procs = draw(st.lists(st.sampled_from(sorted(ptypes)), min_size=1, max_size=2, unique=True))
        ntypes[f"n{i}"] = {"processors": {p: draw(st.integers(1, 2)) for p in procs},
                           "memory_gb": draw(st.sampled_from([None, 1e-3, 16.0, 1e12])),
                           "boot_s": draw(st.sampled_from([None, 0.0, 1e-3, 120.0, 1e10])),
                           "boot_j": draw(st.sampled_from([None, 0.0, 1e15])),
                           "off_w": draw(st.sampled_from([None, 0.0, 1e-3]))}
    return {"name": "rand", "processor_types": ptypes, "node_types": ntypes,
            "clusters": [{"name": "c", "nodes": {n: draw(st.integers(1, 2)) for n in ntypes}}]}


@st.composite
def jobs(draw, max_cores: int):
    out = []
    for _ in range(draw(st.integers(1, 6))):
        run = draw(st.sampled_from([0.0, 0.5, 1.0, 7.0, 3600.0, 1e10]))
        out.append({"submit_s": draw(st.sampled_from([0.0, 1.0, 30.0, 1e10])),
                    "cores": draw(st.integers(1, max_cores)), "run_s": run,
                    "req_s": draw(st.sampled_from([None, 1e-9, run or None, 1e10])),
                    "mem_mb": draw(st.sampled_from([0.0, 1.0, 1e12])),
                    "bw_gbs": draw(st.sampled_from([None, 0.0, 24.0, 1e6]))})
    return out


@st.composite
def schedulers(draw):
    sched = {"job_policy": draw(st.sampled_from(JOB_POLICIES)),
             "resource_policy": draw(st.sampled_from(RESOURCE_POLICIES)),
             "backfilling": draw(st.sampled_from(["none", "easy", "conservative"])),
             "freq": draw(st.sampled_from([0.01, 0.5, 1.0])),
             "bw_cap": draw(st.sampled_from([None, 0.01, 1.0, 1e3])),
             "power_off_idle_s": draw(st.sampled_from([None, 0.0, 1.0, 1e10])),
             "boot_s": draw(st.sampled_from([None, 0.0, 1e-3, 1e10]))}
    if draw(st.integers(0, 3)) == 0:  # Slurm's own parameters, at their edges
        sched = {"kind": "slurm", "priority_weight_age": draw(st.sampled_from([0, 1000])),
                 "priority_max_age_s": draw(st.sampled_from([1.0, 1e10])),
                 "suspend_time_s": draw(st.sampled_from([None, 0.0, 1e10])),
                 "suspend_timeout_s": draw(st.sampled_from([0.0, 1e10])),
                 "resume_timeout_s": draw(st.sampled_from([1e-3, 1e10]))}
    return sched


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_successful_run_has_sound_metrics(data):
    plat = data.draw(platforms())
    try:
        platform = build_platform(load_platform_spec(plat))
    except UserError as exc:  # e.g. off power above the node's full power
        assert "\n" not in str(exc)
        return
    cfg = {"platform": plat, "workload": {"jobs": data.draw(jobs(platform.n_cores))},
           "model": {"interference": data.draw(st.sampled_from(["thesis", "proportional", "none"])),
                     "p1_speed": data.draw(st.sampled_from([0.01, 0.75, 1.0])),
                     "p2_power": data.draw(st.sampled_from([0.0, 0.25, 1.0])),
                     "p3_power": data.draw(st.sampled_from([0.0, 0.05, 1.0])),
                     "static_power": data.draw(st.sampled_from([0.0, 0.3, 1.0]))},
           "scheduler": data.draw(schedulers()), "seed": data.draw(st.integers(0, 3))}
    try:
        m = simulate(config_from_dict(cfg)).metrics
    except UserError as exc:  # refused: one line, never a result
        assert "\n" not in str(exc)
        return
    assert set(m) == set(METRIC_NAMES)
    assert all(math.isfinite(v) and v >= 0 for v in m.values()), m
    assert m["n_jobs"] >= 1 and m["energy_j"] > 0 and m["makespan_s"] >= MIN_RUN_S, m
    assert m["mean_power_w"] > 0 and 0 < m["utilisation"] <= 1 + EPS and m["utilisation_observed"] <= 1 + EPS, m
    assert all(m[k] >= 1.0 for k in BSLD), m
    fastest = max(p.gflops_per_core for p in platform.procs)
    floor = min(1.0, platform.ref_speed / fastest)
    assert all(m[k] >= floor * (1 - EPS) for k in SLOWDOWN), (floor, m)
    if floor == 1.0:  # every core at the reference speed: the textbook floor
        assert m["mean_slowdown"] >= 1.0 - EPS, m
