"""ResumeRate as Slurm applies it: a job is allocated powered-down nodes at once and they are resumed
at most ResumeRate per 60 s, the rest in later minutes (docs/slurm.md, `slurm_power`)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.slurm.test_slurm_kind import _j, _platform, _run


def _two_core_platform(n: int, boot_s: float = 10.0) -> dict:
    plat = _platform(n, boot_s=boot_s)
    plat["processor_types"]["s"]["cores"] = 2
    return plat


def _most_in_a_minute(times: list[float]) -> int:
    return max((sum(1 for u in times if t <= u < t + 60) for t in times), default=0)


def test_a_job_needing_more_nodes_than_the_rate_boots_them_over_minutes():
    # all 4 nodes suspended by 6 s (usable again after SuspendTimeout, 30 s); at 100 a 3-node job
    jobs = [_j(1, 0, 1, 1), _j(2, 100, 3, 50)]
    got, sched, twin = _run(_platform(4, boot_s=10), jobs, suspend_time_s=5, resume_rate=1, resume_timeout_s=60)
    assert sched.power.resume_times == [(100, 0), (160, 1), (220, 2)]  # one resume per minute
    assert got[2].nodes == (0, 1, 2)  # allocated at 100, as Slurm allocates before resuming
    assert got[2].start == 220 + 10 and got[2].end == 280
    assert twin.boots == 3


def test_the_job_that_stalled_now_runs():
    # a 50-core job needed more powered-down gaia-mini nodes than one a minute: before, it waited for
    # a budget that could never be that large and the run ended "scheduler stalled"
    got, sched, _ = _run("gaia-mini", workload={"path": "builtin:hpc2n-3k.swf.gz", "mode": "trace",
                                                "first_job": 1000, "n_jobs": 400},
                         scheduler_type="builtin", suspend_time_s=100, resume_rate=1, resume_timeout_s=300)
    assert len(got) == 400
    big = got[62598]
    assert (big.size, big.submit, big.nodes) == (50, 2987, (5, 6, 7, 8, 9))
    # four of its five nodes were powered down: resumed one a minute from its submission; it begins
    # when the last is up (gaia-mini's blades boot in 150 s)
    mine = [(t, n) for t, n in sched.power.resume_times if n in big.nodes and big.submit <= t <= big.start]
    assert mine == [(2987, 6), (3047, 7), (3107, 8), (3167, 9)]
    assert big.start == 3167 + 150
    times = [t for t, _ in sched.power.resume_times]
    assert times == sorted(times) and _most_in_a_minute(times) == 1


def test_a_node_waiting_for_its_resume_is_shared_by_a_second_job():
    # 2-core nodes, all suspended; at 100 job 2 takes n1 (resumed now) and one core of n2 (resumed at
    # 160); job 3 takes n2's other core: n2 is not resumed twice, and both jobs start when it is up
    jobs = [_j(1, 0, 1, 1), _j(2, 100, 3, 50), _j(3, 100, 1, 50)]
    got, sched, twin = _run(_two_core_platform(3), jobs, suspend_time_s=5, resume_rate=1, resume_timeout_s=60,
                            scheduler_type="builtin")
    assert sched.power.resume_times == [(100, 0), (160, 1)]
    assert got[2].nodes == (0, 1) and got[3].nodes == (1,)
    assert got[2].start == got[3].start == 170
    assert twin.boots == 2


def test_a_deferred_boot_a_rounding_early_still_begins_its_job_when_the_node_is_up():
    # (found by review) n1 resumed at q; at `now` a job needs powered-down n2, deferred to q + 60 and up
    # at (q + 60) + 45; `now + (ready - now)` rounds one ulp before that, so a job timed by its own
    # event would begin on a node still booting (it ended in a RuntimeError): it waits for the boot
    q, now = 17.56164835440494, 30.911428858648726
    jobs = [_j(1, 0, 1, 1), _j(2, q, 1, 500), _j(3, now, 1, 50)]
    got, sched, twin = _run(_platform(3, boot_s=45), jobs, suspend_time_s=5, resume_rate=1, resume_timeout_s=60,
                            suspend_timeout_s=0, scheduler_type="builtin")
    assert [t for t, _ in sched.power.resume_times] == [q, q + 60.0]
    node = twin.nodes[got[3].nodes[0]]
    assert now + ((q + 60.0 + 45.0) - now) < node.ready_at  # the rounding this case is about
    assert got[3].start == node.ready_at == (now + (q + 60.0 - now)) + 45.0


def _backfill_case(low_priority_submit: float | None):
    jobs = [_j(1, 0, 1, 180),      # K: n1 busy until 180
            _j(2, 100, 3, 50),     # J: three powered-down nodes at ResumeRate 2, the third resumed at 160:
                                   #    J runs 170-220, not 100-150
            _j(3, 100, 2, 100)]    # R: 2 cores; earliest at 180 (n1, and n5 resumed then): up at 190
    if low_priority_submit is not None:
        jobs.append(_j(4, low_priority_submit, 1, 1000))  # S: after R in priority, long
    return _run(_platform(5, boot_s=10), jobs, suspend_time_s=60, suspend_timeout_s=0, resume_rate=2,
                resume_timeout_s=60, bf_interval_s=1)


def test_a_job_waiting_for_resumes_holds_its_cores_to_its_real_end_in_its_own_pass():
    # (found by review) the pass that starts J reserved its cores only for [100, 150): R was given a
    # phantom reservation at 150 on J's nodes, S was backfilled on n5, and R waited for J's real end
    alone, _, _ = _backfill_case(None)
    same_pass, _, _ = _backfill_case(100)
    next_pass, _, _ = _backfill_case(101)
    assert alone[2].start == 170 and alone[3].start == 190
    assert same_pass[3].start == next_pass[3].start == 190
    assert same_pass[4].start >= 190


def test_no_limit_resumes_every_node_at_once():
    jobs = [_j(1, 0, 1, 1), _j(2, 100, 3, 50)]
    got, sched, _ = _run(_platform(4, boot_s=10), jobs, suspend_time_s=5, resume_rate=0, resume_timeout_s=60)
    assert got[2].start == 110 and sched.power.resume_times == []  # 0 = no limit: no hook, no count


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=st.lists(st.tuples(st.floats(0, 400), st.integers(1, 6), st.floats(1, 200)), min_size=1, max_size=8),
       rate=st.integers(1, 3), boot_s=st.sampled_from([0.0, 10.0, 45.0]), suspend=st.sampled_from([5, 30, 90]),
       suspend_timeout=st.sampled_from([0, 30]), backfill=st.booleans())
def test_every_job_runs_and_no_minute_holds_more_resumes_than_the_rate(jobs, rate, boot_s, suspend, suspend_timeout,
                                                                        backfill):
    spec = [_j(k + 1, s, c, r) for k, (s, c, r) in enumerate(sorted(jobs))]
    got, sched, twin = _run(_two_core_platform(3, boot_s=boot_s), spec, suspend_time_s=suspend, resume_rate=rate,
                            resume_timeout_s=60, suspend_timeout_s=suspend_timeout,
                            scheduler_type="backfill" if backfill else "builtin")
    assert len(got) == len(spec)  # none stalls, however many nodes a job needs
    times = [t for t, _ in sched.power.resume_times]
    assert times == sorted(times) and _most_in_a_minute(times) <= rate
    assert twin.boots == len(times)  # every resume is one boot, none twice
    for job in got.values():
        assert job.start >= job.submit and job.end >= job.start
