"""Opening a run directory: one session at a time, usable paths, clear refusals, inputs checked first."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml

import conftest
from conftest import run_quiet, stable_rows, summary, write_study
from paretosched.errors import UserError
from paretosched.search.optimise import optimise
from paretosched.search.rundir import LOCK, RunLock, first_difference
from paretosched.search.checkpoint import CHECKPOINT

SMALL = dict(budget={"generations": 3}, algorithm={"pop_size": 8})
QUICKSTART = Path(__file__).resolve().parents[2] / "studies" / "quickstart.yaml"


def test_a_live_run_directory_refuses_a_second_session(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **SMALL), tmp_path / "run")
    before = stable_rows(run)
    with RunLock(run):  # as if another process were writing it
        with pytest.raises(UserError, match=r"run: in use by another paretosched session \(pid \d+\)"):
            run_quiet(run, run, resume=True)
    assert stable_rows(run) == before
    assert run_quiet(run, run, resume=True) == run  # the lock went with its holder


def test_unusable_paths_and_resume_mixups_are_one_line_errors(tmp_path: Path) -> None:
    study = write_study(tmp_path, **SMALL)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UserError, match="afile: exists and is not a directory"):
        run_quiet(study, tmp_path / "afile")
    plain = tmp_path / "plain"
    plain.mkdir()
    for resume in (False, True):
        with pytest.raises(UserError, match="plain: is a directory, neither a study file nor a run directory"):
            run_quiet(plain, None, resume=resume)
    run = run_quiet(study, tmp_path / "run")
    with pytest.raises(UserError, match="a run directory resumes in place"):
        run_quiet(run, tmp_path / "elsewhere", resume=True)
    assert not (tmp_path / "elsewhere").exists()
    changed = write_study(tmp_path, name="changed.yaml", **dict(SMALL, budget={"generations": 4}))
    with pytest.raises(UserError, match=r"differs from the study of .*run at 'budget.generations'"):
        run_quiet(changed, run, resume=True)


def test_first_difference_names_the_dotted_key() -> None:
    assert first_difference({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 3}]}}) == "a.b.1.c"
    assert first_difference({"a": 1}, {"a": 1, "z": 0}) == "z"
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == "a"
    assert first_difference({"a": 1.0}, {"a": 1.0}) is None


def test_resume_with_nothing_to_resume_says_so_and_starts(tmp_path: Path) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = optimise(str(write_study(tmp_path, **SMALL)), out=str(tmp_path / "run"), resume=True, quiet=True)
    assert f"nothing to resume in {run}: starting a new run" in err.getvalue()
    assert summary(run)["status"] == "done"
    assert (run / LOCK).read_text().strip().isdigit()  # the last session's pid, for the refusal message


def test_an_unreadable_checkpoint_names_the_file_and_the_way_out(tmp_path: Path) -> None:
    study = write_study(tmp_path, **SMALL)
    run = run_quiet(study, tmp_path / "run")
    ref = stable_rows(run)
    data = (run / CHECKPOINT).read_bytes()
    (run / CHECKPOINT).write_bytes(data[: len(data) // 2])
    with pytest.raises(UserError, match=r"checkpoint.json: unreadable \(.*\); delete it and resume again"):
        run_quiet(run, run, resume=True)
    (run / CHECKPOINT).unlink()  # the advice works: the log alone rebuilds the same run
    run_quiet(run, run, resume=True)
    assert stable_rows(run) == ref


def test_a_run_where_every_evaluation_fails_is_an_error(tmp_path: Path) -> None:
    study = write_study(tmp_path, evaluator="conftest:evaluate_broken", **SMALL)
    with pytest.raises(UserError, match=r"every evaluation failed; the first \(eval 0\): ValueError: no such trace"):
        run_quiet(study, tmp_path / "run")
    assert summary(tmp_path / "run")["status"] == "done"  # the directory is still complete


def test_an_interrupted_session_marks_the_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = write_study(tmp_path, evaluator="conftest:evaluate_then_interrupt", **SMALL)
    monkeypatch.setitem(conftest.INTERRUPT_AFTER, "calls", 0)
    monkeypatch.setitem(conftest.INTERRUPT_AFTER, "limit", 12)  # generation 0 (8) and half of the next
    with pytest.raises(KeyboardInterrupt):
        run_quiet(study, tmp_path / "run")
    s = summary(tmp_path / "run")
    assert s["status"] == "interrupted" and len(s["generations"]) == 1
    monkeypatch.setitem(conftest.INTERRUPT_AFTER, "limit", 10**9)
    run_quiet(tmp_path / "run", tmp_path / "run", resume=True)
    assert summary(tmp_path / "run")["status"] == "done"


def _quickstart(tmp_path: Path, **workload: object) -> Path:
    data = yaml.safe_load(QUICKSTART.read_text())
    base = data["base"]
    if isinstance(base, str):
        base = yaml.safe_load((QUICKSTART.parent / base).read_text())
    base["workload"].update(workload)
    data["base"] = base
    data["budget"] = {"generations": 1}
    data["algorithm"] = {"pop_size": 4}
    data["baselines"] = {}
    data["recheck"] = 0
    p = tmp_path / "qs.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_twin_inputs_are_checked_before_any_evaluation(tmp_path: Path) -> None:
    study = _quickstart(tmp_path, path=str(tmp_path / "missing.swf.gz"))
    with pytest.raises(UserError, match=r"qs.yaml: base: .*missing.swf.gz: trace file not found"):
        run_quiet(study, tmp_path / "run")
    assert not (tmp_path / "run").exists()
    study = _quickstart(tmp_path, first_job=9_000_000)
    with pytest.raises(UserError, match=r"qs.yaml: base: .*skipping 9000000 job lines \(first_job\) leaves no job"):
        run_quiet(study, tmp_path / "run")


def test_a_short_trace_window_is_noted(tmp_path: Path) -> None:
    study = _quickstart(tmp_path, first_job=2990, n_jobs=100)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        optimise(str(study), out=str(tmp_path / "run"), quiet=True)
    assert "the window holds 10 jobs, fewer than n_jobs=100 (the trace ends after job line 3000)" in err.getvalue()
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "done"


def test_a_log_shorter_than_its_checkpoint_is_a_one_line_error(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **SMALL), tmp_path / "run")
    log = run / "evaluations.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:5]))  # as if an older copy of the log had been put back
    with pytest.raises(UserError, match=r"evaluations.jsonl: lacks evaluations \[5, 6, 7, 8, 9\] that checkpoint.json counts"):
        run_quiet(run, run, resume=True)


def test_the_directory_is_checked_again_once_locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from paretosched.search import optimise as opt
    from paretosched.search.study import load_study

    a = write_study(tmp_path, name="a.yaml", **SMALL)
    b = write_study(tmp_path, name="b.yaml", **dict(SMALL, seed=7))
    real = opt.make_run_dir

    def another_session_first(run_dir: Path) -> None:  # A finishes while B parses its inputs
        monkeypatch.setattr(opt, "make_run_dir", real)
        run_quiet(a, run_dir)
        real(run_dir)

    monkeypatch.setattr(opt, "make_run_dir", another_session_first)
    with pytest.raises(UserError, match="run directory exists and is not empty"):
        run_quiet(b, tmp_path / "run")
    assert load_study(tmp_path / "run").seed == load_study(a).seed != 7  # A's run, untouched


def test_the_twin_guard_holds_without_a_checkpoint(tmp_path: Path) -> None:
    run = run_quiet(write_study(tmp_path, **SMALL), tmp_path / "run")
    s = summary(run)
    s["versions"]["twin"] = "0.0.1+twin.0"
    (run / "summary.json").write_text(json.dumps(s))
    (run / CHECKPOINT).unlink()  # the recovery the checkpoint messages advise
    with pytest.raises(UserError, match=r"started with twin 0\.0\.1\+twin\.0"):
        run_quiet(run, run, resume=True)


def test_resuming_a_run_where_everything_failed_is_still_an_error(tmp_path: Path) -> None:
    study = write_study(tmp_path, evaluator="conftest:evaluate_broken", **SMALL)
    for resume in (False, True):
        with pytest.raises(UserError, match="every evaluation failed"):
            run_quiet(study, tmp_path / "run", resume=resume)


def test_a_malformed_dask_address_is_a_one_line_error() -> None:
    pytest.importorskip("distributed")
    from paretosched.search.evaluate import Engine

    for address in ("notanaddress", "http://localhost:8786"):
        with pytest.raises(UserError, match=f"Dask scheduler {address}: cannot connect"):
            with Engine(None, 1, "dask", address):
                pass
