"""Run-directory primitives: torn log lines, repair, atomic writes; progress output; wall-time budget."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from paretosched.search.optimise import optimise
from paretosched.search.files import atomic_write_text
from paretosched.search.runlog import Evaluation, append_rows, read_evaluations, repair_log

from conftest import run_quiet, summary, write_study


def _row(eid: int) -> Evaluation:
    return Evaluation(eval_id=eid, kind="search", generation=0, seeds=[1], per_seed=[], status="ok")


def test_torn_last_line_is_dropped_and_repaired(tmp_path: Path) -> None:
    append_rows(tmp_path, [_row(0), _row(1)])
    log = tmp_path / "evaluations.jsonl"
    with open(log, "ab") as f:
        f.write(b'{"eval_id": 2, "ki')
    assert [r.eval_id for r in read_evaluations(tmp_path)] == [0, 1]
    assert repair_log(tmp_path) == len(b'{"eval_id": 2, "ki')
    assert log.read_bytes().endswith(b"}\n")
    append_rows(tmp_path, [_row(2)])
    assert read_evaluations(log) == [_row(0), _row(1), _row(2)]
    assert repair_log(tmp_path) == 0


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "evaluations.jsonl").write_text('{"eval_id": 0}\n{oops\n{"eval_id": 2}\n')
    with pytest.raises(ValueError, match=":2: corrupt log line"):
        read_evaluations(tmp_path)


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    p = tmp_path / "summary.json"
    atomic_write_text(p, "old")
    atomic_write_text(p, "new")
    assert p.read_text() == "new" and [x.name for x in tmp_path.iterdir()] == ["summary.json"]


def test_atomic_files_get_the_umask_permissions_of_a_plain_file(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    if plain.stat().st_mode & 0o777 == 0o600:
        pytest.skip("umask 077: a plain file is 0600 too, the same as mkstemp's")
    atomic_write_text(tmp_path / "summary.json", "x")
    assert (tmp_path / "summary.json").stat().st_mode & 0o777 == plain.stat().st_mode & 0o777


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_and_quiet_lines(tmp_path: Path) -> None:
    study = write_study(tmp_path, budget={"generations": 2}, algorithm={"pop_size": 8})
    err = _Terminal()
    with contextlib.redirect_stderr(err):
        optimise(str(study), out=str(tmp_path / "bar"), quiet=False)
    text = err.getvalue()
    assert "analytic" in text and "HV" in text and "eval" in text and "\r" in text  # a tqdm bar
    assert text.rstrip().splitlines()[-1].startswith("analytic: done (generations)")  # bar not redrawn after
    for out, quiet, stream in (("quiet", True, _Terminal()), ("piped", False, io.StringIO())):
        with contextlib.redirect_stderr(stream):
            optimise(str(study), out=str(tmp_path / out), quiet=quiet)
        lines = [ln for ln in stream.getvalue().splitlines() if ": cost: " not in ln]  # said before inputs are read
        assert "\r" not in stream.getvalue()  # log lines, also when stderr is a file or pipe
        assert lines[0] == f"analytic: run directory: {tmp_path / out}"
        assert lines[1].startswith("analytic: gen 0 evals 8 failed 0") and "HV" in lines[1]
        assert lines[-1].startswith("analytic: done (generations)")


def test_the_bar_moves_within_a_generation_as_simulations_finish(tmp_path: Path, monkeypatch) -> None:
    import re

    monkeypatch.setenv("PARETOSCHED_SLOW_S", "0.12")  # above tqdm's 0.1 s redraw interval
    study = write_study(tmp_path, budget={"generations": 1}, algorithm={"pop_size": 4}, seeds=2,
                        evaluator="tests.doubles:evaluate_slow")
    err = _Terminal()
    with contextlib.redirect_stderr(err):
        optimise(str(study), out=str(tmp_path / "run"), quiet=False)
    shown = [int(n) for n in re.findall(r"\| *(\d+)/4 ", err.getvalue())]
    assert {1, 2, 3} <= set(shown) and shown == sorted(shown)  # whole evaluations, one per 2 seeds


def test_wall_time_budget_stops_between_generations(tmp_path: Path) -> None:
    study = write_study(tmp_path, budget={"wall_time_s": 0.001, "generations": 50}, algorithm={"pop_size": 8})
    run = run_quiet(study, tmp_path / "run")
    s = summary(run)
    assert s["stop_reason"] == "wall_time_s" and len(s["generations"]) == 1  # generation 0 always runs
