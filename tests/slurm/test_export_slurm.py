"""`export --format slurm`: the fragment, and the round trip through `platform import`."""

from __future__ import annotations

import pytest

from paretosched.analysis.slurm_export import slurm_fragment, slurm_time
from paretosched.config import config_from_dict
from paretosched.errors import UserError
from paretosched.sim.readers.inputs import bundled
from paretosched.sim.readers.slurm.conf import load_cpu_map, read_slurm_conf
from paretosched.sim.readers.slurm.platform_import import platform_from_conf
from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf
from paretosched.yamlio import dump_yaml

SAMPLE, CPU_MAP = bundled("slurm", "slurm.conf"), bundled("slurm", "cpu-map.yaml")


def _imported(tmp_path, *extra):
    conf = read_slurm_conf([SAMPLE, *extra])
    data, rep = platform_from_conf(conf, load_cpu_map(CPU_MAP), "sample")
    return conf, data, rep


def _doc(tmp_path, scheduler: dict) -> dict:
    _, data, _ = _imported(tmp_path)
    plat = tmp_path / "platform.yaml"
    plat.write_text(dump_yaml(data, sort_keys=False))
    cfg = config_from_dict({"platform": str(plat), "workload": {"path": "builtin:sacct-sample.txt"},
                            "scheduler": scheduler})
    doc = cfg.model_dump(mode="json")
    doc["provenance"] = {"study": "t", "pick": "balanced", "eval_id": 3, "objectives": {"energy_kwh": 1.5}}
    return doc


@pytest.mark.parametrize("sched", [
    {"kind": "slurm"},
    {"kind": "slurm", "priority_weight_age": 1000, "priority_weight_job_size": 500, "priority_favor_small": True,
     "priority_weight_fairshare": 2000, "priority_decay_half_life_s": 3600 * 36, "priority_max_age_s": 86400 * 2,
     "scheduler_type": "builtin", "bf_max_job_test": 50, "bf_interval_s": 120, "bf_window_min": 240, "bf_resolution_s": 300,
     "node_order": "efficiency_first",
     "suspend_time_s": 600, "suspend_timeout_s": 45, "resume_timeout_s": 300, "suspend_rate": 5, "resume_rate": 20,
     "suspend_exc_nodes": 3, "cpu_freq_def": "PowerSave"},
    {"kind": "slurm", "node_order": "lowest_power_first", "suspend_time_s": 60},
    {"kind": "slurm", "node_order": "fastest_first"},
])
def test_round_trip_slurm_conf_plus_fragment_gives_the_simulated_config(tmp_path, sched):
    doc = _doc(tmp_path, sched)
    frag = tmp_path / "paretosched.conf"
    frag.write_text(slurm_fragment(doc))
    conf, data, rep = _imported(tmp_path, frag)
    _, data0, _ = _imported(tmp_path)
    assert data == data0  # the fragment changes no hardware
    assert scheduler_from_conf(conf, data, rep.weights) == doc["scheduler"]


def test_fragment_lines_for_a_slurm_pick(tmp_path):
    text = slurm_fragment(_doc(tmp_path, {"kind": "slurm", "node_order": "fastest_first", "suspend_time_s": 600,
                                          "suspend_exc_nodes": 2}))
    lines = text.splitlines()
    assert "SuspendTime=600" in lines and "PriorityMaxAge=7-00:00:00" in lines and "CpuFreqDef=Performance" in lines
    # the Xeon Gold 6148 nodes (76.8 GFLOP/s per core) are the fastest: Weight 1, and the first excluded
    assert "NodeName=cpu[01-08] Weight=1" in lines and "SuspendExcNodes=cpu[01-02]" in lines
    assert "NodeName=old[001-004,010] Weight=3" in lines
    assert slurm_time(93784) == "1-02:03:04"


def test_fragment_for_a_classic_pick_lists_what_does_not_map(tmp_path):
    text = slurm_fragment(_doc(tmp_path, {"kind": "classic", "job_policy": "shortest", "resource_policy": "high_mem",
                                          "backfilling": "easy", "power_off_idle_s": 300, "min_nodes_on": 2,
                                          "freq": 0.8, "bw_cap": 1.0}))
    lines = text.splitlines()
    assert "SchedulerType=sched/backfill" in lines and "SuspendTime=300" in lines
    assert "SuspendExcNodes=cpu[01-08],old[001-004,010],amd[1-2]:2" in lines
    assert "ResumeTimeout=180   # the simulated boot time; give your nodes' real one" in lines
    no_equiv = text.split("No Slurm equivalent")[1]
    for what in ("job_policy: shortest", "resource_policy: high_mem", "backfilling: easy", "freq: 0.8", "bw_cap"):
        assert what in no_equiv
    fifo = slurm_fragment(_doc(tmp_path, {"kind": "classic", "job_policy": "first", "resource_policy": "high_gflops"}))
    assert "PriorityType=priority/basic" in fifo and "NodeName=cpu[01-08] Weight=1" in fifo
    assert "SuspendTime=INFINITE" in fifo and "#   nothing" in fifo


def test_import_notes_weights_that_follow_no_order(tmp_path):
    frag = tmp_path / "f.conf"
    frag.write_text("NodeName=cpu01 Weight=5\nSuspendTime=120\n")  # one node apart from its identical siblings
    conf, data, rep = _imported(tmp_path, frag)
    notes: list[str] = []
    sched = scheduler_from_conf(conf, data, rep.weights, notes)
    assert sched["node_order"] == "platform" and sched["suspend_time_s"] == 120
    assert notes == ["the nodes' Weight values follow none of the node orders (platform, fastest_first, "
                     "lowest_power_first, efficiency_first): node_order platform"]
    frag.write_text("SuspendExcNodes=old001\n")
    conf, data, rep = _imported(tmp_path, frag)
    with pytest.raises(UserError, match=r"f.conf:1: the twin excludes the first nodes of the Weight order"):
        scheduler_from_conf(conf, data, rep.weights)
