"""Partitions in the `slurm` kind: node sets, PriorityTier, their import and their errors (docs/slurm.md)."""

from __future__ import annotations

import numpy as np
import pytest

from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.sim.engine.twin import Twin
from paretosched.sim.readers.slurm.conf import load_cpu_map, read_slurm_conf
from paretosched.sim.readers.slurm.platform_import import platform_from_conf
from paretosched.sim.readers.slurm.sacct import read_sacct
from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf
from paretosched.sim.readers.workload import read_swf
from tests.slurm.test_slurm_kind import _run as run_kind


def _platform(n: int) -> dict:
    """n single-core 1 GFLOP/s nodes named n[1-n]."""
    return {"name": "t", "processor_types": {"s": {"cores": 1, "clock_ghz": 1.0, "flops_per_cycle": 1,
                                                   "power_w": 100}},
            "node_types": {"slow": {"processors": {"s": 1}}},
            "clusters": [{"name": f"n[1-{n}]", "nodes": {"slow": n}}]}


def _swf(tmp_path, jobs: list[tuple[int, float, int, float, int]], header: str = "") -> str:
    """(id, submit, cores, run, partition) as SWF lines (field 16 the partition), after `header`."""
    lines = [f"{i} {s:g} 0 {r:g} {c} -1 -1 {c} {r:g} -1 1 1 1 -1 -1 {p} -1 -1" for i, s, c, r, p in jobs]
    path = tmp_path / "jobs.swf"
    path.write_text(header + "\n".join(lines) + "\n")
    return str(path)


def _run(platform: dict, workload: str, **sched) -> tuple[dict, Twin]:
    """The kind on an SWF file (test_slurm_kind's runner: decisions at the events themselves)."""
    jobs, _, twin = run_kind(platform, workload={"path": workload}, **sched)
    return jobs, twin


LOW_HIGH = [{"name": "low", "nodes": "n[1-4]", "priority_tier": 1, "default": True},
            {"name": "high", "nodes": "n[3-4]", "priority_tier": 2}]


def _mixed(k: int) -> list[tuple[int, float, int, float, int]]:
    """k jobs of 1-2 cores, alternating partitions 1 and 2, arriving faster than they run."""
    rng = np.random.default_rng(3)
    return [(i, float(i * 3), int(rng.integers(1, 3)), float(rng.integers(5, 40)), 1 + i % 2) for i in range(1, k + 1)]


def test_no_job_runs_outside_its_partition(tmp_path):
    jobs, _ = _run(_platform(4), _swf(tmp_path, _mixed(40)), partitions=LOW_HIGH, priority_weight_job_size=1000)
    assert len(jobs) == 40
    for j in jobs.values():
        if j.partition == 2:
            assert set(j.nodes) <= {2, 3}, (j.id, j.nodes)  # high: n3, n4 (indices 2, 3)
    # and with cons_tres and the default partition taking jobs that name none (field 16 -1)
    wl = [(i, s, c, r, -1 if p == 1 else p) for i, s, c, r, p in _mixed(30)]
    jobs, _ = _run(_platform(4), _swf(tmp_path, wl), partitions=[{**LOW_HIGH[0], "nodes": "n[1-2]"}, LOW_HIGH[1]])
    assert all(set(j.nodes) <= ({2, 3} if j.partition == 2 else {0, 1}) for j in jobs.values())


def test_a_higher_tier_job_starts_first_when_both_fit(tmp_path):
    # job 1 holds all 4 nodes until 100; jobs 2 (low, earlier, larger: the higher job-size priority)
    # and 3 (high) both need all of them: at 100 the high-tier job goes first, whatever the priority
    wl = [(1, 0, 4, 100, 1), (2, 1, 4, 10, 1), (3, 2, 4, 10, 2)]
    parts = [{"name": "low", "nodes": "ALL", "priority_tier": 1}, {"name": "high", "nodes": "ALL", "priority_tier": 2}]
    jobs, _ = _run(_platform(4), _swf(tmp_path, wl), partitions=parts, priority_weight_job_size=1000)
    assert (jobs[3].start, jobs[2].start) == (100, 110)
    jobs, _ = _run(_platform(4), _swf(tmp_path, wl), partitions=[parts[0], {**parts[1], "priority_tier": 1}])
    assert (jobs[2].start, jobs[3].start) == (100, 110)  # one tier: the earlier submission first


def test_priority_job_factor_weighs_by_priority_weight_partition(tmp_path):
    # one tier, all nodes: job 3 of `fast` (PriorityJobFactor 2, the largest: factor 1) outranks the
    # earlier job 2 of `slow` (factor 1/2) by PriorityWeightPartition x 1/2
    wl = [(1, 0, 4, 100, 1), (2, 1, 4, 10, 1), (3, 2, 4, 10, 2)]
    parts = [{"name": "slow", "nodes": "ALL", "priority_job_factor": 1},
             {"name": "fast", "nodes": "ALL", "priority_job_factor": 2}]
    jobs, _ = _run(_platform(4), _swf(tmp_path, wl), partitions=parts, priority_weight_partition=1000)
    assert (jobs[3].start, jobs[2].start) == (100, 110)
    jobs, _ = _run(_platform(4), _swf(tmp_path, wl), partitions=parts)  # weight 0: submission order
    assert (jobs[2].start, jobs[3].start) == (100, 110)


def test_main_scheduler_keeps_a_failed_partitions_nodes_for_it(tmp_path):
    # job 1 (high, n[3-4]) runs on n3 until 50; job 2 (high, 2 cores) cannot start at 5: Slurm's main
    # scheduler then takes n[3-4] away from the rest of the pass (job_scheduler.c `_schedule`), so job
    # 3 (low, 3 cores) does not start at 6 on the free n1, n2 and n4; it starts after job 2, at 60
    wl = [(1, 0, 1, 50, 2), (2, 5, 2, 10, 2), (3, 6, 3, 10, 1)]
    jobs, _ = _run(_platform(4), _swf(tmp_path, wl), partitions=LOW_HIGH, scheduler_type="builtin")
    assert (jobs[2].start, jobs[3].start) == (50, 60) and set(jobs[2].nodes) == {2, 3}
    # without partitions the same jobs start at once (n1-n4 all free at 5 and at 6)
    jobs, _ = _run(_platform(4), _swf(tmp_path, wl), scheduler_type="builtin")
    assert (jobs[2].start, jobs[3].start) == (5, 15)


def test_partitions_that_change_nothing_change_no_schedule(tmp_path):
    wl = [(i, s, c, r, 1) for i, s, c, r, _ in _mixed(60)]
    path = _swf(tmp_path, wl)
    base, _ = _run(_platform(4), path, priority_weight_job_size=1000)
    # every job in `a`, which holds every node; `b` (another tier, no jobs) makes the kind take the
    # partition path: the same schedule
    parts = [{"name": "a", "nodes": "ALL"}, {"name": "b", "nodes": "n[1-2]", "priority_tier": 5}]
    got, _ = _run(_platform(4), path, partitions=parts, priority_weight_job_size=1000)
    assert [(j.start, j.end, j.nodes) for j in base.values()] == [(j.start, j.end, j.nodes) for j in got.values()]


CONF = """ClusterName=two
SelectType=select/linear
NodeName=n[01-04] CPUs=8 RealMemory=1000
PartitionName=DEFAULT MaxTime=INFINITE State=UP
PartitionName=low Nodes=n[01-04] PriorityTier=1 Default=YES
PartitionName=high Nodes=n[03-04] PriorityTier=2
"""
DUMP = """JobIDRaw|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|State|Partition|User
7|2026-01-01T00:00:00|2026-01-01T00:00:05|2026-01-01T00:01:05|00:01:00|00:02:00|8|1|COMPLETED|high|u
8|2026-01-01T00:00:10|2026-01-01T00:00:10|2026-01-01T00:01:10|00:01:00|00:02:00|16|2|COMPLETED|low|u
9|2026-01-01T00:00:20|2026-01-01T00:01:05|2026-01-01T00:02:05|00:01:00|00:02:00|8|1|COMPLETED||u
"""


def _imported(tmp_path, conf_text: str = CONF) -> tuple[dict, dict, list[str]]:
    conf_file = tmp_path / "slurm.conf"
    conf_file.write_text(conf_text)
    conf = read_slurm_conf([conf_file])
    cmap = tmp_path / "cpus.yaml"
    cmap.write_text("patterns:\n  'n\\d+': xeon_e5_4640\n")
    data, rep = platform_from_conf(conf, load_cpu_map(cmap), "two")
    notes: list[str] = []
    return data, scheduler_from_conf(conf, data, rep.weights, notes), notes


def test_import_round_trip_keeps_partitions_and_numbers_jobs_by_them(tmp_path):
    data, sched, _ = _imported(tmp_path)
    assert sched["partitions"] == [
        {"name": "low", "nodes": "ALL", "priority_tier": 1, "priority_job_factor": 1, "default": True},
        {"name": "high", "nodes": "n[03-04]", "priority_tier": 2, "priority_job_factor": 1, "default": False}]
    (tmp_path / "sacct.txt").write_text(DUMP)
    # the first job is in `high`: by first appearance it would be 1; by slurm.conf order it is 2
    assert [j[15] for j in read_sacct(tmp_path / "sacct.txt").jobs] == [1, 2, -1]
    out = tmp_path / "jobs.swf"
    assert main(["trace", "import", str(tmp_path / "sacct.txt"), "-o", str(out),
                 "--slurm-conf", str(tmp_path / "slurm.conf")]) == 0
    assert "; Partitions: 1=low 2=high" in out.read_text()
    raw = read_swf(str(out))
    assert raw.partition == [2, 1, -1]
    jobs, _ = _run(data, str(out), **{k: v for k, v in sched.items() if k != "kind"})
    assert set(jobs[1].nodes) <= {2, 3}  # the `high` job on n[03-04]
    # the dump itself as the workload numbers partitions by first appearance (high 1, low 2); its
    # header names them, so the scheduler matches them by name: the same schedule
    again, _ = _run(data, str(tmp_path / "sacct.txt"), **{k: v for k, v in sched.items() if k != "kind"})
    assert [(j.start, j.nodes) for j in again.values()] == [(j.start, j.nodes) for j in jobs.values()]
    assert [j.partition_name for j in again.values()] == ["high", "low", ""]


def test_one_partition_of_all_nodes_imports_as_none(tmp_path):
    _, sched, _ = _imported(tmp_path, CONF.replace("PartitionName=high Nodes=n[03-04] PriorityTier=2\n", ""))
    assert sched["partitions"] == []


@pytest.mark.parametrize("line, message", [
    ("PartitionName=high Nodes=n[03-09]", "slurm.conf:6: Nodes: n05 is not a NodeName of"),
    ("PartitionName=high Nodes=n[03-04] PriorityTier=top", "slurm.conf:6: PriorityTier must be a whole number"),
    ("PartitionName=high Nodes=n[03-04] PriorityJobFactor=-1", "slurm.conf:6: PriorityJobFactor must be a whole"),
])
def test_bad_partition_lines_are_one_line_errors(tmp_path, line, message):
    with pytest.raises(UserError) as err:
        _imported(tmp_path, CONF.replace("PartitionName=high Nodes=n[03-04] PriorityTier=2", line))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_bad_partitions_of_jobs_are_one_line_errors(tmp_path):
    (tmp_path / "sacct.txt").write_text(DUMP.replace("|low|", "|gpu|"))
    with pytest.raises(UserError, match=r"sacct.txt:3: Partition 'gpu' is not a partition of slurm.conf \(low, high\)"):
        read_sacct(tmp_path / "sacct.txt", ["low", "high"], "slurm.conf")
    for wl, sched, message in [
        ([(1, 0, 1, 10, 3)], LOW_HIGH, "workload job 1: SWF field 16 (partition) is 3, but scheduler.partitions has 2"),
        ([(1, 0, 3, 10, 2)], LOW_HIGH, "workload job 1: 3 cores (0 MB each), but partition high"),
        ([(1, 0, 1, 10, 1)], [{"name": "a", "nodes": "m[1-2]"}], "scheduler.partitions[0] (a).nodes: node m1 is not"),
        ([(1, 0, 1, 10, 1)], [{"name": "b"}, {"name": "c"}], "workload job 1: partition 'a' (SWF field 16 = 1, named by"),
        ([(1, 0, 1, 10, 1)], [{"name": "a", "default": True}, {"name": "b", "default": True}], "2 partitions are default"),
    ]:
        header = "; Partitions: 1=a\n" if "named by" in message else ""
        with pytest.raises(UserError) as err:
            _run(_platform(4), _swf(tmp_path, wl, header), partitions=sched)
        assert message in str(err.value) and "\n" not in str(err.value)


def test_a_job_whose_memory_its_partition_cannot_hold_is_a_one_line_error(tmp_path):
    plat = _platform(4)
    plat["node_types"]["slow"]["memory_gb"] = 1.0
    lines = "1 0 0 10 2 -1 -1 2 10 1048576 1 1 1 -1 -1 2 -1 -1\n"  # 2 cores x 1 GB: two nodes of `high`
    (tmp_path / "m.swf").write_text(lines)
    jobs, _ = _run(plat, str(tmp_path / "m.swf"), partitions=LOW_HIGH)
    assert set(jobs[1].nodes) == {2, 3}
    (tmp_path / "m.swf").write_text(lines.replace(" 2 -1 -1 2 10 ", " 3 -1 -1 3 10 ").replace(" -1 2 -1 -1\n", " -1 1 -1 -1\n"))
    jobs, _ = _run(plat, str(tmp_path / "m.swf"), partitions=LOW_HIGH)  # 3 x 1 GB fits `low` (4 nodes)
    assert len(set(jobs[1].nodes)) == 3  # one 1 GB core a node
    (tmp_path / "m.swf").write_text(lines.replace(" 2 -1 -1 2 10 ", " 3 -1 -1 3 10 "))
    with pytest.raises(UserError, match=r"workload job 1: 3 cores \(1024 MB each\), but partition high .* holds 2 "):
        _run(plat, str(tmp_path / "m.swf"), partitions=LOW_HIGH)
