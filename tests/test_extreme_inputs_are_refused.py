"""Extreme inputs and the twin: each case is a one-line error (exit 2) or the right result, never a
traceback, a silently wrong result or an unbounded run (the cases of the second adversarial audit)."""

from __future__ import annotations

import gzip
import math
import os
from pathlib import Path

import pytest

from paretosched.errors import UserError
from tests.adv import assert_real_metrics, assert_user_error, run_cli, strict_json

GOOD = "2024-01-01T00:00:00|2024-01-01T00:00:05|2024-01-01T00:01:00"
HEADER = "JobIDRaw|Submit|Start|End|NCPUS|State|Timelimit|ReqMem"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _simulate(tmp_path: Path, body: str, name: str = "c.yaml") -> tuple[int, str, str]:
    return run_cli(["simulate", str(_write(tmp_path / name, body)), "--json"])


# item 4: every float the twin multiplies is bounded; a non-finite metric is an error, never a result

@pytest.mark.parametrize("section,expected", [
    ("model: {p1_speed: 5.0e-324}", "model.p1_speed"),
    ("scheduler: {freq: 1.0e-300}", "scheduler.freq"),
    ("scheduler: {bw_cap: 1.0e-300}", "scheduler.bw_cap"),
    ("scheduler: {kind: slurm, suspend_timeout_s: 1.0e300}", "scheduler.suspend_timeout_s"),
    ("scheduler: {kind: slurm, resume_timeout_s: 5.0e-324}", "scheduler.resume_timeout_s"),
    ("scheduler: {kind: slurm, priority_max_age_s: 5.0e-324}", "scheduler.priority_max_age_s"),
    ("scheduler: {boot_s: 5.0e-324, power_off_idle_s: 1}", "scheduler.boot_s"),
])
def test_float_extremes_of_the_config_are_refused(tmp_path, section, expected):
    rc, out, err = _simulate(tmp_path, f"platform: homogeneous-2\nworkload: {{jobs: [{{run_s: 10}}]}}\n{section}\n")
    assert_user_error(rc, err, "c.yaml", expected)
    assert out == ""


def test_a_non_finite_metric_is_an_error_not_a_result(tmp_path, monkeypatch):
    import paretosched.sim.run as run

    real = run.compute_metrics

    def overflowing(*args, **kwargs):
        m = real(*args, **kwargs)
        return {**m, "energy_j": math.inf, "mean_power_w": math.nan}

    monkeypatch.setattr(run, "compute_metrics", overflowing)
    rc, out, err = _simulate(tmp_path, "platform: homogeneous-2\nworkload: {jobs: [{run_s: 10}]}\n")
    assert_user_error(rc, err, "c.yaml", "energy_j = inf", "not finite")
    assert out == ""


# item 5: physically meaningless platforms

_PLAT = """name: p
processor_types:
  a: {{cores: 2, clock_ghz: {clock}, flops_per_cycle: {fpc}, power_w: 80{extra}}}
node_types:
  n: {{processors: {{a: 1}}}}
clusters: [{{name: c, nodes: {{n: 2}}}}]
"""


@pytest.mark.parametrize("clock,fpc,extra,expected", [
    ("1.0e-200", "1.0e-200", "", "processor_types.a.clock_ghz"),
    ("1.0", "1.0e-200", "", "processor_types.a.flops_per_cycle"),
    ("1.0", "4", ", dvfs_table: [[1.0, 0.0]]", "dvfs_table.0: power fraction 0.0"),
    ("1.0", "4", ", dvfs_table: [[0.5, 0.22]]", "the nominal point [1.0, 1.0]"),
    ("1.0", "4", ", dvfs_table: [[0.5, 0.4], [1.0, 0.8]]", "the nominal point [1.0, 1.0]"),
    ("1.0", "4", ", mem_bw_gbs: 5.0e-324", "processor_types.a.mem_bw_gbs"),
])
def test_meaningless_platforms_are_refused(tmp_path, clock, fpc, extra, expected):
    plat = _write(tmp_path / "p.yaml", _PLAT.format(clock=clock, fpc=fpc, extra=extra))
    rc, out, err = run_cli(["platform", "show", str(plat)])
    assert_user_error(rc, err, "p.yaml", expected)
    rc, out, err = _simulate(tmp_path, f"platform: {plat}\nworkload: {{jobs: [{{run_s: 10}}]}}\n")
    assert_user_error(rc, err, expected)


def test_a_dvfs_table_with_the_nominal_point_runs_at_nominal_power(tmp_path):
    # 2 cores x 40 W busy for 100 s at f = 1: 8000 J, the same as without a table
    energies = []
    for extra in ("", ", dvfs_table: [[0.5, 0.22], [1.0, 1.0]]"):
        plat = _write(tmp_path / "p.yaml", _PLAT.format(clock="1.0", fpc="1", extra=extra).replace("n: 2", "n: 1"))
        rc, out, err = _simulate(tmp_path, f"platform: {plat}\nworkload: {{jobs: [{{run_s: 100, cores: 2}}]}}\n"
                                 "model: {interference: none}\n")
        assert rc == 0, err
        energies.append(strict_json(out)["energy_j"])
    assert energies == [pytest.approx(8000.0)] * 2


# item 6: platform import -o X --scheduler X

def _slurm_conf(tmp_path: Path, extra: str = "") -> Path:
    return _write(tmp_path / "slurm.conf", "ClusterName=t\nNodeName=n[1-3] Sockets=2 Feature=xeon_gold_6148\n" + extra)


@pytest.mark.parametrize("via_symlink", [False, True])
def test_platform_import_refuses_one_file_for_both_outputs(tmp_path, via_symlink):
    conf = _slurm_conf(tmp_path)
    out = tmp_path / "x.yaml"
    sched = out
    if via_symlink:
        out.write_text("kept: true\n")
        sched = tmp_path / "link.yaml"
        os.symlink(out, sched)
    rc, stdout, err = run_cli(["platform", "import", str(conf), "-o", str(out), "--scheduler", str(sched), "--force"])
    assert_user_error(rc, err, "--scheduler", "the same file as --output")
    assert (out.read_text() == "kept: true\n") if via_symlink else not out.exists()


# item 7: importer tracebacks

def test_sacct_reqmem_of_400_nines(tmp_path):
    dump = _write(tmp_path / "d.txt", f"{HEADER}\n1|{GOOD}|2|COMPLETED|10:00|{'9' * 400}M\n")
    rc, out, err = run_cli(["trace", "import", str(dump), "-o", str(tmp_path / "t.swf")])
    assert_user_error(rc, err, "d.txt:2", "ReqMem")
    assert not (tmp_path / "t.swf").exists()


def test_sacct_truncated_gzip(tmp_path):
    text = f"{HEADER}\n" + "".join(f"{k}|{GOOD}|2|COMPLETED|10:00|1G\n" for k in range(1, 400))
    dump = tmp_path / "d.txt.gz"
    dump.write_bytes(gzip.compress(text.encode())[:300])
    rc, out, err = run_cli(["trace", "import", str(dump), "-o", str(tmp_path / "t.swf")])
    assert_user_error(rc, err, "d.txt.gz:", "truncated gzip")


@pytest.mark.parametrize("body,key", [
    ("features: [skylake]\n", "features: expected a mapping"),
    ("patterns: [a]\n", "patterns: expected a mapping"),
    ("processors: [x]\n", "processors: expected a mapping"),
    ("features: {skylake: [xeon_gold_6148]}\n", "features.skylake: expected a processor model name"),
])
def test_cpu_map_of_the_wrong_shape(tmp_path, body, key):
    cmap = _write(tmp_path / "map.yaml", body)
    rc, out, err = run_cli(["platform", "import", str(_slurm_conf(tmp_path)), "--cpu-map", str(cmap),
                            "-o", str(tmp_path / "p.yaml")])
    assert_user_error(rc, err, "map.yaml", key)


def test_suspend_exc_nodes_count_that_is_not_a_number(tmp_path):
    conf = _slurm_conf(tmp_path, "SuspendExcNodes=n[1-3]:abc\n")
    rc, out, err = run_cli(["platform", "import", str(conf), "-o", str(tmp_path / "p.yaml"),
                            "--scheduler", str(tmp_path / "s.yaml")])
    assert_user_error(rc, err, "slurm.conf:3", "SuspendExcNodes count 'abc'")
    assert not (tmp_path / "p.yaml").exists()  # nothing written: the pair is decoded first


@pytest.mark.parametrize("option", [False, True])
def test_symlink_loop_as_workload_path(tmp_path, monkeypatch, option):
    monkeypatch.chdir(tmp_path)
    os.symlink("loop2", "loop1")
    os.symlink("loop1", "loop2")
    body = "platform: homogeneous-2\nworkload: {path: " + ("x.swf" if option else "loop1") + "}\n"
    cfg = _write(tmp_path / "c.yaml", body)
    rc, out, err = run_cli(["simulate", str(cfg)] + (["--workload", "loop1"] if option else []))
    assert_user_error(rc, err, "--workload" if option else "c.yaml: workload.path", "loop1")


# item 9: trace import writes only what the SWF reader reads; errors name the user's file and line

@pytest.mark.parametrize("record,what", [
    (f"2|{GOOD}|2|COMPLETED|99999999999|1G", "Timelimit 99999999999"),
    (f"2|{GOOD}|{10 ** 25}|COMPLETED|10|1G", f"NCPUS {10 ** 25}"),
    (f"2|{GOOD}|2|COMPLETED|10|99999999999T", "ReqMem 99999999999T"),
])
def test_trace_import_refuses_what_the_swf_reader_refuses(tmp_path, record, what):
    dump = _write(tmp_path / "d.txt", f"{HEADER}\n1|{GOOD}|2|COMPLETED|10:00|1G\n{record}\n")
    rc, out, err = run_cli(["trace", "import", str(dump), "-o", str(tmp_path / "t.swf")])
    assert_user_error(rc, err, "d.txt:3", what, "out of range")
    assert not (tmp_path / "t.swf").exists()
    rc, out, err = _simulate(tmp_path, f"platform: homogeneous-4\nworkload: {{path: {dump}}}\n")
    assert_user_error(rc, err, "d.txt:3", what)


def test_a_dump_as_workload_path_names_the_dumps_line(tmp_path):
    # two jobs too large for the platform: the error names the first one's line of d.txt, not a line of
    # the SWF conversion (header comments first: d.txt:8 of a 3-line file)
    dump = _write(tmp_path / "d.txt", f"{HEADER}\n1|{GOOD}|64|COMPLETED|10:00|1G\n2|{GOOD}|64|COMPLETED|10:00|1G\n")
    rc, out, err = _simulate(tmp_path, f"platform: homogeneous-4\nworkload: {{path: {dump}}}\n")
    assert_user_error(rc, err, "no job can run", "the first: " + str(dump) + ":2)")


def test_a_dump_with_a_byte_order_mark(tmp_path):
    dump = tmp_path / "d.txt"
    dump.write_bytes(b"\xef\xbb\xbf" + f"{HEADER}\n1|{GOOD}|2|COMPLETED|10:00|1G\n".encode())
    rc, out, err = run_cli(["trace", "import", str(dump), "-o", str(tmp_path / "t.swf")])
    assert rc == 0, err
    assert "1 records, 1 jobs" in out
    rc, out, err = _simulate(tmp_path, f"platform: homogeneous-4\nworkload: {{path: {dump}}}\n")
    assert rc == 0, err
    assert strict_json(out)["n_jobs"] == 1


# item 10: a job of run time 0 runs 1 s (SWF's resolution), never all-zero metrics

def _one_second_job(m: dict) -> None:
    assert_real_metrics(m)
    assert m["n_jobs"] == 1 and m["makespan_s"] == 1.0 and m["energy_j"] > 0
    assert m["mean_power_w"] > 0 and m["utilisation"] > 0
    assert m["mean_slowdown"] == 1.0 and m["mean_bsld"] == 1.0


def test_a_zero_length_swf_job(tmp_path):
    _write(tmp_path / "t.swf", "1 0 0 0 1 -1 -1 1 -1 -1 1 1 1 -1 1 1 -1 -1\n")
    rc, out, err = _simulate(tmp_path, "platform: homogeneous-2\nworkload: {path: t.swf}\n")
    assert rc == 0, err
    _one_second_job(strict_json(out))
    assert "1 job(s) with a run time below 1 s" in err


def test_a_zero_length_inline_job(tmp_path):
    rc, out, err = _simulate(tmp_path, "platform: homogeneous-2\nworkload: {jobs: [{run_s: 0}]}\n")
    assert rc == 0, err
    _one_second_job(strict_json(out))


def test_a_zero_length_sacct_job(tmp_path):
    same = "2024-01-01T00:00:00|2024-01-01T00:00:05|2024-01-01T00:00:05"
    dump = _write(tmp_path / "d.txt", f"{HEADER}\n1|{same}|1|COMPLETED|10:00|1G\n")
    rc, out, err = _simulate(tmp_path, f"platform: homogeneous-2\nworkload: {{path: {dump}}}\n")
    assert rc == 0, err
    _one_second_job(strict_json(out))


# item 11: platform import is bounded

def test_a_backtracking_cpu_map_pattern_is_refused(tmp_path):
    cmap = _write(tmp_path / "map.yaml", "patterns: {'(a+)+c': xeon_gold_6148}\n")
    conf = _write(tmp_path / "slurm.conf", f"NodeName={'a' * 35} Sockets=2\n")
    rc, out, err = run_cli(["platform", "import", str(conf), "--cpu-map", str(cmap), "-o", str(tmp_path / "p.yaml")])
    assert_user_error(rc, err, "map.yaml: patterns.(a+)+c", "a quantifier on a group")


def test_safe_patterns_still_map_nodes(tmp_path):
    cmap = _write(tmp_path / "map.yaml", "patterns: {'(old|new)\\d+-r\\d?': xeon_l5640}\n")
    conf = _write(tmp_path / "slurm.conf", "NodeName=old[1-2]-r1,new7-r Sockets=2\n")
    rc, out, err = run_cli(["platform", "import", str(conf), "--cpu-map", str(cmap), "-o", str(tmp_path / "p.yaml")])
    assert rc == 0, err
    assert "3 nodes" in out


def test_a_hostlist_is_counted_before_it_is_expanded(monkeypatch):
    from paretosched.sim.readers.slurm import hostlist

    def never(name):
        raise AssertionError("expanded before counting")

    monkeypatch.setattr(hostlist, "_expand_one", never)
    with pytest.raises(ValueError, match="names more than 100000 hosts"):
        hostlist.expand(",".join(f"n{k}" for k in range(100_001)))
    with pytest.raises(ValueError, match="names more than 100000 hosts"):
        hostlist.expand("a[1-1000],b[1-100]c[1-1000]")


def test_node_lines_together_are_bounded(tmp_path):
    conf = _write(tmp_path / "slurm.conf", "NodeName=a[1-60000] Sockets=2\nNodeName=b[1-60000] Sockets=2\n")
    rc, out, err = run_cli(["platform", "import", str(conf), "-o", str(tmp_path / "p.yaml")])
    assert_user_error(rc, err, "slurm.conf:2", "more than 100000 nodes")


# smaller: a frequency below the lowest P-state is clamped, and the user is told once

def test_freq_below_f_min_is_noted_once(tmp_path):
    rc, out, err = run_cli(["simulate", str(_write(tmp_path / "c.yaml", "platform: gaia-mini\nworkload: {jobs: "
                                                   "[{run_s: 10}]}\nscheduler: {freq: 0.1}\n")),
                            "--json", "--seeds", "1,2"])
    assert rc == 0, err
    notes = [ln for ln in err.splitlines() if "scheduler.freq" in ln]
    assert len(notes) == 1 and "clamped" in notes[0] and "at 0.55" in notes[0], err
    rc, out, err = run_cli(["simulate", str(_write(tmp_path / "d.yaml", "platform: gaia-mini\nworkload: {jobs: "
                                                   "[{run_s: 10}]}\nscheduler: {freq: 0.8}\n")), "--json"])
    assert rc == 0 and "scheduler.freq" not in err, err


def test_require_finite_names_the_metric():
    from paretosched.sim.readers.platform import load_platform
    from paretosched.sim.run import require_finite

    with pytest.raises(UserError, match="mean_power_w = nan"):
        require_finite({"energy_j": 1.0, "mean_power_w": math.nan}, load_platform("homogeneous-1"))


def test_a_node_line_of_many_comma_parts_is_refused_at_once(tmp_path):
    # 400,000 names on one line: shlex took minutes over the line and the names were expanded before
    # the 100,000-node check; now the line splits on blanks and the names are counted first
    names = ",".join(f"n{k}" for k in range(400_000))
    conf = _write(tmp_path / "slurm.conf", f"NodeName={names} Sockets=2 Feature=xeon_gold_6148\n")
    rc, out, err = run_cli(["platform", "import", str(conf), "-o", str(tmp_path / "p.yaml")])
    assert_user_error(rc, err, "slurm.conf:1: NodeName:", "names more than 100000 hosts")


def test_quoted_values_still_parse(tmp_path):
    conf = _write(tmp_path / "slurm.conf", 'NodeName=n[1-2] Sockets=2 Feature="xeon_gold_6148"\n')
    rc, out, err = run_cli(["platform", "import", str(conf), "-o", str(tmp_path / "p.yaml")])
    assert rc == 0 and "2 nodes" in out, err
