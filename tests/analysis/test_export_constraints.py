"""A front point that breaks the study's constraints on the re-check is never picked nor exported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paretosched.analysis.explorer import explorer_data
from paretosched.analysis.front import choose, front_of
from paretosched.analysis.rundata import load_run
from paretosched.cli import main
from paretosched.errors import UserError
from tests.analysis.synth import Point, recheck_block, write_run
from tests.analysis.test_export_minimal import BASE_VALUES, FRONT

LABELS = ["mean_bsld <= 1.05 x current"]


def _run(tmp_path: Path, unmet: set[int], name: str = "run") -> Path:
    """FRONT's five genomes (eval 0-4), the baseline `current` (eval 5) and a re-check row of each
    (eval 6-11); every row meets the constraint but the re-checks of `unmet`, which break it by 20%."""
    pts = [Point(vals, genome=g) for g, vals in FRONT.values()]
    pts.append(Point(BASE_VALUES, kind="baseline", name="current"))
    pts += [Point(vals, kind="recheck", recheck_of=i) for i, (_, vals) in FRONT.items()]
    pts.append(Point(BASE_VALUES, kind="recheck", recheck_of=5))
    block = recheck_block({i: v for i, (_, v) in FRONT.items()}, {"current": BASE_VALUES}, [])
    d = write_run(tmp_path / name, pts, summary_extra={"recheck": block, "constraints": LABELS})
    rows = [json.loads(line) for line in (d / "evaluations.jsonl").read_text().splitlines()]
    for r in rows:
        r["constraints"] = [0.2 if r["kind"] == "recheck" and r["recheck_of"] in unmet else -0.1]
    (d / "evaluations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


def test_no_pick_chooses_a_point_that_breaks_a_limit_on_the_recheck(tmp_path):
    run = load_run(_run(tmp_path, unmet={2}))
    assert front_of(run)["eval_id"].tolist() == [2, 0]  # eval 2, lowest energy, is still on the front
    for pick in ("balanced", "knee", "min:energy_kwh", "min:mean_bsld", "weights:1,0", "weights:0.9,0.1"):
        assert choose(run, pick).eval_id == 0
    for pick in ("index:0", "eval:2"):  # named explicitly: refused, not swapped for another point
        with pytest.raises(UserError, match=r"eval 2 exceeds mean_bsld <= 1.05 x current by 20.0% of the limit on its "
                                            r"fresh seeds; no export writes a point that breaks the study's limits"):
            choose(run, pick)
    assert choose(run, "index:1").eval_id == 0


def test_export_writes_the_feasible_point_and_refuses_the_other(tmp_path, capsys):
    d = _run(tmp_path, unmet={2})
    out = tmp_path / "x.yaml"
    assert main(["export", str(d), "--pick", "min:energy_kwh", "-o", str(out)]) == 0
    assert "eval_id: 0" in out.read_text()
    assert main(["export", str(d), "--pick", "eval:2", "-o", str(tmp_path / "y.yaml")]) == 2
    err = capsys.readouterr().err
    assert "eval 2 exceeds mean_bsld <= 1.05 x current" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "y.yaml").exists()


def test_a_front_with_no_feasible_point_exports_nothing(tmp_path, capsys):
    d = _run(tmp_path, unmet={0, 2})
    for pick in ("balanced", "knee", "min:energy_kwh"):
        assert main(["export", str(d), "--pick", pick, "-o", str(tmp_path / "x.yaml")]) == 2
        err = capsys.readouterr().err.strip()
        assert "no front point meets the study's constraints (mean_bsld <= 1.05 x current)" in err
        assert len(err.splitlines()) == 1
    assert not (tmp_path / "x.yaml").exists()


def test_minimal_ignores_a_point_that_breaks_a_limit(tmp_path):
    free = load_run(_run(tmp_path, unmet=set(), name="free"))
    assert choose(free, "minimal:100").eval_id == 0  # the best saving, 30%
    run = load_run(_run(tmp_path, unmet={0}))
    chosen = choose(run, "minimal:100")
    assert chosen.eval_id == 3 and "of the best 28.00% (eval 3)" in chosen.note
    assert choose(run, "minimal:90").eval_id == 4


def test_the_explorer_marks_it_and_picks_around_it(tmp_path):
    data = explorer_data(load_run(_run(tmp_path, unmet={2})))
    marked = {p["id"]: p["unmet"] for p in data["points"] if p["unmet"]}
    assert list(marked) == [2] and "exceeds mean_bsld" in marked[2]
    assert {p["id"] for p in data["picks"]} == {0}
    old = explorer_data(load_run(write_run(tmp_path / "old", [Point(v, genome=g) for g, v in FRONT.values()])))
    assert not any(p["unmet"] for p in old["points"])  # a run without constraints loads as before
