"""Built-in platforms and platform-file validation."""

from __future__ import annotations

import pytest

from paretosched.errors import UserError
from paretosched.sim.readers.platform import load_platform


def test_gaia_matches_thesis_table_5_1():
    s = load_platform("gaia").summary()
    assert (s["nodes"], s["processors"], s["cores"]) == (153, 342, 2280)
    by = s["by_processor_type"]
    assert by["xeon_e7_8880v2"]["cores"] == 120 and by["xeon_e5_4650v2"]["cores"] == 160
    # 0.75 x TDP per socket
    plat = load_platform("gaia")
    per_socket = {p.ptype: p.power_w for p in plat.procs}
    assert per_socket == {"xeon_l5640": 45.0, "xeon_x5670": 71.25, "xeon_e7_4850": 97.5, "xeon_e5_4640": 71.25,
                          "xeon_e5_2660": 71.25, "xeon_e7_8880v2": 97.5, "xeon_e5_4650v2": 71.25}
    gf = {p.ptype: p.gflops_per_core for p in plat.procs}
    assert gf["xeon_l5640"] == pytest.approx(9.04) and gf["xeon_e7_8880v2"] == pytest.approx(20.0)


def test_two_socket_and_homogeneous():
    two = load_platform("two-socket")
    assert [(p.cores, p.gflops_per_core, p.power_w, p.mem_bw_gbs) for p in two.procs] == [
        (2, 4.0, 80.0, 32.0), (2, pytest.approx(4.4), 100.0, 32.0)]
    assert two.ref_speed == pytest.approx(4.2)
    h = load_platform("homogeneous-256")
    assert h.n_cores == 256 and len(h.nodes) == 256 and h.ref_speed == 1.0


def test_platform_file_errors(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("name: x\nprocessor_types: {a: {cores: 2, clock_ghz: 1, flops_per_cycle: 4, power_w: 10}}\n"
                   "node_types: {n: {processors: {b: 1}}}\nclusters: [{name: c, nodes: {n: 1}}]\n")
    with pytest.raises(UserError, match=r"p.yaml: node_types.n.processors: unknown processor type 'b'"):
        load_platform(str(bad))
    with pytest.raises(UserError, match="unknown platform 'nope'"):
        load_platform("nope")


def test_an_off_node_drawing_more_than_a_busy_one_is_refused():
    # a reviewer's platform with off_w 500 W on 80 W nodes ran and reported energies
    from paretosched.sim.readers.platform import build_platform, load_platform_spec

    spec = {"name": "p", "processor_types": {"x": {"cores": 2, "clock_ghz": 1.0, "flops_per_cycle": 4, "power_w": 80}},
            "node_types": {"n": {"processors": {"x": 1}, "off_w": 500}}, "clusters": [{"name": "c", "nodes": {"n": 2}}]}
    with pytest.raises(UserError, match=r"node_types\.n\.off_w: 500 W .* more than the 80 W"):
        build_platform(load_platform_spec(spec))
    spec["node_types"]["n"]["off_w"] = 8
    assert build_platform(load_platform_spec(spec)).n_cores == 4
