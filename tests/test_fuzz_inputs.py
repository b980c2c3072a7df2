"""Fuzzing scheduler configs, platform files, studies and command-line arguments through the
real commands (in-process). A valid file has one value replaced by junk (wrong type, NaN, inf,
huge, markup, a path); every outcome is a sound result or exit 2 with one line naming the file
and the line or key, nothing written outside the named output. `-m slow`: many more examples."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from paretosched.search.analytic import study_dict
from tests.fuzz import FAST, JUNK, SLOW, check_outcome, fresh

CONFIG: dict[str, Any] = {
    "platform": "two-socket",
    "workload": {"jobs": [{"run_s": 30.0, "cores": 2, "mem_mb": 100.0}, {"run_s": 10.0, "submit_s": 5.0, "req_s": 20.0}],
                 "mode": "trace", "seed": 3},
    "model": {"interference": "thesis", "p1_speed": 0.75, "p2_power": 0.25, "p3_power": 0.05, "static_power": 0.3},
    "scheduler": {"kind": "classic", "job_policy": "shortest", "resource_policy": "high_gflops", "backfilling": "easy",
                  "bw_cap": 1.0, "power_off_idle_s": 60.0, "min_nodes_on": 0, "freq": 0.9,
                  "freq_by_type": {}},
    "seed": 1,
}

PLATFORM: dict[str, Any] = {
    "name": "p",
    "processor_types": {"a": {"cores": 2, "clock_ghz": 2.0, "flops_per_cycle": 4, "mem_bw_gbs": 20, "power_w": 60,
                              "f_min": 0.5, "dvfs_table": [[0.5, 0.4], [1.0, 1.0]]}},
    "node_types": {"n": {"processors": {"a": 2}, "memory_gb": 16, "boot_s": 10, "boot_j": 100, "off_w": 2}},
    "clusters": [{"name": "c", "nodes": {"n": 2}}],
    "power": {"boot_s": 100, "off_w": 1},
}


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path (and list index) of a document, leaves and sections alike."""
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw, doc: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 2))):
        paths = _paths(data)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        node = data
        for part in path[:-1]:
            node = node[part]
        if isinstance(node, dict) and draw(st.integers(0, 9)) == 0:
            node.pop(path[-1])  # a missing key
        else:
            node[path[-1]] = draw(JUNK)
    return data


def _write(tmp: Path, doc: Any, suffix: str = ".yaml") -> Path:
    p = fresh(tmp, suffix)
    # JSON is YAML too; json.dumps writes NaN and Infinity, which YAML reads as strings: use YAML's own
    p.write_text(yaml.safe_dump(doc, allow_unicode=True) if suffix == ".yaml" else json.dumps(doc))
    return p


def _cleanup(tmp: Path, before: set[Path]) -> None:
    import shutil

    for p in set(tmp.iterdir()) - before:
        shutil.rmtree(p) if p.is_dir() else p.unlink()


def _config_case(tmp_path: Path, doc: dict[str, Any]) -> None:
    before = set(tmp_path.iterdir())
    cfg = _write(tmp_path, doc)
    out = fresh(tmp_path, "-out")
    check_outcome(["simulate", str(cfg), "--json", "--out", str(out)], tmp_path, cfg.name, out_dir=out)
    _cleanup(tmp_path, before)


def _platform_case(tmp_path: Path, doc: dict[str, Any]) -> None:
    before = set(tmp_path.iterdir())
    plat = _write(tmp_path, doc)
    rc, _ = check_outcome(["platform", "show", str(plat), "--json"], tmp_path, plat.name)
    if rc == 0:  # a platform that shows must also simulate: sound metrics or a one-line error
        cfg = _write(tmp_path, {"platform": str(plat), "workload": {"jobs": [{"run_s": 10.0}]}})
        check_outcome(["simulate", str(cfg), "--json"], tmp_path, "")
    _cleanup(tmp_path, before)


def _study_case(tmp_path: Path, monkeypatch: Any, doc: dict[str, Any]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PARETOSCHED_EVALUATORS", raising=False)  # only the study decides its evaluator
    before = set(tmp_path.iterdir())
    study = _write(tmp_path, doc)
    out = fresh(tmp_path, "-run")
    rc, _ = check_outcome(["optimise", str(study), "--out", str(out), "--quiet"], tmp_path, study.name, out_dir=out,
                          also=[tmp_path / ".cache"])
    _cleanup(tmp_path, before)


SMALL_STUDY = study_dict(budget={"generations": 1}, algorithm={"pop_size": 4}, seeds=1,
                         baselines={"fcfs": {"scheduler": {"job_policy": "first"}}})


@FAST
@given(doc=mutated(CONFIG))
def test_fuzzed_configs(tmp_path, doc):
    _config_case(tmp_path, doc)


@FAST
@given(doc=mutated(PLATFORM))
def test_fuzzed_platforms(tmp_path, doc):
    _platform_case(tmp_path, doc)


@FAST
@given(doc=mutated(SMALL_STUDY))
def test_fuzzed_studies(tmp_path, monkeypatch, doc):
    _study_case(tmp_path, monkeypatch, doc)


ARGS = st.lists(st.one_of(
    st.sampled_from(["--seed", "--seeds", "--first-job", "--n-jobs", "--platform", "--workload", "--json", "--out",
                     "--timeline", "--pick", "-o", "--eps", "--min-samples", "--on", "--workers", "--resume"]),
    st.sampled_from(["-1", "0", "1", "1e9", "nan", "inf", "", "x", "1,2", "1,-2", "homogeneous-0", "gaia",
                     "homogeneous-50000000", "builtin:../x", "index:99", "min:nope", "weights:1,x", "front"]),
), max_size=5)


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    """A finished run (analytic study), so analyse/explore/export reach their own options."""
    from tests.adv import run_cli

    tmp = tmp_path_factory.mktemp("fuzz-run")
    study = _write(tmp, SMALL_STUDY)
    rc, out, err = run_cli(["optimise", str(study), "--out", str(tmp / "run"), "--quiet"])
    assert rc == 0, err
    return tmp / "run"


COMMANDS = st.sampled_from(["simulate CFG", "platform show", "export RUN", "analyse RUN", "explore RUN", "train CFG",
                            "export NORUN", "simulate PROV", "runs table RUN -o OUT.csv", "platform import TEXT -o OUT",
                            "trace import TEXT -o OUT.swf"])
# slurm.conf and sacct lines, and junk, for the import commands
TEXTS = st.one_of(
    st.sampled_from(["NodeName=n[1-4] CPUs=8 RealMemory=1000\n", "NodeName=a[1-99999999999] CPUs=nan\n",
                     "NodeName=x CPUs=-1\nPartitionName=p Nodes=x\n", "JobIDRaw|Submit|Start|End|NCPUS|State\n1|x|y|z|2|OK\n",
                     "JobIDRaw|Submit|Start|End|NCPUS|State\n1|2024-01-01T00:00:00|2024-01-01T00:00:05|"
                     "2024-01-01T00:01:00|nan|COMPLETED\n", ""]),
    st.text(max_size=60))


def _command_line_case(tmp_path: Path, run: Path, cmd: str, args: list[str], seeds: list[Any], text: str) -> None:
    before = set(tmp_path.iterdir())
    junk = fresh(tmp_path, ".txt")
    junk.write_text(text, encoding="utf-8", errors="surrogatepass")
    cfg = _write(tmp_path, {"platform": "homogeneous-2", "workload": {"jobs": [{"run_s": 5.0}]}})
    prov = _write(tmp_path, {"platform": "homogeneous-2", "workload": {"jobs": [{"run_s": 5.0}]},
                             "provenance": {"seeds": seeds}})  # export's free-form record, edited
    subst = {"CFG": str(cfg), "PROV": str(prov), "NORUN": str(tmp_path / "no-run"), "RUN": str(run),
             "TEXT": str(junk)}
    argv = [subst.get(w, w).replace("OUT", str(tmp_path / "out")) for w in cmd.split()] + args
    if "--out" in args or "-o" in args or "-o" in cmd:
        _with_out(argv, tmp_path)
    else:  # export writes best.yaml here by default: a named output
        check_outcome(argv, tmp_path, "", also=[tmp_path / "best.yaml"])
    _cleanup(tmp_path, before)


@FAST
@given(cmd=COMMANDS, args=ARGS, seeds=st.lists(JUNK, min_size=1, max_size=2), text=TEXTS)
def test_fuzzed_command_lines(tmp_path, monkeypatch, real_run, cmd, args, seeds, text):
    monkeypatch.chdir(tmp_path)
    _command_line_case(tmp_path, real_run, cmd, args, seeds, text)


@pytest.mark.slow
@SLOW
@given(cmd=COMMANDS, args=ARGS, seeds=st.lists(JUNK, min_size=1, max_size=2), text=TEXTS)
def test_fuzzed_command_lines_slow(tmp_path, monkeypatch, real_run, cmd, args, seeds, text):
    monkeypatch.chdir(tmp_path)
    _command_line_case(tmp_path, real_run, cmd, args, seeds, text)


def _with_out(argv: list[str], tmp: Path) -> tuple[int, Any]:
    # an output named on the command line may be created (relative to tmp); nothing else
    from tests.adv import run_cli

    rc, out, err = run_cli(argv)
    assert rc in (0, 2) and "Traceback" not in err, err
    if rc == 2:
        assert len(err.strip().splitlines()) == 1, err
    return rc, None


@pytest.mark.slow
@SLOW
@given(doc=mutated(CONFIG))
def test_fuzzed_configs_slow(tmp_path, doc):
    _config_case(tmp_path, doc)


@pytest.mark.slow
@SLOW
@given(doc=mutated(PLATFORM))
def test_fuzzed_platforms_slow(tmp_path, doc):
    _platform_case(tmp_path, doc)


@pytest.mark.slow
@SLOW
@given(doc=mutated(SMALL_STUDY))
def test_fuzzed_studies_slow(tmp_path, monkeypatch, doc):
    _study_case(tmp_path, monkeypatch, doc)
