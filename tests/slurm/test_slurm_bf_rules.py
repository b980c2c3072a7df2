"""The `slurm` kind's backfill rules from Slurm 22.05's backfill.c, by hand-computed cases: the
bf_resolution grid of reservations and the whole nodes a reservation holds (docs/slurm.md)."""

from __future__ import annotations

from tests.slurm.test_slurm_kind import _j, _platform, _run


def _nodes(n: int, cores: int) -> dict:
    """n nodes n[1-n] of one `cores`-core 1 GFLOP/s processor each."""
    return {"name": "t", "processor_types": {"s": {"cores": cores, "clock_ghz": 1.0, "flops_per_cycle": 1, "power_w": 100}},
            "node_types": {"node": {"processors": {"s": 1}}},
            "clusters": [{"name": f"n[1-{n}]", "nodes": {"node": n}}]}


def _short(run: float) -> list[dict]:
    # 1 holds n1 until 100; 2 (both nodes) is reserved at 100 for 10 s; 3 (one node, `run` s) would end
    # before 100 on n2
    return [_j(1, 0, 1, 100), _j(2, 1, 2, 10), _j(3, 2, 1, run)]


def test_a_reservation_begins_on_the_bf_resolution_grid():
    # 2's reservation at 100 is held from floor(100 / 60) x 60 = 60: a job ending at 2 + 57 = 59 is
    # backfilled, one ending at 2 + 58 = 60 is not (a row beginning at its end conflicts:
    # begin_time <= end_time) and starts when 2 ends, at 110
    got, _, _ = _run(_platform(2), _short(57), bf_interval_s=1)
    assert [got[2].start, got[3].start] == [100, 2]
    got, _, _ = _run(_platform(2), _short(58), bf_interval_s=1)
    assert [got[2].start, got[3].start] == [100, 110]
    got, _, _ = _run(_platform(2), _short(97), bf_interval_s=1, bf_resolution_s=1)
    assert [got[2].start, got[3].start] == [100, 2]  # on a 1 s grid it is held from 100 only
    got, _, _ = _run(_platform(2), _short(98), bf_interval_s=1, bf_resolution_s=1)
    assert [got[2].start, got[3].start] == [100, 110]  # ends at 100, where the reservation begins


def test_a_reservation_holds_at_least_one_slot():
    # 2 is reserved at 100 for 10 s: floor(100 / 60) = floor(110 / 60) = 60, an empty slot, so it holds
    # [60, 60 + 60). 3 (one node, 200 s) would overlap it: reserved, it starts when 2 ends (110). 4
    # (60 s, submitted at 3) would end at 63, inside the slot: it waits too (on a 1 s grid it ends
    # before 100 and starts at once)
    jobs = [_j(1, 0, 1, 100), _j(2, 1, 2, 10), _j(3, 2, 1, 200), _j(4, 3, 1, 60)]
    got, _, _ = _run(_platform(2), jobs, bf_interval_s=1)
    assert [got[2].start, got[3].start, got[4].start] == [100, 110, 110]
    got, _, _ = _run(_platform(2), jobs, bf_interval_s=1, bf_resolution_s=1)
    assert [got[2].start, got[3].start, got[4].start] == [100, 110, 3]


def test_a_reservation_holds_whole_nodes():
    # two 2-core nodes: 1 holds n1, 2 one core of n2, both until 100; 3 (3 cores) is reserved at 100
    # on n1 (2 cores) and n2 (1 core). 4 (1 core, 200 s) would fit on n2's other core throughout, but
    # the reservation holds n2 whole: 4 waits until 3 starts at 100 and the main scheduler gives it
    # n2's core beside 3 (running jobs hold only their cores). With the reservation's cores alone
    # (the twin before version 10) it started at 2
    jobs = [_j(1, 0, 2, 100), _j(2, 0, 1, 100), _j(3, 1, 3, 10), _j(4, 2, 1, 200)]
    got, _, _ = _run(_nodes(2, 2), jobs, bf_interval_s=1, bf_resolution_s=1)
    assert [got[3].start, got[4].start] == [100, 100]
    # a running job holds only its cores (cons_tres): 5 (1 core) starts at once beside 2 on n2
    got, _, _ = _run(_nodes(2, 2), [_j(1, 0, 2, 100), _j(2, 0, 1, 100), _j(5, 1, 1, 10)], bf_interval_s=1)
    assert got[5].start == 1


def test_bf_max_job_test_defaults_to_500():
    from paretosched.config import SlurmScheduler
    assert SlurmScheduler().bf_max_job_test == 500 and SlurmScheduler().bf_resolution_s == 60


def test_the_grid_is_the_wall_clocks():
    # the twin's 0 at 30 s past a minute: 2's reservation at 100 (130 on the wall clock) is held from
    # 120 - 30 = 90, so 3 ending at 2 + 87 = 89 is backfilled and one ending at 90 is not
    got, _, _ = _run(_platform(2), _short(87), bf_interval_s=1, clock_origin_s=1_700_000_010)
    assert got[3].start == 2  # 1_700_000_010 is 30 s past a minute (1_699_999_980 = 28,333,333 x 60)
    got, _, _ = _run(_platform(2), _short(88), bf_interval_s=1, clock_origin_s=1_700_000_010)
    assert got[3].start == 110
