"""Values worked out by hand: thesis 4.1.4, thesis 5.4 on two-socket, a tiny energy integral."""

from __future__ import annotations

import pytest

# Thesis 4.1.4: one node (16 GB), one dual-core processor (1 GFLOP/s per core, 24 GB/s).
# We give the processor 20 W so a core's full power is 10 W.
DUAL_CORE = {
    "name": "example-4.1.4",
    "processor_types": {"p": {"cores": 2, "clock_ghz": 1.0, "flops_per_cycle": 1, "mem_bw_gbs": 24, "power_w": 20}},
    "node_types": {"n": {"processors": {"p": 1}, "memory_gb": 16}},
    "clusters": [{"name": "c", "nodes": {"n": 1}}],
}


def test_thesis_4_1_4_single_job(run):
    # 5e9 operations at 1 GFLOP/s: 5 s; 8 GB, 2 GB/s: no over-use.
    res = run(DUAL_CORE, [{"submit_s": 0, "cores": 1, "run_s": 5, "mem_mb": 8192, "bw_gbs": 2}])
    (job,) = res.jobs
    assert job["start_s"] == 0 and job["end_s"] == pytest.approx(5.0)
    assert job["core_ids"] == "0"  # the first core of the platform
    # core 0 in P0 (10 W) and core 1 in P2 (25% of 10 W) for 5 s
    assert res.metrics["energy_j"] == pytest.approx(5 * (10 + 2.5))
    assert res.metrics["makespan_s"] == pytest.approx(5.0)


def test_thesis_4_1_4_memory_is_a_hard_limit(run):
    # two 1-core jobs of 10 GB each on a 16 GB node: the second waits for the first
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 5, "mem_mb": 10240, "bw_gbs": 0},
            {"submit_s": 0, "cores": 1, "run_s": 5, "mem_mb": 10240, "bw_gbs": 0}]
    res = run(DUAL_CORE, jobs)
    starts = sorted(j["start_s"] for j in res.jobs)
    assert starts == [0, pytest.approx(5.0)]


# Thesis 5.4: two jobs of 1 core and 24 GB/s, 5 s each at the reference speed (4.2 GFLOP/s):
# 21 GFLOP per job. Slow processor: 4 GFLOP/s per core, 80 W; fast: 4.4 GFLOP/s, 100 W.
TWO_JOBS = [{"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24}, {"submit_s": 0, "cores": 1, "run_s": 5,
                                                                    "bw_gbs": 24}]


def _two_socket(run, policy):
    return run("two-socket", TWO_JOBS, scheduler={"job_policy": "shortest", "resource_policy": policy})


def test_5_4_consolidated_on_fast_processor_goes_p1(run):
    res = _two_socket(run, "high_gflops")
    # both on the fast processor, 48 > 32 GB/s: P1 at 75% of 4.4 GFLOP/s
    assert {j["core_ids"] for j in res.jobs} == {"2", "3"}
    assert res.metrics["makespan_s"] == pytest.approx(21 / (4.4 * 0.75))
    # fast processor 2 x 50 W busy, slow processor idle (2 x 5% of 40 W)
    assert res.metrics["energy_j"] == pytest.approx(21 / 3.3 * (100 + 4))


def test_5_4_low_power_consolidates_on_slow_processor(run):
    res = _two_socket(run, "low_power")
    assert {j["core_ids"] for j in res.jobs} == {"0", "1"}
    assert res.metrics["makespan_s"] == pytest.approx(21 / (4.0 * 0.75))


def test_5_4_spreading_avoids_p1(run):
    res = _two_socket(run, "high_mem_bw")
    ends = sorted(j["end_s"] for j in res.jobs)
    # one job per processor, both at full speed
    assert ends == [pytest.approx(21 / 4.4), pytest.approx(21 / 4.0)]
    assert res.metrics["makespan_s"] == pytest.approx(5.25)
    slow_w = 40 + 10          # busy core + P2 core of the slow processor
    fast_w = 50 + 12.5        # same on the fast processor, until 21/4.4 s
    idle_fast = 2 * 0.05 * 50  # fast processor idle (P3) after its job ended
    expected = slow_w * 5.25 + fast_w * (21 / 4.4) + idle_fast * (5.25 - 21 / 4.4)
    assert res.metrics["energy_j"] == pytest.approx(expected)


def test_proportional_interference_slows_by_capacity_over_demand(run):
    res = run("two-socket", TWO_JOBS, scheduler={"resource_policy": "high_gflops"},
              model={"interference": "proportional"})
    # demand 48 GB/s on 32 GB/s: speed x 32/48
    assert res.metrics["makespan_s"] == pytest.approx(21 / (4.4 * 32 / 48))


def test_speed_recomputed_when_neighbour_ends(run):
    # a short and a long job share the fast processor in P1; after the short one ends the long
    # one returns to P0 and its remaining work runs at full speed
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 1, "req_s": 1, "bw_gbs": 24},
            {"submit_s": 0, "cores": 1, "run_s": 5, "req_s": 5, "bw_gbs": 24}]
    res = run("two-socket", jobs, scheduler={"job_policy": "shortest", "resource_policy": "high_gflops"})
    short, long_ = sorted(res.jobs, key=lambda j: j["end_s"])
    t1 = 4.2 / 3.3                        # short job: 4.2 GFLOP at 3.3 GFLOP/s
    left = 21 - 3.3 * t1                  # long job's work left then
    assert short["end_s"] == pytest.approx(t1)
    assert long_["end_s"] == pytest.approx(t1 + left / 4.4)


def test_tiny_schedule_energy_integral(run):
    # homogeneous-2: 1 GFLOP/s cores of 100 W. Job A on core 0 from 0 to 10, nothing from 10 to 20,
    # job B (2 cores) from 20 to 25. Each single-core processor: P0 100 W, else idle P3 5 W.
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 10}, {"submit_s": 20, "cores": 2, "run_s": 5}]
    res = run("homogeneous-2", jobs)
    expected = 10 * (100 + 5) + 10 * (5 + 5) + 5 * (100 + 100)
    assert res.metrics["energy_j"] == pytest.approx(expected)
    assert res.metrics["energy_kwh"] == pytest.approx(expected / 3.6e6)
    assert res.metrics["makespan_s"] == 25
    assert res.metrics["utilisation"] == pytest.approx((10 + 2 * 5) / (2 * 25))


def test_metrics_formulas(run):
    # one core: job 1 runs 0-100, job 2 (submitted at 0, 5 s) waits 100 s
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 100}, {"submit_s": 0, "cores": 1, "run_s": 5}]
    m = run("homogeneous-1", jobs).metrics
    assert m["mean_wait_s"] == pytest.approx(50)
    assert m["max_wait_s"] == pytest.approx(100)
    # slowdown: (1 + 105/5) / 2; bounded slowdown uses tau = 10 s for the short job
    assert m["mean_slowdown"] == pytest.approx((1 + 105 / 5) / 2)
    assert m["mean_bsld"] == pytest.approx((1 + 105 / 10) / 2)
    assert m["n_jobs"] == 2


@pytest.mark.parametrize("policy,cores", [("high_mem_bw", "0 2"), ("high_cores", "0 2"), ("high_gflops", "2 3"),
                                          ("low_power", "0 1")])
def test_dynamic_policies_rerank_after_each_core(run, policy, cores):
    # one 2-core job of 24 GB/s per core on two-socket: dynamic policies re-rank after each core
    # (HDeepRM's get_resources), so the second core goes to the other processor; static ones consolidate
    res = run("two-socket", [{"submit_s": 0, "cores": 2, "run_s": 5, "bw_gbs": 24}],
              scheduler={"resource_policy": policy})
    assert res.jobs[0]["core_ids"] == cores


# A job spread over both sockets of two-socket (cores 0 and 1 on the slow processor, core 2 on the
# fast one; 8 GB/s per core) while a 30 GB/s job on core 3 pushes the fast processor into P1 from
# t = 1 s for its 8.4 GFLOP: the fast part drops to 3.3 GFLOP/s, below the slow part's 4.0.
SPREAD_THEN_P1 = [{"submit_s": 0, "cores": 3, "run_s": 10, "bw_gbs": 8},
                  {"submit_s": 1, "cores": 1, "run_s": 2, "bw_gbs": 30}]


def test_lockstep_job_advances_at_its_slowest_core_now(run):
    # Batsim runs a job as one SimGrid ptask_L07 action: all its cores advance together at the pace
    # of the slowest one at each instant. 42 GFLOP: 4 at 4.0 (0-1 s), 8.4 at 3.3 while the P1
    # neighbour runs, the rest at 4.0.
    res = run("two-socket", SPREAD_THEN_P1, scheduler={"job_policy": "first", "resource_policy": "high_mem_bw"})
    spread, neighbour = sorted(res.jobs, key=lambda j: j["submit_s"])
    assert spread["core_ids"] == "0 1 2" and neighbour["core_ids"] == "3"
    t1 = 1 + 8.4 / 3.3
    assert neighbour["end_s"] == pytest.approx(t1)
    assert spread["end_s"] == pytest.approx(t1 + (42 - 4 - 8.4) / 4.0)


def test_independent_progress_lets_each_socket_run_at_its_own_speed(run):
    # the pre-lockstep model: the fast part catches up after the neighbour ends, so the job ends
    # with its slow part at 42 / 4.0 s
    res = run("two-socket", SPREAD_THEN_P1, scheduler={"job_policy": "first", "resource_policy": "high_mem_bw"},
              model={"progress": "independent"})
    spread = min(res.jobs, key=lambda j: j["submit_s"])
    assert spread["end_s"] == pytest.approx(42 / 4.0)
