"""Front extraction, picks and hypervolume on constructed fronts with known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paretosched.analysis.front import front_of, hypervolume_by_generation, resolve_pick, standard_picks
from paretosched.analysis.rundata import load_run
from paretosched.errors import UserError
from tests.analysis.synth import Point, write_run

# an L-shaped front with an obvious knee at (1, 1): ids 0..6 on the front, 7..9 dominated
KNEE_FRONT = [(0.0, 10.0), (0.2, 6.0), (0.5, 3.0), (1.0, 1.0), (3.0, 0.5), (6.0, 0.2), (10.0, 0.0)]
DOMINATED = [(2.0, 2.0), (11.0, 11.0), (5.0, 5.0)]


def _knee_run(tmp: Path, senses: tuple[str, str] = ("min", "min")):
    pts = [Point(p, generation=i % 3) for i, p in enumerate(KNEE_FRONT + DOMINATED)]
    if senses[1] == "max":  # store the natural sign of a maximised second objective
        pts = [Point((p.objectives[0], -p.objectives[1]), generation=p.generation) for p in pts]
    objs = [{"name": "energy_kwh", "sense": senses[0]}, {"name": "utilisation", "sense": senses[1]}]
    return load_run(write_run(tmp / "run", pts, objectives=objs))


def test_front_is_the_non_dominated_set_in_first_objective_order(tmp_path: Path) -> None:
    run = _knee_run(tmp_path)
    front = front_of(run)
    assert front["eval_id"].tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert front["energy_kwh"].is_monotonic_increasing


def test_picks_known_answers(tmp_path: Path) -> None:
    run = _knee_run(tmp_path)
    front = front_of(run)
    picks = {p.name: p for p in standard_picks(run, front)}
    assert picks["min:energy_kwh"].eval_id == 0
    assert picks["min:utilisation"].eval_id == 6
    assert picks["balanced"].eval_id == 3  # scaled sums: 0.1+0.1 is the smallest
    assert picks["knee"].eval_id == 3
    assert "fell back" not in picks["knee"].note
    # scaled (0.5, 3.0) = (0.05, 0.3) scores 0.9*0.05 + 0.1*0.3 = 0.075, below (0.2, 6.0)'s 0.078
    # and (1, 1)'s 0.1; the weights need not sum to 1
    assert resolve_pick(run, front, "weights:0.9,0.1").eval_id == 2
    assert resolve_pick(run, front, "weights:9,1").eval_id == 2
    assert resolve_pick(run, front, "weights:0,1").eval_id == 6
    assert resolve_pick(run, front, "index:2").eval_id == 2
    assert resolve_pick(run, front, "eval:8").eval_id == 8  # off the front, by eval id


def test_maximised_objective_keeps_natural_sign(tmp_path: Path) -> None:
    run = _knee_run(tmp_path, senses=("min", "max"))
    front = front_of(run)
    assert front["eval_id"].tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert front["utilisation"].iloc[0] == pytest.approx(-10.0)  # natural sign, not negated
    assert resolve_pick(run, front, "min:utilisation").eval_id == 6  # best = highest utilisation
    assert resolve_pick(run, front, "knee").eval_id == 3


def test_knee_falls_back_to_balanced_on_two_points(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "run", [Point((1.0, 2.0)), Point((2.0, 1.0)), Point((3.0, 3.0))]))
    front = front_of(run)
    knee = resolve_pick(run, front, "knee")
    assert knee.eval_id == resolve_pick(run, front, "balanced").eval_id == 0
    assert "fell back to balanced" in knee.note


@pytest.mark.parametrize("expr, message", [
    ("best", "unknown pick 'best'"),
    ("min:makespan_s", "unknown objective 'makespan_s'"),
    ("index:7", "the front has 7 points"),
    ("weights:1", "one weight per objective"),
    ("weights:a,b", "weights must be numbers"),
    ("eval:1000", "no successful search evaluation with eval id 1000"),
])
def test_pick_mistakes_are_user_errors(tmp_path: Path, expr: str, message: str) -> None:
    run = _knee_run(tmp_path)
    with pytest.raises(UserError, match=message.replace("(", r"\(")) as err:
        resolve_pick(run, front_of(run), expr)
    assert "\n" not in str(err.value)


def test_no_successful_evaluation_is_a_user_error(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "run", [Point((1.0, 1.0), status="failed")] * 3))
    with pytest.raises(UserError, match="no successful search evaluations"):
        front_of(run)


def test_hypervolume_recomputed_when_summary_has_none(tmp_path: Path) -> None:
    pts = [Point((2.0, 2.0), generation=0), Point((1.0, 3.0), generation=1), Point((3.0, 1.0), generation=1)]
    rp = {"energy_kwh": 4.0, "mean_bsld": 4.0}
    run = load_run(write_run(tmp_path / "run", pts, summary_extra={"reference_point": rp}))
    hv = hypervolume_by_generation(run)
    # gen 0: one box 2x2 = 4; gen 1: staircase (1,3),(2,2),(3,1) against (4,4): 3+2+1 = 6
    assert hv["hv"].tolist() == pytest.approx([4.0, 6.0], rel=0.05)  # per-seed noise moves points by ~1e-12
    assert set(hv["source"]) == {"recomputed"}


def test_hypervolume_from_summary_when_present(tmp_path: Path) -> None:
    gens = [{"generation": 0, "hv": 1.5, "front_size": 2}, {"generation": 1, "hv": 2.5, "front_size": 3}]
    run = load_run(write_run(tmp_path / "run", [Point((1.0, 1.0))], summary_extra={"generations": gens}))
    hv = hypervolume_by_generation(run)
    assert hv["hv"].tolist() == [1.5, 2.5] and set(hv["source"]) == {"summary.json"}
    assert np.array_equal(hv["generation"].to_numpy(), [0, 1])
