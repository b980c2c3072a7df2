"""slurm.conf -> platform: hostlists, DEFAULT lines, Include, continuations, the processor library."""

from __future__ import annotations

import pytest

from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.sim.readers.platform import load_platform
from paretosched.sim.readers.slurm.conf import load_cpu_map, load_library, read_slurm_conf
from paretosched.sim.readers.slurm.hostlist import compress, expand
from paretosched.sim.readers.slurm.platform_import import node_names, platform_from_conf, processor_type
from paretosched.yamlio import read_yaml


def _import(tmp_path, text, cmap=None):
    p = tmp_path / "slurm.conf"
    p.write_text(text)
    mp = None
    if cmap is not None:
        mp = tmp_path / "map.yaml"
        mp.write_text(cmap)
    conf = read_slurm_conf([p])
    return platform_from_conf(conf, load_cpu_map(mp), "t")


def test_hostlist_expand_and_compress():
    assert expand("node[001-003,100]") == ["node001", "node002", "node003", "node100"]
    assert expand("a[1-2]b[3-4]") == ["a1b3", "a1b4", "a2b3", "a2b4"]
    assert expand("n1,gpu[1-2]") == ["n1", "gpu1", "gpu2"]
    names = expand("node[001-096,100]")
    assert len(names) == 97 and expand(compress(names)) == names
    assert compress(["n1", "n2", "x", "n5"]) == "n[1-2,5],x"
    for bad in ("n[1-", "n[3-1]", "n[a]", "n]1"):
        with pytest.raises(ValueError):
            expand(bad)


def test_default_lines_continuation_comments_and_cpus(tmp_path):
    data, rep = _import(tmp_path, (
        "# comment line\n"
        "NodeName=DEFAULT Sockets=2 CoresPerSocket=20 RealMemory=190000 # trailing comment\n"
        "NodeName=c[01-03] Feature=epyc_7742,ib \\\n  Sockets=2 CoresPerSocket=64 Weight=5\n"
        "NodeName=s[1-2] Features=xeon_gold_6148 Weight=2\n"
        "NodeName=DEFAULT RealMemory=48000 Sockets=1 CoresPerSocket=6\n"
        "NodeName=w1 Feature=xeon_l5640 CPUs=12 Sockets=2\n"
        "NodeName=w2 Feature=xeon_l5640 CPUs=24 ThreadsPerCore=2 Sockets=2\n"))
    assert [c["name"] for c in data["clusters"]] == ["c[01-03]", "s[1-2]", "w1", "w2"]
    nt = data["node_types"]
    assert nt["epyc_7742_x2_190000mb"] == {"processors": {"epyc_7742": 2}, "memory_gb": 190000 / 1024}
    assert nt["xeon_gold_6148_x2_190000mb"]["processors"] == {"xeon_gold_6148": 2}
    assert nt["xeon_l5640_x2_48000mb"]["processors"] == {"xeon_l5640": 2}  # w1 and w2 share it
    assert rep.weights == {"c01": 5, "c02": 5, "c03": 5, "s1": 2, "s2": 2, "w1": 1, "w2": 1}
    assert rep.nodes == 7


def test_cpus_alone_infers_sockets(tmp_path):
    data, _ = _import(tmp_path, "NodeName=a[1-2] CPUs=128 Features=epyc_7742\nNodeName=b CPUs=64 "
                                "ThreadsPerCore=2 Features=epyc_7543\n")
    assert data["node_types"]["epyc_7742_x2"]["processors"] == {"epyc_7742": 2}
    assert data["node_types"]["epyc_7543_x1"]["processors"] == {"epyc_7543": 1}  # 64 CPUs = 32 cores x 2 threads
    assert "memory_gb" not in data["node_types"]["epyc_7742_x2"]  # no RealMemory: unlimited
    with pytest.raises(UserError, match=r"slurm.conf:2: CPUs=40 is not a whole number of epyc_7543"):
        _import(tmp_path, "NodeName=a CPUs=64 Features=epyc_7543\nNodeName=b CPUs=40 Features=epyc_7543\n")


def test_include_future_and_ignored_keys_are_reported(tmp_path):
    data, rep = _import(tmp_path, "Include /etc/slurm/more.conf\nNodeName=a1 Features=epyc_7742 NodeAddr=x Gres=gpu:2\n"
                                  "NodeName=f[1-3] Features=epyc_7742 State=FUTURE\nPartitionName=p Nodes=ALL\n")
    assert rep.skipped == {"state_future": 3} and rep.nodes == 1
    assert any("slurm.conf:1: Include not followed" in n for n in rep.notes)
    assert any("slurm.conf:2: ignored gres, nodeaddr" in n for n in rep.notes)


def test_cpu_map_features_and_patterns(tmp_path):
    data, _ = _import(tmp_path, "NodeName=old[1-2] CPUs=12\nNodeName=new1 Feature=skl CPUs=40\n",
                      "features: {skl: xeon_gold_6148}\npatterns: {'old\\d+': xeon_l5640}\npower: {boot_s: 90}\n")
    assert [list(c["nodes"]) for c in data["clusters"]] == [["xeon_l5640_x2"], ["xeon_gold_6148_x2"]]
    assert data["power"] == {"boot_s": 90}


@pytest.mark.parametrize("text, msg", [
    ("NodeName=a1 CPUs=8\n", r"slurm.conf:1: node a1 maps to no processor model"),
    ("NodeName=a[1-\n", r"slurm.conf:1: NodeName: unclosed"),
    ("NodeName=a1 Features=epyc_7742 Oops\n", r"slurm.conf:1: expected Key=Value, got 'Oops'"),
    ("NodeName=a1 Features=epyc_7742 CPUs=x\n", r"slurm.conf:1: cpus must be an integer"),
    ("NodeName=a1 Features=epyc_7742\nNodeName=a[1-2] Features=epyc_7742\n", r"slurm.conf:2: node a1 already defined"),
    ("NodeName=a1 Features=epyc_7742 CoresPerSocket=8\n", r"slurm.conf:1: CoresPerSocket=8 but epyc_7742 has 64"),
    ("ClusterName=x\n", r"no NodeName line"),
])
def test_malformed_lines_name_file_and_line(tmp_path, text, msg):
    with pytest.raises(UserError, match=msg):
        _import(tmp_path, text)


def test_cli_import_exit_codes(tmp_path, capsys):
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=mini\nNodeName=n[1-4] Sockets=2 Features=xeon_e5_2660 RealMemory=64000\n")
    out = tmp_path / "p.yaml"
    assert main(["platform", "import", str(conf), "-o", str(out)]) == 0
    plat = load_platform(str(out))
    assert (plat.spec.name, len(plat.nodes), plat.n_cores) == ("mini", 4, 64)
    assert node_names(plat.spec) == ["n1", "n2", "n3", "n4"]
    conf.write_text("NodeName=n1 CPUs=16\n")
    assert main(["platform", "import", str(conf), "-o", str(out), "--force"]) == 2
    assert "slurm.conf:1: node n1 maps to no processor model" in capsys.readouterr().err


def test_library_reproduces_gaia_processor_types():
    from paretosched.sim.readers.inputs import bundled

    lib = load_library()
    gaia = read_yaml(bundled("platforms", "gaia.yaml"))
    for name, pt in gaia["processor_types"].items():
        assert processor_type(name, lib[name]) == pt  # same clock, flops, bandwidth, 0.75 x TDP, f_min
    for name, spec in lib.items():  # every entry complete and plausible
        pt = processor_type(name, spec)
        assert pt["cores"] >= 1 and 0 < pt["f_min"] <= 1 and pt["power_w"] > 0 and pt["mem_bw_gbs"] > 0


def test_bundled_sample_imports(tmp_path):
    from paretosched.sim.readers.inputs import bundled

    conf = read_slurm_conf([bundled("slurm", "slurm.conf")])
    data, rep = platform_from_conf(conf, load_cpu_map(bundled("slurm", "cpu-map.yaml")), "sample")
    assert rep.nodes == 15 and rep.skipped == {"state_future": 2}
    assert [c["name"] for c in data["clusters"]] == ["cpu[01-06]", "cpu[07-08]", "old[001-004,010]", "amd[1-2]"]


def test_bundled_slurm_sample_platform_is_the_import_of_the_sample_conf():
    from paretosched.sim.readers.inputs import bundled

    conf = read_slurm_conf([bundled("slurm", "slurm.conf")])
    data, _ = platform_from_conf(conf, load_cpu_map(bundled("slurm", "cpu-map.yaml")), "slurm-sample")
    assert read_yaml(bundled("platforms", "slurm-sample.yaml")) == data
