"""A run directory is data people copy and share (issue 29): loading it never runs anything, no
command writes through a link planted in it, a resume refuses inputs that changed since the run
began, and a damaged or NaN-holding file is a one-line error, never a traceback or a wrong result."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

import paretosched as ps
from paretosched import cli
from paretosched.errors import UserError
from paretosched.search import optimise as optimise_module
from paretosched.search.checkpoint import CHECKPOINT, LEGACY
from paretosched.search.rundir import FINGERPRINT, LOCK

from conftest import INTERRUPT_AFTER, run_quiet, stable_rows, write_study

SMALL = dict(budget={"generations": 3}, algorithm={"pop_size": 8}, seeds=2, recheck=2)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    """Exit code and stderr lines of one command, run in-process (a traceback would raise here)."""
    capsys.readouterr()
    code = cli.main(list(argv))
    return code, capsys.readouterr().err.strip().splitlines()


def _one_line_error(code: int, err: list[str], *words: str) -> None:
    """Exit 2 and one error line, the last (a command's progress lines may come before it)."""
    assert code == 2 and err and err[-1].startswith("paretosched: error: "), err
    assert not any(line.startswith(("paretosched: error", "Traceback")) for line in err[:-1]), err
    for w in words:
        assert w in err[-1], err[-1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run stopped by Ctrl-C in generation 1 (`interrupted`) and the same run finished (`finished`)."""
    base = tmp_path_factory.mktemp("runs")
    study = write_study(base, evaluator="conftest:evaluate_then_interrupt", **SMALL)
    with pytest.MonkeyPatch.context() as mp:  # as conftest's autouse fixture, for this module's runs
        mp.setenv("PARETOSCHED_EVALUATORS", "conftest:*")
        mp.setitem(INTERRUPT_AFTER, "calls", 0)
        mp.setitem(INTERRUPT_AFTER, "limit", 24)
        with pytest.raises(KeyboardInterrupt):
            run_quiet(study, base / "interrupted", workers=1)
        mp.setitem(INTERRUPT_AFTER, "limit", 10**9)
        shutil.copytree(base / "interrupted", base / "finished")
        run_quiet(base / "finished", base / "finished", resume=True)
    (base / "finished" / LOCK).unlink()
    return {"interrupted": base / "interrupted", "finished": base / "finished"}


def _copy(runs: dict[str, Path], which: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(runs[which], tmp_path / which, symlinks=True))


# ---------------------------------------------------------------------------------------------
# nothing is unpickled

class _Planted:
    """A pickle that creates a file when loaded: what a hostile checkpoint or cache entry would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def test_a_planted_pickle_checkpoint_is_never_opened(runs: dict[str, Path], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    run, marker = _copy(runs, "interrupted", tmp_path), tmp_path / "pwned"
    (run / CHECKPOINT).unlink()  # a run of an older paretosched: its checkpoint is a pickle
    (run / LEGACY).write_bytes(pickle.dumps(_Planted(marker)))
    code, err = _cli(capsys, "optimise", str(run), "--resume", "--quiet")
    assert code == 0 and not marker.exists()
    said = [line for line in err if LEGACY in line]
    assert said == [f"analytic: {run / LEGACY}: ignored (a pickle from an older paretosched; loading a pickle can "
                    "run code, so it is never opened): the run restarts from its evaluation log, simulating "
                    "nothing it logged"]
    assert stable_rows(run) == stable_rows(runs["finished"])  # rebuilt exactly from the log


def test_a_pickle_where_json_is_expected_is_a_one_line_error(runs: dict[str, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    run, marker = _copy(runs, "interrupted", tmp_path), tmp_path / "pwned"
    (run / CHECKPOINT).write_bytes(pickle.dumps(_Planted(marker)))
    code, err = _cli(capsys, "optimise", str(run), "--resume", "--quiet")
    _one_line_error(code, err, f"{run / CHECKPOINT}: unreadable", "delete it and resume again")
    assert not marker.exists()


@pytest.fixture
def no_unpickling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way the package could unpickle a file fails the test."""
    import joblib
    import numpy as np

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("something was unpickled")

    real_np_load = np.load
    for mod, name in ((pickle, "load"), (pickle, "loads"), (pickle, "Unpickler"), (joblib, "load")):
        monkeypatch.setattr(mod, name, refuse)
    monkeypatch.setattr(np, "load", lambda *a, allow_pickle=False, **k: refuse() if allow_pickle else
                        real_np_load(*a, allow_pickle=False, **k))


def test_no_command_unpickles_anything_of_a_run_directory(runs: dict[str, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          no_unpickling: None) -> None:
    run = _copy(runs, "interrupted", tmp_path)
    cache = tmp_path / ".cache" / "analytic" / "00"  # a planted cache entry: a miss, never loaded
    cache.mkdir(parents=True)
    (cache / ("00" * 32 + ".json")).write_bytes(pickle.dumps(_Planted(tmp_path / "pwned")))
    for argv in (["optimise", str(run), "--resume", "--quiet", "--workers", "1"], ["analyse", str(run)],
                 ["explore", str(run)], ["export", str(run), "-o", str(tmp_path / "best.yaml")],
                 ["runs", "table", str(run), "-o", str(tmp_path / "t.csv")]):
        code, err = _cli(capsys, *argv)
        assert code == 0, (argv, err)
    assert stable_rows(run) == stable_rows(runs["finished"]) and not (tmp_path / "pwned").exists()


# ---------------------------------------------------------------------------------------------
# no write through a link

def _plant(run: Path, name: str, outside: Path) -> Path:
    """Move `run/name` (a copy when missing: an empty file) outside, and leave a link to it."""
    target, path = outside / name.replace("/", "_"), run / name
    outside.mkdir(exist_ok=True)
    if path.exists():
        shutil.move(path, target)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("mine\n")
    path.symlink_to(target, target_is_directory=target.is_dir())
    return target


def _snapshot(p: Path) -> dict[str, bytes]:
    if p.is_dir():
        return {str(f.relative_to(p)): f.read_bytes() for f in sorted(p.rglob("*")) if f.is_file()}
    return {"": p.read_bytes()}


RESUME = ["optimise", "{run}", "--resume", "--quiet"]
CASES = [
    *[("interrupted", RESUME, name) for name in (LOCK, "evaluations.jsonl", "summary.json", CHECKPOINT, "front.csv",
                                                 "population.json", "study.yaml")],
    ("finished", ["analyse", "{run}"], "analysis"),
    ("finished", ["analyse", "{run}"], "analysis/report.html"),
    ("finished", ["analyse", "{run}"], "analysis/front.csv"),
    ("finished", ["analyse", "{run}"], "plotly.min.js"),
    ("finished", ["explore", "{run}"], "explorer.html"),
    ("finished", ["explore", "{run}"], "plotly.min.js"),
    ("finished", ["export", "{run}", "-o", "{run}/best.yaml", "--force"], "best.yaml"),
    ("finished", ["runs", "table", "{run}", "-o", "{run}/evals.csv", "--force"], "evals.csv"),
]


@pytest.mark.parametrize("which, argv, name", CASES, ids=[f"{a[0]}-{n}" for _, a, n in CASES])
def test_no_command_writes_through_a_link_in_the_run_directory(runs: dict[str, Path], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str], which: str,
                                                               argv: list[str], name: str) -> None:
    run = _copy(runs, which, tmp_path)
    target = _plant(run, name, tmp_path / "outside")
    before = _snapshot(target)
    code, err = _cli(capsys, *[a.format(run=run) for a in argv])
    _one_line_error(code, err, f"{run / name.split('/')[0] if name == 'analysis' else run / name}:",
                    "is a symbolic link")
    assert _snapshot(target) == before  # nothing written outside the run directory


# ---------------------------------------------------------------------------------------------
# resume refuses changed inputs

def test_resume_refuses_a_trace_changed_since_the_run_began(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text("".join(f"{i} {10 * i} 0 100 1 -1 -1 1 200 -1 1 1 1 1 1 -1 -1 -1\n" for i in range(1, 5)))
    base = {"platform": "homogeneous-4", "workload": {"path": str(trace)}}
    study = write_study(tmp_path, base=base, evaluator="conftest:evaluate_then_interrupt", **SMALL)
    monkeypatch.setitem(INTERRUPT_AFTER, "calls", 0)
    monkeypatch.setitem(INTERRUPT_AFTER, "limit", 20)
    with pytest.raises(KeyboardInterrupt):
        run_quiet(study, tmp_path / "run", workers=1)
    monkeypatch.setitem(INTERRUPT_AFTER, "limit", 10**9)
    recorded = json.loads((tmp_path / "run" / FINGERPRINT).read_text())["files"]["trace"]
    trace.write_text(trace.read_text().replace(" 100 ", " 1000 "))  # every run time x10
    for resume_from in (tmp_path / "run", study):
        with pytest.raises(UserError) as err:
            run_quiet(resume_from, tmp_path / "run", resume=True)
        assert str(err.value) == (f"{tmp_path / 'run'}: the trace changed since the run began (workload.path "
                                  f"{trace}: sha256 {recorded['sha256'][:12]} then, "
                                  f"{ps_sha(trace)[:12]} now); start a new run (another --out)")


def ps_sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("edit, where", [(lambda s: s.update(seeds=[s["seeds"][0] + 1000, *s["seeds"][1:]]), "seeds.0"),
                                         (lambda s: s.update(objectives=s["objectives"][::-1]), "objectives.0.name"),
                                         (lambda s: s["parallel"].update(speculate=False), None)])
def test_resume_refuses_an_edited_run_study_but_its_parallel_section(runs: dict[str, Path], tmp_path: Path,
                                                                     edit: Any, where: str | None) -> None:
    run = _copy(runs, "interrupted", tmp_path)
    study = yaml.safe_load((run / "study.yaml").read_text())
    edit(study)
    (run / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    if where is None:
        run_quiet(run, run, resume=True)
        assert stable_rows(run) == stable_rows(runs["finished"])
        return
    with pytest.raises(UserError, match=rf"the study changed since the run began \(at '{where}'; only parallel, "
                                        r"cache, cache_dir may change on resume\); restore it, or start a new run"):
        run_quiet(run, run, resume=True)


# ---------------------------------------------------------------------------------------------
# non-finite numbers, crashes, names, quiet, Ctrl-C

@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999", '"0.5"', "null"])
@pytest.mark.parametrize("command", ["analyse", "explore", "export"])
def test_a_log_row_without_a_finite_objective_is_a_one_line_error(runs: dict[str, Path], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  value: str, command: str) -> None:
    run = _copy(runs, "finished", tmp_path)
    log = run / "evaluations.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    row, at = json.loads(lines[3]), lines[3].index('"objectives":')
    assert row["status"] == "ok"
    was = f'"energy_kwh":{json.dumps(row["objectives"]["energy_kwh"])}'
    assert was in lines[3][at:]
    lines[3] = lines[3][:at] + lines[3][at:].replace(was, f'"energy_kwh":{value}', 1)
    log.write_text("".join(lines))
    code, err = _cli(capsys, command, str(run), *(["-o", str(tmp_path / "b.yaml")] if command == "export" else []))
    _one_line_error(code, err, f"{log}:4:")


def test_a_crash_before_the_first_summary_leaves_one_saying_interrupted(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(self: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(optimise_module.SearchRun, "_baselines", crash)
    with pytest.raises(RuntimeError, match="a bug"):
        run_quiet(write_study(tmp_path, **SMALL), tmp_path / "run")
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert s["status"] == "interrupted" and s["study"] == "analytic" and s["versions"]["twin"]


def test_a_study_named_like_the_cache_folder_is_refused_and_leaves_nothing(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    study = write_study(tmp_path, **SMALL)
    study.write_text(yaml.safe_dump(yaml.safe_load(study.read_text()) | {"name": ".cache"}))
    with pytest.raises(UserError, match=r"\.cache"):
        optimise_module.optimise(str(study), quiet=True)
    assert not (tmp_path / "runs").exists()


def test_the_api_quiet_writes_nothing_on_stderr(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from paretosched.search.analytic import study_dict

    study = study_dict(budget={"generations": 2}, algorithm={"pop_size": 4}, seeds=2, recheck=2)
    for out in ("a", "b"):  # b: every seed result from the cache, which the API would otherwise say
        run = ps.optimise(study, out=tmp_path / out, quiet=True)
        err = [ln for ln in capfd.readouterr().err.splitlines() if "came from the evaluation cache" not in ln]
        assert err == [] and run.summary.status == "done"  # only the cache note, which says what ran
    assert run.summary.n_cache_hits > 0


def test_ctrl_c_says_the_command_that_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    study = write_study(tmp_path, evaluator="conftest:evaluate_then_interrupt", **SMALL)
    monkeypatch.setitem(INTERRUPT_AFTER, "calls", 0)
    monkeypatch.setitem(INTERRUPT_AFTER, "limit", 20)
    code, err = _cli(capsys, "optimise", str(study), "--out", str(tmp_path / "my run"), "--quiet", "--workers", "1")
    assert code == 130
    assert err[-1] == f"paretosched: interrupted; resume with: paretosched optimise '{tmp_path / 'my run'}' --resume"
    monkeypatch.setitem(INTERRUPT_AFTER, "limit", 10**9)
    assert _cli(capsys, "optimise", str(tmp_path / "my run"), "--resume", "--quiet")[0] == 0


def test_a_hypervolume_beyond_a_float_is_recorded_as_null_and_said_once(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(optimise_module.pareto, "hypervolume", lambda F, ref: float("inf"))  # a reference of 1e308
    study = write_study(tmp_path, **SMALL)
    code, err = _cli(capsys, "optimise", str(study), "--out", str(tmp_path / "run"), "--quiet")
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert code == 0 and s["hv"] is None and [g["hv"] for g in s["generations"]] == [None] * 3
    assert sum("beyond a float, recorded as null" in line for line in err) == 1
