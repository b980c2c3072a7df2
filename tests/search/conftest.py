"""Helpers for search-layer tests: studies on the analytic problem, quiet runs, log comparison."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from paretosched.search.analytic import study_dict
from paretosched.search.optimise import optimise
from paretosched.search.runlog import read_evaluations

VOLATILE = ("wall_s", "cached")  # the only fields allowed to differ between identical runs


def write_study(directory: Path, name: str = "study.yaml", **overrides: Any) -> Path:
    """An analytic study file (overrides replace top-level keys)."""
    budget = overrides.pop("budget", None)
    data = study_dict(budget=budget, **overrides)
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run_quiet(study: Path, out: Path, **kwargs: Any) -> Path:
    with contextlib.redirect_stderr(io.StringIO()):
        return optimise(str(study), out=str(out), quiet=True, **kwargs)


def log_json(run_dir: Path) -> list[dict[str, Any]]:
    """The log's rows as the JSON objects on disk (through the typed reader): tests of the format."""
    return [r.to_json() for r in read_evaluations(run_dir)]


def stable_rows(run_dir: Path) -> list[dict[str, Any]]:
    """Log rows without the fields that legitimately vary (timings, cache hits)."""
    rows = log_json(run_dir)
    out = []
    for r in rows:
        r = {k: v for k, v in r.items() if k not in VOLATILE}
        r["per_seed"] = [{k: v for k, v in s.items() if k not in VOLATILE} for s in r["per_seed"]]
        out.append(r)
    return out


def summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def genome_seed_pairs(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(genome, seed) of every simulation the log records (baselines by their config)."""
    return [(json.dumps(r["genome"] or r["config"], sort_keys=True), s) for r in rows for s in r["seeds"]]


@pytest.fixture(autouse=True)
def _allow_test_evaluators(monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluators below and tests/doubles.py's are not known to paretosched: allowed as a user
    would (guards.py); child processes (kill/resume tests) import tests.doubles from the repository."""
    monkeypatch.setenv("PARETOSCHED_EVALUATORS", "conftest:*,tests.doubles:*")
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    return tmp_path


def evaluate_broken(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """An evaluator for which every genome fails (a study whose inputs are all wrong)."""
    raise ValueError("no such trace")


INTERRUPT_AFTER = {"calls": 0, "limit": 10**9}


def evaluate_then_interrupt(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """The analytic evaluator until `INTERRUPT_AFTER['limit']` calls, then a Ctrl-C (serial runs only)."""
    from paretosched.search.analytic import evaluate

    INTERRUPT_AFTER["calls"] += 1
    if INTERRUPT_AFTER["calls"] > INTERRUPT_AFTER["limit"]:
        raise KeyboardInterrupt
    return evaluate(cfg, seed)


def evaluate_lucky_then_interrupt(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """`analytic.evaluate_lucky` until `INTERRUPT_AFTER['limit']` calls, then a Ctrl-C (serial runs only)."""
    from paretosched.search.analytic import evaluate_lucky

    INTERRUPT_AFTER["calls"] += 1
    if INTERRUPT_AFTER["calls"] > INTERRUPT_AFTER["limit"]:
        raise KeyboardInterrupt
    return evaluate_lucky(cfg, seed)


def kill_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: int, **study: Any) -> tuple[Path, Path]:
    """(the resumed run, the whole run): one run interrupted after `cut` evaluator calls and
    resumed, next to the same study run whole; callers compare their logs."""
    whole = run_quiet(write_study(tmp_path, **study), tmp_path / "whole")
    monkeypatch.setitem(INTERRUPT_AFTER, "calls", 0)
    monkeypatch.setitem(INTERRUPT_AFTER, "limit", cut)
    with pytest.raises(KeyboardInterrupt):
        run_quiet(write_study(tmp_path, **study), tmp_path / "cut")
    monkeypatch.setitem(INTERRUPT_AFTER, "limit", 10**9)
    run_quiet(tmp_path / "cut", tmp_path / "cut", resume=True)
    assert stable_rows(tmp_path / "cut") == stable_rows(whole)
    assert (tmp_path / "cut" / "front.csv").read_text() == (whole / "front.csv").read_text()
    return tmp_path / "cut", whole


def evaluate_prefix_fails(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """The analytic evaluator, except that a cut window (fewer than 8 inline jobs) fails for
    genomes with job policy `random`, and for every genome when the workload has one job only."""
    from paretosched.search.analytic import evaluate

    jobs = cfg["workload"].get("jobs") or []
    if len(jobs) < 8 and (len(jobs) == 1 or cfg["scheduler"].get("job_policy") == "random"):
        raise ValueError("prefix too short")
    return evaluate(cfg, seed)
