"""Energy levers, hand-computed: node switch-off with boot, DVFS, bandwidth cap; exact accounting."""

from __future__ import annotations

import pytest

# homogeneous-2: two single-core nodes, 1 GFLOP/s, 100 W busy, 5 W idle (P3)
OFF = {"job_policy": "first", "resource_policy": "high_gflops", "power_off_idle_s": 10,
       "boot_s": 30, "boot_j": 600, "off_w": 0}


def test_switch_off_and_boot(run):
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 5}, {"submit_s": 100, "cores": 1, "run_s": 10}]
    res = run("homogeneous-2", jobs, scheduler=OFF, model={"interference": "none"})
    a, b = res.jobs
    assert (a["start_s"], a["end_s"]) == (0, 5)
    # node 1 off at 10, node 0 off at 15; job B waits exactly boot_s for node 0
    assert b["start_s"] == pytest.approx(130) and b["wait_s"] == pytest.approx(30)
    assert b["nodes"] == "0"
    expected = 105 * 5 + 10 * 5 + 5 * 5 + 0 * 85 + 600 + 100 * 10   # boot energy once, node 1 stays off
    assert res.metrics["energy_j"] == pytest.approx(expected)
    assert res.metrics["n_boots"] == 1
    assert res.metrics["boot_energy_kwh"] == pytest.approx(600 / 3.6e6)


def test_min_nodes_on_keeps_a_floor(run):
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 5}, {"submit_s": 100, "cores": 1, "run_s": 10}]
    res = run("homogeneous-2", jobs, scheduler={**OFF, "min_nodes_on": 1}, model={"interference": "none"})
    b = res.jobs[1]
    # node 1 switches off at 10; node 0 must stay on (floor of 1) and runs B at once
    assert b["start_s"] == 100 and res.metrics["n_boots"] == 0
    expected = 105 * 5 + 10 * 5 + 5 * 90 + 100 * 10   # node 0 idle (5 W) from 10 to 100
    assert res.metrics["energy_j"] == pytest.approx(expected)


def test_running_node_is_preferred_to_an_off_one(run):
    # node 1 goes off at 10 while node 0 runs a long job; a 1-core job at 50 needing one core
    # has only node 1 free: it boots it; a later one at 200 finds node 0 (on, idle since 100)
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 100}, {"submit_s": 50, "cores": 1, "run_s": 10},
            {"submit_s": 105, "cores": 1, "run_s": 1}]
    res = run("homogeneous-2", jobs, scheduler={**OFF, "power_off_idle_s": 50}, model={"interference": "none"})
    _, second, third = res.jobs
    assert second["nodes"] == "1" and second["start_s"] == pytest.approx(80)
    assert third["nodes"] == "0" and third["start_s"] == 105


def test_dvfs_half_frequency(run):
    one = [{"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 0}]
    full = run("two-socket", one, scheduler={"resource_policy": "high_gflops"})
    half = run("two-socket", one, scheduler={"resource_policy": "high_gflops", "freq": 0.5})
    assert half.metrics["makespan_s"] == pytest.approx(2 * full.metrics["makespan_s"])
    # fast core full power 50 W: static 0.3 x 50 = 15 W plus dynamic 35 W x 0.5^3 = 4.375 W (1/8)
    busy_w = 15 + 35 / 8
    other_w = 0.25 * 50 + 2 * 0.05 * 40   # idle core of the busy processor (P2), idle slow processor (P3)
    assert half.metrics["energy_j"] == pytest.approx((busy_w + other_w) * 21 / 2.2)


def test_dvfs_per_type_and_table(run):
    one = [{"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 0}]
    res = run("two-socket", one, scheduler={"resource_policy": "high_gflops", "freq_by_type": {"fast": 0.5}})
    # the fast processor now peaks at 2.2 GFLOP/s: high_gflops picks the slow one at full speed
    assert res.jobs[0]["core_ids"] == "0" and res.metrics["makespan_s"] == pytest.approx(21 / 4)


def test_bw_cap_spreads_or_consolidates(run):
    two = [{"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24}, {"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24}]
    spread = run("two-socket", two, scheduler={"resource_policy": "high_gflops", "bw_cap": 1.0})
    procs = {j["core_ids"] for j in spread.jobs}
    assert procs == {"2", "0"}  # one on the fast processor, one on the slow: no P1
    assert spread.metrics["makespan_s"] == pytest.approx(21 / 4)
    packed = run("two-socket", two, scheduler={"resource_policy": "high_gflops", "bw_cap": 2.0})
    assert {j["core_ids"] for j in packed.jobs} == {"2", "3"}
    assert packed.metrics["makespan_s"] == pytest.approx(21 / 3.3)


def test_bw_cap_falls_back_when_nothing_else_fits(run):
    # three 24 GB/s jobs on four cores with cap 1.0: the third must over-use somewhere, not wait
    three = [{"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24} for _ in range(3)]
    res = run("two-socket", three, scheduler={"resource_policy": "high_gflops", "bw_cap": 1.0})
    assert all(j["start_s"] == 0 for j in res.jobs)


@pytest.mark.parametrize("sched", [
    {"job_policy": "shortest", "resource_policy": "high_mem_bw", "backfilling": "easy"},
    {"job_policy": "first", "resource_policy": "high_gflops", "backfilling": "easy", "power_off_idle_s": 600,
     "boot_s": 120, "freq": 0.8, "bw_cap": 1.0},
    {"job_policy": "smallest", "resource_policy": "low_power", "power_off_idle_s": 0, "boot_s": 60, "min_nodes_on": 3},
])
def test_energy_accounting_is_exact(sched):
    from paretosched.config import config_from_dict
    from paretosched.sim.run import simulate

    cfg = config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 300,
                                                                   "mode": "hdeeprm"}, "scheduler": sched})
    res = simulate(cfg, record_jobs=True, timeline=True)
    total = res.metrics["energy_j"]
    per_job = sum(j["energy_j"] for j in res.jobs)
    assert per_job > 0 and res.energy_unattributed_j > 0
    assert (per_job + res.energy_unattributed_j) == pytest.approx(total, rel=1e-9)
    tl = res.timeline["timeline"]
    assert tl["energy_j"].sum() + res.metrics["boot_energy_kwh"] * 3.6e6 * (sched.get("boot_s", 1) == 0) == \
        pytest.approx(total, rel=1e-9)
    # timeline intervals tile [0, makespan] and cores per state always add up to the platform
    assert tl["t_start_s"].iloc[0] == 0 and tl["t_end_s"].iloc[-1] == pytest.approx(res.metrics["makespan_s"])
    assert (tl["t_start_s"].iloc[1:].to_numpy() == tl["t_end_s"].iloc[:-1].to_numpy()).all()
    states = tl[[c for c in tl.columns if c.startswith("cores_")]].sum(axis=1)
    assert (states == 240).all()
    # the metrics do not depend on recording
    assert simulate(cfg).metrics == res.metrics


def test_levers_off_reproduce_thesis_model(run):
    two = [{"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24}, {"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24}]
    plain = run("two-socket", two, scheduler={"resource_policy": "high_gflops"})
    explicit = run("two-socket", two, scheduler={"resource_policy": "high_gflops", "freq": 1.0, "bw_cap": None,
                                                  "power_off_idle_s": None})
    assert plain.metrics == explicit.metrics


def test_dvfs_table_and_f_min(run):
    plat = {"name": "t", "node_types": {"n": {"processors": {"p": 1}}}, "clusters": [{"name": "c", "nodes": {"n": 1}}],
            "processor_types": {"p": {"cores": 1, "clock_ghz": 1, "flops_per_cycle": 1, "power_w": 100, "f_min": 0.5,
                                      "dvfs_table": [[0.5, 0.4], [1.0, 1.0]]}}}
    one = [{"submit_s": 0, "cores": 1, "run_s": 10}]
    res = run(plat, one, scheduler={"freq": 0.75}, model={"interference": "none"})
    # table interpolated at 0.75: 0.7 of full power, for 10 / 0.75 s
    assert res.metrics["energy_j"] == pytest.approx(70 * 10 / 0.75)
    clamped = run(plat, one, scheduler={"freq": 0.2}, model={"interference": "none"})
    assert clamped.metrics["makespan_s"] == pytest.approx(20)   # global factor clamped to f_min = 0.5
    from paretosched.errors import UserError

    with pytest.raises(UserError, match="freq_by_type.p: 0.2 is below the type's lowest frequency factor"):
        run(plat, one, scheduler={"freq_by_type": {"p": 0.2}})
    with pytest.raises(UserError, match="freq_by_type.q: no processor type"):
        run(plat, one, scheduler={"freq_by_type": {"q": 0.9}})


def test_zero_second_boot_keeps_power_consistent(run):
    # regression: with boot_s = 0 the job must begin after the boot-complete event, or that event
    # would reset its busy processor to idle power
    res = run("homogeneous-1", [{"submit_s": 0, "cores": 1, "run_s": 10}], record=True,
              scheduler={"power_off_idle_s": 0, "boot_s": 0, "boot_j": 50}, model={"interference": "none"})
    assert res.jobs[0]["start_s"] == 0 and res.metrics["n_boots"] == 1
    assert res.metrics["energy_j"] == pytest.approx(50 + 100 * 10)
    assert res.jobs[0]["energy_j"] == pytest.approx(1000)
    assert res.energy_unattributed_j == pytest.approx(50)
