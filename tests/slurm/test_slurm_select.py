"""SelectType on the `slurm` kind: select/linear gives jobs whole nodes, select/cons_tres cores; the
import reads SelectType, SelectTypeParameters and the partitions' OverSubscribe (docs/slurm.md)."""

from __future__ import annotations

from paretosched.sim.readers.slurm.conf import load_cpu_map, read_slurm_conf
from paretosched.sim.readers.slurm.platform_import import platform_from_conf
from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf
from paretosched.sim.readers.inputs import bundled
from tests.slurm.test_slurm_bf_rules import _nodes
from tests.slurm.test_slurm_kind import _j, _run

SAMPLE, CPU_MAP = bundled("slurm", "slurm.conf"), bundled("slurm", "cpu-map.yaml")


def test_linear_gives_whole_nodes_and_cons_tres_cores():
    # two 2-core nodes; 1 (1 core) from 0 to 100, 2 and 3 (1 core, 10 s) submitted at 1 and 2
    jobs = [_j(1, 0, 1, 100), _j(2, 1, 1, 10), _j(3, 2, 1, 10)]
    got, _, _ = _run(_nodes(2, 2), jobs)
    assert [got[2].start, got[3].start] == [1, 2]  # cores: 2 beside 1 on n1, 3 on n2
    got, _, _ = _run(_nodes(2, 2), jobs, select_type="linear")
    assert [got[2].start, got[3].start] == [1, 11]  # whole nodes: 2 takes n2, 3 waits for it


def test_linear_takes_enough_whole_nodes_in_weight_order():
    # 3 cores on 2-core nodes: both nodes, so 2 (1 core) waits for 1 to end even though a core is idle
    got, _, twin = _run(_nodes(2, 2), [_j(1, 0, 3, 100), _j(2, 1, 1, 10)], select_type="linear")
    assert got[2].start == 100
    got, _, _ = _run(_nodes(2, 2), [_j(1, 0, 3, 100), _j(2, 1, 1, 10)])
    assert got[2].start == 1


def _import(tmp_path, *lines: str) -> tuple[dict, list[str]]:
    text = SAMPLE.read_text()
    for key in ("SelectType=", "SelectTypeParameters="):
        text = "\n".join(ln for ln in text.splitlines() if not ln.startswith(key))
    conf_file = tmp_path / "slurm.conf"
    conf_file.write_text(text + "\n" + "\n".join(lines) + "\n")
    conf = read_slurm_conf([conf_file])
    data, rep = platform_from_conf(conf, load_cpu_map(CPU_MAP), "sample")
    notes: list[str] = []
    return scheduler_from_conf(conf, data, rep.weights, notes), notes


def test_import_reads_select_type_and_notes_what_it_cannot_model(tmp_path):
    sched, notes = _import(tmp_path)
    assert sched["select_type"] == "linear" and any("Slurm 22.05's default" in n for n in notes)
    sched, notes = _import(tmp_path, "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory")
    assert sched["select_type"] == "cons_tres" and not any("Select" in n for n in notes)
    sched, notes = _import(tmp_path, "SelectType=select/cons_tres", "SelectTypeParameters=CR_Socket_Memory")
    assert sched["select_type"] == "cons_tres" and any("CR_SOCKET_MEMORY allocates whole sockets" in n for n in notes)
    sched, notes = _import(tmp_path, "SelectType=select/cons_tres", "PartitionName=x Nodes=cpu01 OverSubscribe=EXCLUSIVE")
    assert sched["select_type"] == "linear" and any("OverSubscribe=EXCLUSIVE" in n for n in notes)
    sched, notes = _import(tmp_path, "SelectType=select/linear", "PartitionName=x Nodes=cpu01 OverSubscribe=FORCE:4")
    assert sched["select_type"] == "linear" and any("OverSubscribe=FORCE" in n and "not" in n for n in notes)
    # the sample's batch partition and x, both imported (x holds one node: not one queue over all)
    assert [(p["name"], p["nodes"]) for p in sched["partitions"]] == [("batch", "ALL"), ("x", "cpu01")]


def test_import_names_the_scheduler_parameters_it_does_not_model(tmp_path):
    sched, notes = _import(tmp_path, "SchedulerParameters=bf_interval=5,bf_resolution=120,batch_sched_delay=1,"
                                     "bf_continue,default_queue_depth=50")
    assert (sched["bf_interval_s"], sched["bf_resolution_s"], sched["batch_sched_delay_s"]) == (5, 120, 1)
    assert any("SchedulerParameters bf_continue, default_queue_depth not modelled" in n for n in notes)
