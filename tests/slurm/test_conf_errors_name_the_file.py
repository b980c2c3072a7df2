"""The slurm.conf reader's errors: they name the real file, and a dangling continuation is one."""

from __future__ import annotations

import pytest

from paretosched.errors import UserError
from paretosched.sim.readers.slurm.conf import load_cpu_map, read_slurm_conf
from paretosched.sim.readers.slurm.platform_import import platform_from_conf


def test_a_conf_without_nodes_names_its_own_file(tmp_path):
    p = tmp_path / "cluster-a.conf"
    p.write_text("ClusterName=a\nSuspendTime=60\n")
    with pytest.raises(UserError, match=r"^\S*cluster-a.conf: no NodeName line with a node in service$"):
        platform_from_conf(read_slurm_conf([p]), load_cpu_map(None), "t")


def test_a_continuation_at_the_end_of_the_file_is_an_error_naming_its_line(tmp_path):
    p = tmp_path / "cut.conf"
    p.write_text("ClusterName=a\nNodeName=n[1-2] Features=xeon_e5_2660 \\\n")
    with pytest.raises(UserError, match=r"cut.conf:2: line ends in '\\' but the file ends"):
        read_slurm_conf([p])
    p.write_text("ClusterName=a\nNodeName=n[1-2] \\\n  Features=xeon_e5_2660\n")  # a joined line is fine
    assert [n.names for n in read_slurm_conf([p]).nodes] == [["n1", "n2"]]
