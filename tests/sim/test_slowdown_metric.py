"""Slowdown is charged against a job's reference run time, which no scheduling decision changes."""

from __future__ import annotations

import pytest

from paretosched.sim.engine.metrics import METRIC_NAMES
from tests.sim.test_handworked import DUAL_CORE  # one dual-core processor, 24 GB/s


def test_dvfs_slowdown_is_charged(run):
    # reference run 100 s at freq 0.5 runs 200 s; no wait: bsld 2 (turnaround / reference run),
    # 1 under the thesis's observed definition (turnaround / actual run)
    m = run("homogeneous-1", [{"submit_s": 0, "cores": 1, "run_s": 100}], scheduler={"freq": 0.5}).metrics
    assert m["makespan_s"] == pytest.approx(200)
    assert m["mean_bsld"] == pytest.approx(2.0)
    assert m["mean_slowdown"] == pytest.approx(2.0)
    assert m["mean_bsld_observed"] == pytest.approx(1.0)
    assert m["mean_slowdown_observed"] == pytest.approx(1.0)
    assert m["mean_stretch"] == pytest.approx(2.0)
    # useful work is 100 core-seconds in 200 s; the core was held for all 200
    assert m["utilisation"] == pytest.approx(0.5)
    assert m["utilisation_observed"] == pytest.approx(1.0)


def test_p1_slowdown_is_charged(run):
    # two 1-core jobs of 24 GB/s on one 24 GB/s processor: P1 at 75% speed, 30 s of work takes 40 s
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 30, "bw_gbs": 24}, {"submit_s": 0, "cores": 1, "run_s": 30,
                                                                     "bw_gbs": 24}]
    m = run(DUAL_CORE, jobs).metrics
    assert m["makespan_s"] == pytest.approx(40)
    assert m["mean_bsld"] == pytest.approx(40 / 30)
    assert m["mean_bsld_observed"] == pytest.approx(1.0)
    assert m["max_stretch"] == pytest.approx(4 / 3)


def test_job_shorter_than_tau(run):
    # one core: a 100 s job, then a 5 s job that waited 100 s; tau = 10 s bounds the short one
    jobs = [{"submit_s": 0, "cores": 1, "run_s": 100}, {"submit_s": 0, "cores": 1, "run_s": 5}]
    m = run("homogeneous-1", jobs).metrics
    assert m["max_bsld"] == pytest.approx(105 / 10)
    assert m["mean_bsld"] == pytest.approx((1 + 105 / 10) / 2)
    # alone and unslowed, a job shorter than tau has bsld 1, not 5 / 10
    m = run("homogeneous-1", [{"submit_s": 0, "cores": 1, "run_s": 5}]).metrics
    assert m["mean_bsld"] == 1.0
    # at freq 0.5 it takes 10 s: turnaround 10 over max(5, 10): still 1
    m = run("homogeneous-1", [{"submit_s": 0, "cores": 1, "run_s": 5}], scheduler={"freq": 0.5}).metrics
    assert m["mean_bsld"] == pytest.approx(1.0)
    assert m["mean_slowdown"] == pytest.approx(10 / 5)


def test_freq_sweep_raises_mean_bsld_monotonically(run):
    workload = {"path": "builtin:hpc2n-3k.swf.gz", "mode": "trace", "first_job": 0, "n_jobs": 300}
    bsld = [run("gaia-mini", workload=workload, record=False, scheduler={"freq": f}).metrics["mean_bsld"]
            for f in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)]
    assert all(b > a for a, b in zip(bsld, bsld[1:])), bsld


def test_metric_names_carry_both_definitions():
    for base in ("slowdown", "bsld"):
        for stat in ("mean", "median", "p95", "max"):
            assert f"{stat}_{base}" in METRIC_NAMES and f"{stat}_{base}_observed" in METRIC_NAMES
    assert "mean_stretch" in METRIC_NAMES and "utilisation_observed" in METRIC_NAMES
