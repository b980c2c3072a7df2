"""scripts/paper/common.py on a small synthetic run directory (no optimiser, no simulation).

The paper scripts read runs through `load_run`, whose `summary` is a `Summary` record: the
helpers must read its attributes (a `.get` on it raised AttributeError and crashed the scripts)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from paretosched.analysis.rundata import load_run
from tests.analysis.synth import Point, write_run

PAPER = Path(__file__).resolve().parents[2] / "scripts" / "paper"


@pytest.fixture
def common() -> Iterator[Any]:
    sys.path.insert(0, str(PAPER))  # the scripts import it as `common`, run from their folder
    try:
        yield importlib.import_module("common")
    finally:
        sys.path.remove(str(PAPER))


def _run(tmp_path: Path) -> Path:
    points = [Point((10.0, 5.0)), Point((8.0, 7.0)), Point((12.0, 4.0)), Point((11.0, 9.0)),
              Point((20.0, 30.0), kind="baseline", name="fcfs_easy"),
              Point((8.5, 6.5), kind="recheck", recheck_of=1)]
    # the search admitted evals 0 and 1 only (eval 2 stands for a genome left on fewer seeds)
    return write_run(tmp_path / "run", points, summary_extra={
        "front": [1, 0], "baselines": {"fcfs_easy": {"eval_id": 4, "status": "ok",
                                                     "objectives": {"energy_kwh": 20.0, "mean_bsld": 30.0}}}})


def test_run_front_is_the_search_front_of_summary_json(tmp_path: Path, common: Any) -> None:
    front = common.run_front(load_run(_run(tmp_path)))
    assert front["eval_id"].tolist() == [1, 0]  # sorted by the first objective, eval 2 left out
    assert front["energy_kwh"].tolist() == pytest.approx([8.0, 10.0])


def test_run_front_falls_back_to_the_analysis_front(tmp_path: Path, common: Any) -> None:
    d = write_run(tmp_path / "run", [Point((10.0, 5.0)), Point((8.0, 7.0)), Point((11.0, 9.0))])
    assert sorted(common.run_front(load_run(d))["eval_id"].tolist()) == [0, 1]


def test_baselines_and_rechecks_as_plain_values(tmp_path: Path, common: Any) -> None:
    run = load_run(_run(tmp_path))
    b = common.baselines(run)
    assert list(b) == ["fcfs_easy"]
    assert b["fcfs_easy"]["eval_id"] == 4
    assert b["fcfs_easy"]["objectives"] == {"energy_kwh": 20.0, "mean_bsld": 30.0}
    assert common.recheck_objectives(run, 1) == pytest.approx({"energy_kwh": 8.5, "mean_bsld": 6.5})
    assert common.recheck_objectives(run, 0) is None


def test_equal_slowdown_prints_the_saving_against_each_baseline(tmp_path: Path, common: Any,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["equal_slowdown.py", str(_run(tmp_path))])
    importlib.import_module("equal_slowdown").main()
    out = capsys.readouterr().out
    # at the baseline's slowdown (30) the cheapest front point is eval 1: 8.0 kWh, 12.0 saved
    assert "| fcfs_easy | 20.0 | 30.00 | 8.0 (+12.0 kWh, +60.0%) |" in out
