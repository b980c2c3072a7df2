"""slurmctld's dispatch timing on the `slurm` kind: the main scheduler on a 1 s tick, at most once
per batch_sched_delay for the events that ask for it (docs/slurm.md)."""

from __future__ import annotations

from tests.slurm.test_slurm_kind import _j, _platform, _run

# two 1-core nodes: 1 (submitted at 0) and 2 (at 2) run 10 s; 3 (at 5) must wait for 1
JOBS = [_j(1, 0, 1, 10), _j(2, 2, 1, 10), _j(3, 5, 1, 5)]


def test_main_scheduler_runs_on_the_tick_after_an_event_at_most_once_per_batch_sched_delay():
    # 1: the tick after 0 is 1. 2: the tick after 2 is 3, but the last run was at 1 and
    # batch_sched_delay is 3: 4. 3: blocked at 7 (max(6, 4 + 3)); 1 ends at 11, the next run is 12
    got, _, _ = _run(_platform(2), JOBS, sched_tick_s=1)
    assert [got[i].start for i in (1, 2, 3)] == [1, 4, 12]
    got, _, _ = _run(_platform(2), JOBS, sched_tick_s=1, batch_sched_delay_s=0)
    assert [got[i].start for i in (1, 2, 3)] == [1, 3, 12]  # ticks only: 1 ends at 11, 3 starts at 12
    got, _, _ = _run(_platform(2), JOBS)  # sched_tick_s 0: at the events themselves
    assert [got[i].start for i in (1, 2, 3)] == [0, 2, 10]


def test_a_backfill_cycle_runs_on_its_own_tick():
    # three 1-core nodes, bf_interval 5: the first cycle at 1 (with the main run), the next no earlier
    # than 6. The main run at 4 starts 2 and leaves 4 (2 cores) blocked; 3 (at 5) fits on n3 before
    # 4's reservation (101, when 1 ends): the main run due at 7 would stop at 4, the cycle at 6 starts
    # 3. 1 ends at 101: the main scheduler runs at the next tick, 102, and starts 4
    jobs = [_j(1, 0, 1, 100), _j(2, 2, 1, 100), _j(4, 4, 2, 10), _j(3, 5, 1, 5)]
    got, _, _ = _run(_platform(3), jobs, sched_tick_s=1, bf_interval_s=5, bf_resolution_s=1)
    assert [got[i].start for i in (1, 2, 4, 3)] == [1, 4, 102, 6]


def test_the_backfill_cycles_keep_the_phase_of_the_last_one_before_the_trace():
    # three 1-core nodes, bf_interval 30: 1 (2 cores) runs from 1 to 101; 2 (3 cores, at 2) is
    # blocked; 3 (1 core, 20 s, at 3) fits on n3 before 2's reservation but only a backfill cycle
    # starts it. The first cycle runs at the first event's tick (1), the next at 31; with the last
    # cycle before the trace at -6, they run at 24, 54, ...
    jobs = [_j(1, 0, 2, 100), _j(2, 2, 3, 10), _j(3, 3, 1, 20)]
    got, _, _ = _run(_platform(3), jobs, sched_tick_s=1, bf_resolution_s=1)
    assert got[3].start == 31
    got, _, _ = _run(_platform(3), jobs, sched_tick_s=1, bf_resolution_s=1, bf_last_cycle_s=-6)
    assert got[3].start == 24
