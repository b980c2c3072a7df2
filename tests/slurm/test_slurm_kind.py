"""The `slurm` scheduler kind, by hand-computed cases (docs/slurm.md)."""

from __future__ import annotations

import numpy as np
import pytest

from paretosched.config import config_from_dict
from paretosched.errors import UserError
from paretosched.sim.readers.platform import fits_factory
from paretosched.sim.run import prepare
from paretosched.sim.schedulers import build_scheduler
from paretosched.sim.slurm.power import ResumeTimeoutError
from paretosched.sim.engine.twin import Twin, make_rng
from paretosched.sim.readers.workload import build_jobs


def _platform(n: int, boot_s: float = 100.0, fast: int = 0) -> dict:
    """n single-core 1 GFLOP/s nodes named n[1-n] (then `fast` 2 GFLOP/s nodes f[1-fast])."""
    clusters = [{"name": f"n[1-{n}]" if n > 1 else "n1", "nodes": {"slow": n}}]
    if fast:
        clusters.append({"name": f"f[1-{fast}]" if fast > 1 else "f1", "nodes": {"fast": fast}})
    return {"name": "t", "power": {"boot_s": boot_s, "off_w": 0},
            "processor_types": {"s": {"cores": 1, "clock_ghz": 1.0, "flops_per_cycle": 1, "power_w": 100, "f_min": 0.5},
                                "f": {"cores": 1, "clock_ghz": 2.0, "flops_per_cycle": 1, "power_w": 300, "f_min": 0.5}},
            "node_types": {"slow": {"processors": {"s": 1}}, "fast": {"processors": {"f": 1}}},
            "clusters": clusters}


def _run(platform: dict | str, jobs: list[dict] | None = None, workload: dict | None = None, **sched):
    """Run like `simulate`, returning (jobs by id, the scheduler object). Decisions are made at the
    events themselves (`sched_tick_s: 0`) unless a test asks for slurmctld's dispatch timing."""
    cfg = config_from_dict({"platform": platform, "workload": workload or {"jobs": jobs},
                            "scheduler": {"kind": "slurm", "sched_tick_s": 0, **sched}})
    prep = prepare(cfg)
    ss_w, ss_s = np.random.SeedSequence(0).spawn(2)
    js, _ = build_jobs(prep.raw, "trace", prep.platform.ref_speed, np.random.default_rng(ss_w),
                       fits_factory(prep.platform))
    twin = Twin(prep.platform, js, cfg.model, cfg.scheduler)
    sched_obj = build_scheduler(twin, cfg.scheduler, make_rng(ss_s))
    twin.decide = sched_obj.decide
    twin.run()
    return {j.id: j for j in twin.done}, sched_obj, twin


def _j(jid, submit, cores, run, **kw):
    return {"id": jid, "submit_s": submit, "cores": cores, "run_s": run, **kw}


FOUR = [_j(1, 0, 4, 100), _j(2, 1, 4, 10), _j(3, 2, 1, 10), _j(4, 3, 2, 10)]


def test_age_weight_alone_is_fcfs():
    jobs, _, _ = _run("homogeneous-4", FOUR, scheduler_type="builtin", priority_weight_age=1000)
    assert [jobs[i].start for i in (2, 3, 4)] == [100, 110, 110]  # oldest first: 2, then 3 and 4 together


def test_job_size_weight_with_favor_small_is_smallest_first():
    jobs, _, _ = _run("homogeneous-4", FOUR, scheduler_type="builtin", priority_weight_job_size=1000,
                      priority_favor_small=True)
    assert [jobs[i].start for i in (3, 4, 2)] == [100, 100, 110]  # 1 core, 2 cores, then the 4-core job
    jobs, _, _ = _run("homogeneous-4", FOUR, scheduler_type="builtin", priority_weight_job_size=1000)
    assert [jobs[i].start for i in (2, 3, 4)] == [100, 110, 110]  # without it, the largest first


def test_backfill_reserves_for_the_jobs_it_tests():
    jobs = [_j(1, 0, 2, 100), _j(2, 1, 4, 10), _j(3, 2, 2, 50), _j(4, 3, 2, 200)]
    got, _, _ = _run("homogeneous-4", jobs, bf_interval_s=1)
    # 3 ends (52) before 2's reservation at 100: backfilled; 4 would overlap it: reserved after 2
    assert [got[i].start for i in (2, 3, 4)] == [100, 2, 110]
    # a cycle at 1 (2 blocked), the next 30 s later: 3 waits for the one at 31
    got, _, _ = _run("homogeneous-4", jobs, bf_resolution_s=1)
    assert [got[i].start for i in (2, 3, 4)] == [100, 31, 110]
    got, _, _ = _run("homogeneous-4", jobs)  # there it would end at 80, after 2's slot begins (60): it waits
    assert [got[i].start for i in (2, 3, 4)] == [100, 110, 110]
    got, _, _ = _run("homogeneous-4", jobs, scheduler_type="builtin")
    assert [got[i].start for i in (2, 3, 4)] == [100, 110, 110]  # strict priority: nothing jumps 2
    got, _, _ = _run("homogeneous-4", jobs, bf_max_job_test=1)
    assert [got[i].start for i in (2, 3, 4)] == [100, 110, 110]  # only the first job is ever tested


def test_bf_window_limits_reservations():
    jobs = [_j(1, 0, 2, 100), _j(2, 1, 4, 10), _j(3, 2, 2, 200)]
    got, _, _ = _run("homogeneous-4", jobs, bf_interval_s=1)  # 2 reserved at 100, so 3 (200 s) waits for it
    assert [got[2].start, got[3].start] == [100, 110]
    got, _, _ = _run("homogeneous-4", jobs, bf_window_min=1, bf_interval_s=1)  # 100 is past the 60 s window
    assert [got[3].start, got[2].start] == [2, 202]


def test_fairshare_prefers_the_user_who_used_less(tmp_path):
    swf = tmp_path / "t.swf"
    rows = [(1, 0, 100, 1), (2, 1, 10, 1), (3, 2, 10, 2)]  # (id, submit, run, user)
    swf.write_text("".join(f"{i} {s} 0 {r} 1 -1 -1 1 {r} -1 1 {u} -1 -1 -1 -1 -1 -1\n" for i, s, r, u in rows))
    got, sched, _ = _run("homogeneous-1", workload={"path": str(swf)}, priority_weight_fairshare=1000)
    assert [got[3].start, got[2].start] == [100, 110]  # user 1 used 100 core-s: user 2 first
    # all 100 core-s are charged, also the 98 s between the last decision before it ended and its
    # end (only running jobs were charged: 2 core-s); the default half-life of 7 days barely decays them
    assert sched.priority.usage[1] == pytest.approx(100, rel=1e-3)
    assert sched.priority.usage[2] == pytest.approx(10, rel=1e-3)
    got, _, _ = _run("homogeneous-1", workload={"path": str(swf)}, priority_weight_age=1000)
    assert [got[2].start, got[3].start] == [100, 110]


def test_suspend_time_switches_off_after_exactly_that_idle_time():
    jobs = [_j(1, 0, 1, 100)]
    _, sched, twin = _run(_platform(2), jobs, suspend_time_s=50)
    assert sched.power.suspend_times == [(50, 1)]  # n2 idle from 0; n1 busy until 100 (the run ends there)
    _, sched, _ = _run(_platform(2), [_j(1, 0, 1, 100), _j(2, 400, 1, 1)], suspend_time_s=50, resume_timeout_s=100)
    assert sched.power.suspend_times == [(50, 1), (150, 0)]


def test_node_boots_within_resume_timeout_and_misses_are_failures():
    jobs = [_j(1, 0, 1, 10), _j(2, 200, 1, 10)]
    got, _, twin = _run(_platform(1, boot_s=100), jobs, suspend_time_s=50, resume_timeout_s=100)
    assert got[2].start == 300 and twin.boots == 1  # off at 60, resumed at 200, up after its 100 s boot
    with pytest.raises(ResumeTimeoutError, match=r"n1 boots in 100 s, longer than ResumeTimeout=99 s "
                       r"\(scheduler.resume_timeout_s, default 60; Slurm would"):
        _run(_platform(1, boot_s=100), jobs, suspend_time_s=50, resume_timeout_s=99)


def test_suspend_timeout_keeps_a_node_powering_down():
    jobs = [_j(1, 0, 1, 10), _j(2, 70, 1, 10)]  # the node is suspended at 60
    got, _, _ = _run(_platform(1, boot_s=100), jobs, suspend_time_s=50, suspend_timeout_s=30, resume_timeout_s=100)
    assert got[2].start == 90 + 100  # unusable until 90, then its boot
    got, _, _ = _run(_platform(1, boot_s=100), jobs, suspend_time_s=50, suspend_timeout_s=0, resume_timeout_s=100)
    assert got[2].start == 70 + 100


def test_suspend_rate_bounds_suspensions_per_minute():
    _, sched, _ = _run(_platform(10), [_j(1, 0, 1, 400)], suspend_time_s=10, suspend_rate=3)
    times = [t for t, _ in sched.power.suspend_times]
    assert times == [10] * 3 + [70] * 3 + [130] * 3
    assert max(sum(1 for u in times if t <= u < t + 60) for t in times) == 3
    _, sched, _ = _run(_platform(10), [_j(1, 0, 1, 400)], suspend_time_s=10, suspend_rate=0)
    assert [t for t, _ in sched.power.suspend_times] == [10] * 9  # 0 = no limit


def test_resume_rate_bounds_boots_per_minute():
    jobs = [_j(1, 0, 1, 1)] + [_j(k, 100, 1, 500) for k in range(2, 6)]  # 4 jobs need 4 suspended nodes
    got, _, twin = _run(_platform(4, boot_s=10), jobs, suspend_time_s=5, resume_rate=2, resume_timeout_s=60)
    assert sorted(got[k].start for k in range(2, 6)) == [110, 110, 170, 170]  # 2 boots at 100, 2 at 160


def test_suspend_exc_nodes_and_weight_order():
    _, sched, _ = _run(_platform(4), [_j(1, 0, 1, 400)], suspend_time_s=10, suspend_exc_nodes=2)
    assert sorted(n for _, n in sched.power.suspend_times) == [2, 3]  # n1 busy, n2 excluded
    got, _, _ = _run(_platform(2, fast=1), [_j(1, 0, 1, 10)], node_order="fastest_first")
    assert got[1].nodes == (2,)  # the 2 GFLOP/s node has the lowest Weight
    got, _, _ = _run(_platform(2, fast=1), [_j(1, 0, 1, 10)])
    assert got[1].nodes == (0,)  # equal Weights: platform order


def test_cpu_freq_def_powersave_runs_at_the_lowest_pstate():
    got, _, _ = _run(_platform(1), [_j(1, 0, 1, 10)], cpu_freq_def="PowerSave")
    assert got[1].end - got[1].start == pytest.approx(20.0)  # f_min 0.5 of a 1 GFLOP/s core
    with pytest.raises(UserError, match="PowerSave .* type 'unit' of platform homogeneous-1 has no f_min"):
        _run("homogeneous-1", [_j(1, 0, 1, 10)], cpu_freq_def="PowerSave")


def test_simulate_reports_a_missed_resume_timeout_in_one_line(tmp_path, capsys):
    from paretosched.cli import main
    from paretosched.yamlio import dump_yaml

    cfg = tmp_path / "c.yaml"
    cfg.write_text(dump_yaml({"platform": _platform(1, boot_s=100),
                              "workload": {"jobs": [_j(1, 0, 1, 10), _j(2, 200, 1, 10)]},
                              "scheduler": {"kind": "slurm", "suspend_time_s": 50}}))
    assert main(["simulate", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("paretosched: error: n1 boots in 100 s, longer than ResumeTimeout=60 s "
                   "(scheduler.resume_timeout_s, default 60; Slurm would set it DOWN and requeue the job)")


def test_power_saving_uses_the_twins_idle_hook_and_patches_no_method():
    jobs = [_j(1, 0, 1, 100)]
    _, sched, twin = _run(_platform(2), jobs, suspend_time_s=50)
    shadowed = [k for k in vars(twin) if callable(getattr(type(twin), k, None))]
    assert shadowed == []  # no instance attribute hides a method of Twin
    assert twin.idle_hook == sched.power._idle_timeout and sched.power.suspend_times == [(50, 1)]
    _, sched, twin = _run(_platform(2), jobs)  # no power saving: the twin switches nodes off itself
    assert twin.idle_hook is None


def test_zero_length_jobs_filling_the_platform_run_one_after_another():
    # (found by review) a time limit of 0 reserved [now, now): the cores still looked free and the next
    # job of the same pass was given them too (IndexError: pop from empty list). Since twin 10 a job runs
    # at least 1 s (workload.MIN_RUN_S); a time limit of 1e-9 s still reserves next to nothing
    jobs = [_j(k, 0, 1, 0, req_s=1e-9) for k in range(1, 6)]  # five 0 s one-core jobs on four cores
    got, _, _ = _run("homogeneous-4", jobs, scheduler_type="builtin")
    assert len(got) == 5
    assert sorted(len(j.nodes) for j in got.values()) == [1] * 5
    assert sorted((j.start, j.end) for j in got.values()) == [(0, 1)] * 4 + [(1, 2)]
