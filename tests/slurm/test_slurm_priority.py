"""The `slurm` kind's priority/multifactor as Slurm 22.05 computes it: the job-size factor over nodes
and CPUs, and what slurmdbd's absence takes away (docs/slurm.md)."""

from __future__ import annotations

from types import SimpleNamespace

from paretosched.config import SlurmScheduler
from paretosched.sim.slurm.scheduler import Priority
from tests.slurm.test_slurm_bf_rules import _nodes
from tests.slurm.test_slurm_kind import _j, _run


def _job(size: int) -> SimpleNamespace:
    return SimpleNamespace(size=size, submit=0.0, user=1)


def test_job_size_factor_is_the_mean_of_the_node_and_cpu_shares():
    # 4 nodes of 2 cores: 1 core is 1 node, (1/4 + 1/8) / 2 = 0.1875; 3 cores need 2 nodes:
    # (2/4 + 3/8) / 2 = 0.4375; 8 cores (4/4 + 8/8) / 2 = 1
    prio = Priority(SlurmScheduler(priority_weight_job_size=10000), 8, [], [2, 2, 2, 2])
    assert [prio.value(_job(k), 0.0, 0.0) for k in (1, 3, 8)] == [1875, 4375, 10000]
    small = Priority(SlurmScheduler(priority_weight_job_size=10000, priority_favor_small=True), 8, [], [2, 2, 2, 2])
    assert [small.value(_job(k), 0.0, 0.0) for k in (1, 3, 8)] == [8125, 5625, 0]


def test_without_slurmdbd_age_counts_for_nothing():
    # 1 fills the 8 cores until 100; 2 (4 cores, submitted at 1) and 3 (8 cores, at 50) wait. At 100,
    # with slurmdbd: 2 has age 99/100 x 10000 + size 0.5 x 1000 = 10400 > 3's 5000 + 1000: 2 first.
    # Without: sizes alone, 3 (1000) before 2 (500)
    jobs = [_j(1, 0, 8, 100), _j(2, 1, 4, 10), _j(3, 50, 8, 10)]
    sched = {"scheduler_type": "builtin", "priority_weight_age": 10000, "priority_max_age_s": 100,
             "priority_weight_job_size": 1000}
    got, _, _ = _run(_nodes(4, 2), jobs, **sched)
    assert [got[2].start, got[3].start] == [100, 110]
    got, _, _ = _run(_nodes(4, 2), jobs, slurmdbd=False, **sched)
    assert [got[3].start, got[2].start] == [100, 110]


def test_import_reads_accounting_storage_type(tmp_path):
    from tests.slurm.test_slurm_select import SAMPLE, _import
    sched, notes = _import(tmp_path)
    assert sched["slurmdbd"] is True  # the sample names accounting_storage/slurmdbd
    text = "\n".join(ln for ln in SAMPLE.read_text().splitlines() if not ln.startswith("AccountingStorageType"))
    conf = tmp_path / "nodbd.conf"
    conf.write_text(text + "\nPriorityWeightAge=1000\n")
    from paretosched.sim.readers.slurm.conf import load_cpu_map, read_slurm_conf
    from paretosched.sim.readers.slurm.platform_import import platform_from_conf
    from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf
    from tests.slurm.test_slurm_select import CPU_MAP
    c = read_slurm_conf([conf])
    data, rep = platform_from_conf(c, load_cpu_map(CPU_MAP), "s")
    notes = []
    sched = scheduler_from_conf(c, data, rep.weights, notes)
    assert sched["slurmdbd"] is False and any("PriorityWeightAge and PriorityWeightFairshare count for nothing" in n
                                              for n in notes)
