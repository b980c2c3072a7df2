"""Fuzzing with numeric extremes on every float of every schema (generated from the pydantic models, so
a new field is covered without a change here), and importer round trips: sacct -> `trace import` ->
the SWF reader, slurm.conf -> `platform import` -> the platform loader. Every outcome is a result with
finite metrics or exit 2 with one line; never a traceback (issue 29)."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from paretosched.config import ClassicScheduler, RLScheduler, SimConfig, SlurmScheduler
from paretosched.sim.readers.platform import PlatformSpec
from tests.adv import run_cli
from tests.fuzz import FAST, check_outcome, float_fields, fresh, paths_in, set_at
from tests.test_fuzz_inputs import CONFIG, PLATFORM

RL_CONFIG = {**CONFIG, "scheduler": {"kind": "rl", "episodes": 0, "queue_sensitivity": 0.05, "learning_rate": 0.005,
                                     "gamma": 0.99, "entropy_bonus": 0.01, "reward_weight": 0.5, "epsilon_start": 1.0,
                                     "epsilon_end": 0.05, "epsilon_decay": 0.9, "freq": 0.9, "bw_cap": 1.0}}
SLURM_CONFIG = {**CONFIG, "platform": "gaia-mini",
                "scheduler": {"kind": "slurm", "priority_decay_half_life_s": 600.0, "priority_max_age_s": 3600.0,
                              "suspend_time_s": 60.0, "suspend_timeout_s": 30.0, "resume_timeout_s": 600.0}}


def _cases() -> list[tuple[str, dict[str, Any], tuple, tuple, tuple[float, ...]]]:
    """(kind, base document, field pattern, concrete path, values) for every float field of every schema."""
    out = []
    for kind, doc, model in (("config", CONFIG, ClassicScheduler), ("config", RL_CONFIG, RLScheduler),
                             ("config", SLURM_CONFIG, SlurmScheduler)):
        for pattern, values in float_fields(model, ("scheduler",)):
            out += [(kind, doc, pattern, p, values) for p in paths_in(doc, pattern)]
    for pattern, values in float_fields(SimConfig):
        if pattern[0] != "scheduler":
            out += [("config", CONFIG, pattern, p, values) for p in paths_in(CONFIG, pattern)]
    for pattern, values in float_fields(PlatformSpec):
        out += [("platform", PLATFORM, pattern, p, values) for p in paths_in(PLATFORM, pattern)]
    return out


CASES = _cases()


def test_every_float_field_of_every_schema_is_fuzzed():
    covered = {pattern for _, _, pattern, _, _ in CASES}
    for model in (SimConfig, PlatformSpec):
        for pattern, _ in float_fields(model):
            if pattern[:2] == ("scheduler", "freq_by_type"):
                continue  # the base config names no processor type (a key of the platform)
            assert pattern in covered, pattern
    assert len(covered) >= 42  # the walk reaches every section (42 float fields at issue 29)


def _write(tmp: Path, doc: Any) -> Path:
    p = fresh(tmp, ".yaml")
    p.write_text(yaml.safe_dump(doc))
    return p


def _extreme_case(tmp_path: Path, data: st.DataObject) -> None:
    kind, base, _, path, values = data.draw(st.sampled_from(CASES))
    doc = copy.deepcopy(base)
    set_at(doc, path, data.draw(st.sampled_from(values)))
    f = _write(tmp_path, doc)
    if kind == "config":
        check_outcome(["simulate", str(f), "--json"], tmp_path, f.name)
    else:
        rc, _ = check_outcome(["platform", "show", str(f), "--json"], tmp_path, f.name)
        if rc == 0:  # a platform that loads must simulate to sound metrics, or refuse in one line
            check_outcome(["simulate", str(_write(tmp_path, {**CONFIG, "platform": str(f)})), "--json"], tmp_path, "")


@FAST
@given(data=st.data())
def test_numeric_extremes_on_every_float(tmp_path, data):
    _extreme_case(tmp_path, data)



# sacct -> trace import -> SWF reader

HEADER = "JobIDRaw|Submit|Start|End|NCPUS|State|Timelimit|ReqMem|NNodes"
TIMES = st.sampled_from(["2024-01-01T00:00:00", "2024-01-01T00:00:05", "2024-01-01T10:00:00", "0001-01-01T00:00:00",
                         "9999-12-31T23:59:59", "Unknown", "2024-13-01T00:00:00"])
NUMBERS = st.one_of(st.sampled_from(["0", "1", "2", "64", "-1", "1e3", "nan", "", "9" * 30, "9" * 400]),
                    st.integers(0, 10 ** 14).map(str))
LIMITS = st.sampled_from(["10:00", "1-00:00:00", "UNLIMITED", "99999999999", "5999999999", "59:61", "x", ""])
MEMORY = st.one_of(st.sampled_from(["1G", "4000Mc", "16000Mn", "0", "", "99999999999T", "9" * 400 + "M", "1.5K",
                                    "1e3M", "-5G"]),
                   st.integers(0, 10 ** 15).map(lambda n: f"{n}K"))


@st.composite
def sacct_dumps(draw) -> bytes:
    lines = [HEADER]
    for k in range(1, draw(st.integers(1, 5)) + 1):
        submit, start, end = sorted(draw(st.lists(TIMES, min_size=3, max_size=3)))
        lines.append("|".join([str(k), submit, start, end, draw(NUMBERS), draw(st.sampled_from(["COMPLETED", "FAILED",
                               "CANCELLED by 0", "RUNNING"])), draw(LIMITS), draw(MEMORY), draw(NUMBERS)]))
    data = ("\r\n" if draw(st.booleans()) else "\n").join(lines).encode() + b"\n"
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


def _sacct_case(tmp_path: Path, dump_bytes: bytes) -> None:
    from paretosched.sim.readers.workload import read_swf

    dump = fresh(tmp_path, ".txt")
    dump.write_bytes(dump_bytes)
    out = fresh(tmp_path, ".swf")
    rc, _ = check_outcome(["trace", "import", str(dump), "-o", str(out)], tmp_path, dump.name, out_dir=out)
    if rc == 0:  # what trace import writes, its own SWF reader reads
        raw = read_swf(out)
        assert len(raw) >= 1 and all(math.isfinite(v) for v in raw.run + raw.req_time + raw.req_mem_kb)
    cfg = _write(tmp_path, {"platform": "homogeneous-64", "workload": {"path": str(dump)}})
    rc2, _ = check_outcome(["simulate", str(cfg), "--json"], tmp_path, "")
    assert rc == 0 or rc2 == 2  # the dump as workload.path refuses what trace import refused


@FAST
@given(dump=sacct_dumps())
def test_sacct_round_trip(tmp_path, dump):
    _sacct_case(tmp_path, dump)



# slurm.conf -> platform import -> platform loader

FLOATS = st.sampled_from([5e-324, 1e-200, 1e-3, 0.0, -1.0, 2.4, 16.0, 1e4, 1e300, "nan", ".inf", "x"])


@st.composite
def slurm_inputs(draw) -> tuple[str, dict[str, Any]]:
    lines = ["ClusterName=f"]
    for i in range(draw(st.integers(1, 3))):
        hosts = draw(st.sampled_from([f"n{i}[1-3]", f"m{i}", f"x{i}[01-02,7]", f"n{i}[1-99999999999]",
                                      ",".join(f"c{i}-{k}" for k in range(4))]))
        attrs = [f"NodeName={hosts}", f"Feature={draw(st.sampled_from(['fuzzcpu', 'xeon_gold_6148', 'none']))}"]
        for key, values in (("Sockets", ["1", "2", "0", "-1", "9" * 30]), ("RealMemory", ["1000", "0", "9" * 30]),
                            ("CPUs", ["4", "40", "3", "x"]), ("Weight", ["1", "10", "-3"])):
            if draw(st.booleans()):
                attrs.append(f"{key}={draw(st.sampled_from(values))}")
        lines.append(" ".join(attrs))
    lines += draw(st.lists(st.sampled_from(["SuspendTime=60", "SuspendTimeout=99999999999999", "SuspendExcNodes=n0[1-3]:x",
                                            "ResumeTimeout=0", "PriorityMaxAge=1-00:00:00", "CpuFreqDef=PowerSave"]),
                           max_size=3))
    cpu = {key: draw(FLOATS) for key in ("clock_ghz", "flops_per_cycle", "tdp_w", "mem_bw_gbs", "min_ghz")}
    cmap = {"features": {"fuzzcpu": "fuzzcpu"}, "processors": {"fuzzcpu": {"cores": draw(st.sampled_from([2, 0])),
                                                                          **cpu}}}
    if draw(st.booleans()):
        cmap["patterns"] = {draw(st.sampled_from(["m\\d+", "(m+)+x", "c\\d-\\d", "[", "\\w*\\w*\\w*"])): "fuzzcpu"}
    return "\n".join(lines) + "\n", cmap


def _slurm_case(tmp_path: Path, inputs: tuple[str, dict[str, Any]]) -> None:
    text, cmap = inputs
    conf = fresh(tmp_path, ".conf")
    conf.write_text(text)
    cmap_file = fresh(tmp_path, ".yaml")
    cmap_file.write_text(yaml.safe_dump(cmap).replace("'nan'", ".nan").replace("'.inf'", ".inf"))
    out, sched = fresh(tmp_path, "-p.yaml"), fresh(tmp_path, "-s.yaml")
    rc, out_text, err = run_cli(["platform", "import", str(conf), "--cpu-map", str(cmap_file), "-o", str(out),
                                 "--scheduler", str(sched)])
    assert "Traceback" not in err
    if rc != 0:
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert not sched.exists()
        return
    # what platform import writes, the platform loader loads, and the twin runs
    check_outcome(["platform", "show", str(out), "--json"], tmp_path, "", also=[out, sched])
    cfg = _write(tmp_path, {"platform": str(out), "workload": {"jobs": [{"run_s": 10.0}]},
                            **yaml.safe_load(sched.read_text())})
    check_outcome(["simulate", str(cfg), "--json"], tmp_path, "")


@FAST
@given(inputs=slurm_inputs())
def test_slurm_conf_round_trip(tmp_path, inputs):
    _slurm_case(tmp_path, inputs)

