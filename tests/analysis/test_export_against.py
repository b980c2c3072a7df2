"""`export --format slurm --against slurm.conf`: the smallest edit, as a diff that deploys the pick."""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.analysis.slurm_diff import against_diff, canonical, import_conf, kept_weights
from paretosched.analysis.slurm_params import PARAMS, RECONFIGURE, RESTART_ALL, RESTART_CTLD, UNMAPPED, takes_effect
from paretosched.config import SlurmScheduler, config_from_dict
from paretosched.sim.readers.inputs import bundled
from paretosched.sim.readers.platform import PlatformSpec, build_platform
from paretosched.yamlio import dump_yaml

SAMPLE, CPU_MAP = bundled("slurm", "slurm.conf"), str(bundled("slurm", "cpu-map.yaml"))

# the real-Slurm cluster: 16 nodes of 8 CPUs, backfill tuned, job size weighted; a comment
# after SchedulerParameters, an option without a value, a file without a final newline
REAL16 = """# slurm.conf of the issue 32 check (one host, 16 slurmd)
ClusterName=real16
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=5,bf_window=60,bf_max_job_test=100,bf_continue   # tuned 2026-11
PriorityType=priority/multifactor
PriorityWeightJobSize=1000
PriorityFavorSmall=NO
SuspendTime=INFINITE
NodeName=n[01-16] CPUs=8 Features=xeon_e5_4640 RealMemory=16000
PartitionName=all Nodes=n[01-16] Default=YES MaxTime=INFINITE State=UP"""

# two node types with their Weights in DEFAULT lines and a Weight-only update line, power saving on
MIXED = """ClusterName=mixed
NodeName=DEFAULT Weight=7
NodeName=g[1-4] CPUs=40 Features=xeon_gold_6148
NodeName=e[1-2] CPUs=128 Features=epyc_7742
NodeName=e[1-2] Weight=3
SuspendTime=300 SuspendRate=10
SuspendExcNodes=e[1-2]
ResumeTimeout=120
"""

FULL = {"priority_weight_age": 1000, "priority_weight_job_size": 500, "priority_favor_small": True,
        "priority_weight_fairshare": 2000, "priority_decay_half_life_s": 3600 * 36, "priority_max_age_s": 86400 * 2,
        "scheduler_type": "builtin", "bf_max_job_test": 50, "bf_interval_s": 120, "bf_window_min": 240,
        "node_order": "efficiency_first", "suspend_time_s": 600, "suspend_timeout_s": 45, "resume_timeout_s": 300,
        "suspend_rate": 5, "resume_rate": 20, "suspend_exc_nodes": 3, "cpu_freq_def": "PowerSave"}


def _conf(tmp_path: Path, which: str) -> tuple[Path, str | None]:
    if which == "sample":
        return Path(SAMPLE), CPU_MAP
    p = tmp_path / f"{which}.conf"
    p.write_text({"real16": REAL16, "mixed": MIXED}[which], encoding="utf-8")
    return p, None


def _doc(tmp_path: Path, conf: Path, cpu_map: str | None, changes: dict[str, Any]) -> dict[str, Any]:
    """An exported document: the file's own scheduler section with `changes` (a pick of a run on it)."""
    imp = import_conf(conf, cpu_map)
    plat = tmp_path / "platform.yaml"
    plat.write_text(dump_yaml(imp.platform, sort_keys=False))
    sched = {**imp.scheduler, **changes}
    doc = config_from_dict({"platform": str(plat), "workload": {"path": "builtin:sacct-sample.txt"},
                            "scheduler": sched}).model_dump(mode="json")
    doc["provenance"] = {"study": "t", "pick": "knee", "eval_id": 4}
    return doc


def apply_unified(text: str, diff: str) -> str:
    """Apply a unified diff with difflib's hunk format (what `patch` does, for machines without it)."""
    old = text.splitlines(keepends=True)
    out, pos = [], 0
    lines = diff.splitlines(keepends=True)
    i = next((k + 2 for k, line in enumerate(lines) if line.startswith("--- ")), len(lines))
    while i < len(lines):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[i])
        assert m, lines[i]
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out += old[pos:start]
        pos = start
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, body = lines[i][0], lines[i][1:]
            if tag == "\\":  # "\ No newline at end of file": the line before it has none
                if lines[i - 1][0] in " +":
                    out[-1] = out[-1].rstrip("\n")
                i += 1
                continue
            if tag in " -":
                assert old[pos].rstrip("\n") == body.rstrip("\n"), (old[pos], body)
                pos += 1
            if tag in " +":
                out.append(body)
            i += 1
    return "".join(out + old[pos:])


def _deploy(tmp_path: Path, conf: Path, diff: str) -> Path:
    target = tmp_path / "deployed" / conf.name
    target.parent.mkdir(exist_ok=True)
    shutil.copy(conf, target)
    patch = tmp_path / "change.diff"
    patch.write_text(diff, encoding="utf-8")
    if shutil.which("patch") and "@@" in diff:  # patch refuses a diff without a hunk ("only garbage")
        subprocess.run(["patch", "--quiet", str(target), str(patch)], check=True, capture_output=True)
        assert target.read_text() == apply_unified(conf.read_text(), diff)
    else:
        target.write_text(apply_unified(conf.read_text(), diff))
    return target


def _round_trip(tmp_path: Path, which: str, changes: dict[str, Any]) -> tuple[str, list[Any], Path, Path]:
    conf, cmap = _conf(tmp_path, which)
    doc = _doc(tmp_path, conf, cmap, changes)
    diff, made = against_diff(doc, conf, cmap)
    deployed = _deploy(tmp_path, conf, diff)
    again = import_conf(deployed, cmap)
    plat = build_platform(PlatformSpec.model_validate(again.platform))
    assert again.platform == import_conf(conf, cmap).platform  # the hardware is untouched
    assert canonical(again.scheduler, plat) == canonical(doc["scheduler"], plat)
    return diff, made, conf, deployed


@pytest.mark.parametrize("which", ["sample", "real16", "mixed"])
@pytest.mark.parametrize("changes", [
    {},
    {"priority_weight_job_size": 0, "bf_window_min": 240},
    {"priority_favor_small": True, "bf_interval_s": 30, "bf_max_job_test": 10},
    {"node_order": "fastest_first", "suspend_time_s": 600, "suspend_exc_nodes": 2},
    {"suspend_time_s": None, "suspend_exc_nodes": 0, "cpu_freq_def": "PowerSave"},
    FULL,
])
def test_applying_the_diff_and_importing_again_gives_the_pick(tmp_path, which, changes):
    diff, made, conf, deployed = _round_trip(tmp_path, which, changes)
    old, new = conf.read_text().splitlines(), deployed.read_text().splitlines()
    # unchanged lines untouched: the edits replace lines in place and append at the end, nothing else
    assert len(new) >= len(old)
    keys = {c.param.split()[-1].split("=")[0].lower() for c in made}  # "SchedulerParameters bf_window" -> bf_window
    for a, b in zip(old, new):
        if a != b:
            assert any(k in a.lower() for k in keys) or "weight" in b.lower() or b == "#" + a, (a, b)
    assert len(new) - len(old) == sum(c.where == "appended" for c in made)
    if not changes:
        assert made == [] and "@@" not in diff


def test_the_diff_holds_exactly_the_changed_keys_in_place(tmp_path):
    diff, made, _, deployed = _round_trip(tmp_path, "real16", {"bf_window_min": 240, "priority_weight_job_size": 0,
                                                                "suspend_time_s": 900, "resume_rate": 50})
    assert [c.param for c in made] == ["PriorityWeightJobSize", "SchedulerParameters bf_window", "SuspendTime",
                                       "ResumeRate"]
    minus = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    plus = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert minus == ["SchedulerParameters=bf_interval=5,bf_window=60,bf_max_job_test=100,bf_continue   # tuned 2026-11",
                     "PriorityWeightJobSize=1000", "SuspendTime=INFINITE",
                     "PartitionName=all Nodes=n[01-16] Default=YES MaxTime=INFINITE State=UP"]
    # the option edited in place, the others and the comment kept; ResumeRate appended after the
    # last line, which gains its missing newline ("\ No newline at end of file" in the diff)
    assert plus == ["SchedulerParameters=bf_interval=5,bf_window=240,bf_max_job_test=100,bf_continue   # tuned 2026-11",
                    "PriorityWeightJobSize=0", "SuspendTime=900",
                    "PartitionName=all Nodes=n[01-16] Default=YES MaxTime=INFINITE State=UP", "ResumeRate=50"]
    assert "\\ No newline at end of file" in diff
    assert deployed.read_text().endswith("State=UP\nResumeRate=50\n")


def test_each_change_is_tagged_with_how_it_takes_effect(tmp_path):
    # lowest power per core first: EPYC (Weight 50 kept), then the Gold 6148 (10 -> 51), then the L5640 (1 -> 52)
    diff, made, _, _ = _round_trip(tmp_path, "sample", {"scheduler_type": "builtin", "node_order": "lowest_power_first",
                                                        "priority_favor_small": True, "bf_window_min": 60})
    tags = {c.param: (c.new, c.takes_effect) for c in made}
    assert tags == {"SchedulerType": ("sched/builtin", RESTART_CTLD), "PriorityFavorSmall": ("YES", RECONFIGURE),
                    "SchedulerParameters bf_window": ("60", RECONFIGURE),
                    "NodeName=cpu[01-06] Weight": ("51", RESTART_ALL), "NodeName=cpu[07-08] Weight": ("51", RESTART_ALL),
                    "NodeName=old[001-004,010] Weight": ("52", RESTART_ALL)}
    head = [line for line in diff.splitlines() if line.startswith("#   ")]
    assert len(head) == len(made) and all(line.endswith(f"takes effect: {c.takes_effect}") for line, c in zip(head, made))
    # the continuation line's Weight is edited where it is, the line's other keys kept
    assert "+    Weight=51 NodeAddr=10.0.1.[7-8]" in diff.splitlines()


def test_new_weights_keep_the_current_ones_where_the_order_allows():
    assert kept_weights([(1, 7), (2, 3)]) == [7, 8]  # MIXED, fastest first: the Gold nodes keep 7
    assert kept_weights([(1, 10), (1, 10), (2, 1), (1, 50)]) == [10, 10, 11, 10]
    assert kept_weights([(2, 4), (1, 9), (3, 9)]) == [10, 9, 11]
    assert kept_weights([(1, 5), (2, 2), (3, 3)]) == [1, 2, 3]  # the ranks change fewer lines here
    assert kept_weights([(1, 1), (2, 2), (2, 2)]) == [1, 2, 2]


def test_takes_effect_follows_slurm_conf_5():
    for key in ("SchedulerParameters", "PriorityWeightAge", "PriorityWeightJobSize", "PriorityWeightFairshare",
                "PriorityFavorSmall", "PriorityDecayHalfLife", "PriorityMaxAge", "SuspendTime", "SuspendTimeout",
                "SuspendRate", "SuspendExcNodes", "ResumeTimeout", "ResumeRate", "CpuFreqDef"):
        assert takes_effect(key) == RECONFIGURE, key
    assert takes_effect("SchedulerType") == RESTART_CTLD and takes_effect("SelectTypeParameters") == RESTART_CTLD
    assert takes_effect("NodeName") == RESTART_ALL and takes_effect("SelectType") == RESTART_ALL


def test_every_scheduler_field_maps_through_the_one_table():
    # a field the importer reads from a new table entry maps with no edit; one nothing maps fails here
    # twin-only timing fields (not Slurm parameters) and two the diff does not edit yet (SelectType
    # needs every daemon restarted; AccountingStorageType is infrastructure), and the partitions (node
    # lines the operator keeps; no study varies them): --against refuses them
    assert set(UNMAPPED) <= {"sched_tick_s", "bf_last_cycle_s", "clock_origin_s", "slurmdbd", "select_type",
                             "partitions"}
    assert set(PARAMS) == set(SlurmScheduler.model_fields) - {"kind"} - set(UNMAPPED)
    assert {p.key for p in PARAMS.values() if p.option} >= {"bf_window", "bf_interval", "bf_max_job_test"}
    for p in PARAMS.values():
        if p.kind == "plain":
            assert takes_effect(p.conf_key) in (RECONFIGURE, RESTART_CTLD), p.key


def test_a_classic_pick_or_other_nodes_are_one_line_errors(tmp_path):
    from paretosched.errors import UserError

    conf, cmap = _conf(tmp_path, "real16")
    doc = _doc(tmp_path, conf, cmap, {})
    doc["scheduler"] = {"kind": "classic"}
    with pytest.raises(UserError, match=r"^--against: pick knee \(eval 4\) has scheduler kind classic"):
        against_diff(doc, conf, cmap)
    latin = tmp_path / "latin1.conf"
    latin.write_bytes(REAL16.replace("# slurm.conf", "# slurm.conf \xe9t\xe9").encode("latin-1"))
    with pytest.raises(UserError, match=r"latin1.conf: not UTF-8 text \(byte 13\); convert it before diffing$"):
        against_diff(_doc(tmp_path, conf, cmap, {}), latin, None)
    other, _ = _conf(tmp_path, "mixed")
    with pytest.raises(UserError, match=r"mixed.conf: its nodes \(6, g1\.\.\) are not the run's platform's \(16, n01\.\.\)"):
        against_diff(_doc(tmp_path, conf, cmap, {}), other, None)


def _slurm_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A synthetic run of the slurm kind on REAL16's nodes: baseline `current` is the file's section."""
    import json

    from tests.analysis import synth

    conf, cmap = _conf(tmp_path, "real16")
    imp = import_conf(conf, cmap)
    plat = tmp_path / "platform.yaml"
    plat.write_text(dump_yaml(imp.platform, sort_keys=False))
    base = json.loads(json.dumps(synth.BASE))
    base.update(platform=str(plat), scheduler=imp.scheduler)
    monkeypatch.setattr(synth, "BASE", base)
    genes = {"scheduler.priority_favor_small": {"type": "bool", "values": [False, True]},
             "scheduler.bf_window_min": {"type": "int", "low": 10, "high": 1440, "log": False}}
    front = {0: ({"scheduler.priority_favor_small": True, "scheduler.bf_window_min": 60}, (80.0, 9.0)),
             1: ({"scheduler.priority_favor_small": True, "scheduler.bf_window_min": 240}, (70.0, 9.5))}
    pts = [synth.Point(v, genome=g) for g, v in front.values()]
    pts.append(synth.Point((100.0, 10.0), kind="baseline", name="current"))
    block = synth.recheck_block({i: v for i, (_, v) in front.items()}, {"current": (100.0, 10.0)}, [])
    return synth.write_run(tmp_path / "run", pts, genes=genes, summary_extra={"recheck": block}), conf


def test_export_against_on_the_command_line(tmp_path, monkeypatch, capsys):
    from paretosched.cli import main

    run, conf = _slurm_run(tmp_path, monkeypatch)
    out = tmp_path / "slurm.conf.diff"
    # minimal:50 keeps 15% of the best 30%: eval 0, one parameter changed (bf_window is the file's 60)
    assert main(["export", str(run), "--pick", "minimal:50", "--format", "slurm", "--against", str(conf),
                 "-o", str(out)]) == 0
    std = capsys.readouterr()
    assert f"diff: {out} (pick minimal:50: eval 0; 1 change(s) to {conf}; apply with: patch {conf} < {out})" in std.out
    assert std.err.strip() == "PriorityFavorSmall: NO -> YES (line 7); takes effect: scontrol reconfigure"
    assert [line for line in out.read_text().splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == \
        ["-PriorityFavorSmall=NO", "+PriorityFavorSmall=YES"]
    assert main(["export", str(run), "--pick", "eval:1", "--format", "slurm", "--against", str(conf),
                 "-o", str(out), "--force"]) == 0
    assert "SchedulerParameters bf_window: 60 -> 240 (line 4)" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--against", "X"], "error: --against and --cpu-map need --format slurm"),
    (["--format", "slurm", "--against", "/nonexistent/slurm.conf"], "/nonexistent/slurm.conf: cannot read"),
    (["--format", "slurm", "--cpu-map", "m.yaml"], "error: --cpu-map is for --against"),
])
def test_export_against_mistakes_exit_2_with_one_line(tmp_path, monkeypatch, capsys, argv, message):
    from paretosched.cli import main

    run, _ = _slurm_run(tmp_path, monkeypatch)
    assert main(["export", str(run), "--pick", "eval:0", "-o", str(tmp_path / "d.diff"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and message in err
    assert not (tmp_path / "d.diff").exists()


_SECTIONS = st.fixed_dictionaries({
    "priority_weight_age": st.integers(0, 100000), "priority_weight_job_size": st.integers(0, 100000),
    "priority_favor_small": st.booleans(), "priority_weight_fairshare": st.integers(0, 100000),
    "priority_decay_half_life_s": st.integers(0, 10**7).map(float), "priority_max_age_s": st.integers(1, 10**7).map(float),
    "scheduler_type": st.sampled_from(["backfill", "builtin"]), "bf_max_job_test": st.integers(1, 1000),
    "bf_window_min": st.integers(1, 10000), "bf_interval_s": st.integers(1, 10800),
    "node_order": st.sampled_from(["platform", "fastest_first", "lowest_power_first", "efficiency_first"]),
    "suspend_time_s": st.none() | st.integers(0, 10**5).map(float), "suspend_timeout_s": st.integers(0, 600).map(float),
    "resume_timeout_s": st.integers(1, 3600).map(float), "suspend_rate": st.integers(0, 500),
    "resume_rate": st.integers(0, 500), "suspend_exc_nodes": st.integers(0, 6),
    "cpu_freq_def": st.sampled_from(["Performance", "PowerSave"])})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["real16", "mixed", "sample"]), section=_SECTIONS)
def test_any_section_round_trips_through_the_diff(tmp_path_factory, which, section):
    tmp = tmp_path_factory.mktemp("any")
    _round_trip(tmp, which, section)
