"""The default search (no `algorithm` or `resampling` key in the study; docs/search.md, "The
default search"): its settings, and that it stays reproducible per worker count and on resume."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from paretosched.search.analytic import study_dict
from paretosched.search.study import load_study

from conftest import log_json, run_quiet, summary
from test_search_repro import _kill_when, _same_run, _start


def _default_study(directory: Path, name: str = "default.yaml", **overrides: object) -> Path:
    data = study_dict(**overrides)  # type: ignore[arg-type]
    for key in ("algorithm", "resampling"):
        data.pop(key)
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_the_defaults(tmp_path: Path) -> None:
    study = load_study(_default_study(tmp_path))
    assert study.resampling is None
    a = study.algorithm
    assert (a.pop_size, a.crossover.prob, a.mutation.prob_var, a.schedule) == (20, 0.5, 0.1, "generational")


def test_workers_1_and_2_give_identical_logs(tmp_path: Path) -> None:
    study = _default_study(tmp_path, budget={"generations": 3}, seeds=2, recheck=2, cache=False,
                           evaluator="paretosched.search.analytic:evaluate_noisy")
    one = run_quiet(study, tmp_path / "w1", workers=1)
    two = run_quiet(study, tmp_path / "w2", workers=2)
    _same_run(one, two)
    s = summary(one)
    assert s["n_resampled"] == 0 and s["n_told"] == 60
    assert all(len(r["seeds"]) == 2 for r in log_json(one) if r["kind"] == "search")


@pytest.mark.slow
def test_sigkill_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    kw = dict(evaluator="tests.doubles:evaluate_slow", budget={"generations": 4}, seeds=2, recheck=2)
    ref = run_quiet(_default_study(tmp_path, cache=False, **kw), tmp_path / "ref")
    study = _default_study(tmp_path, name="cached.yaml", **kw)
    out = tmp_path / "killed"
    # in generation 0 (its rows appended, no checkpoint yet), then inside generation 2
    for k, (rows, delay) in enumerate([(20, 0.0), (50, 0.1)]):
        _kill_when(_start(study, out, resume=k > 0, workers=2), out / "evaluations.jsonl", rows, delay)
    proc = _start(out, out, resume=True)
    assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()
    _same_run(ref, out)
    assert summary(out)["status"] == "done"
