"""benchmarks/search_quality.py on a tiny window: the JSON it writes and the scoring it rests on."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def sq():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    import search_quality

    yield search_quality
    sys.path.remove(str(BENCH))


def test_json_shape_and_finite_hv(sq, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("PARETOSCHED_EVALUATORS", raising=False)
    out = tmp_path / "q.json"
    methods = ["paretosched", "random", "pymoo-ga"]
    assert sq.main(["--problem", "classic", "--trace", "builtin:hpc2n-3k.swf.gz", "--first-job", "0",
                    "--n-jobs", "40", "--budget", "4", "--reps", "2", "--first-rep", "3", "--recheck", "1",
                    "--methods", ",".join(methods), "--out", str(tmp_path / "work"), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data) == {"problem", "budget", "reps", "ours", "methods", "paired"}
    assert data["problem"] == "classic" and data["budget"] == 4 and data["reps"] == [3, 4]
    assert list(data["methods"]) == methods
    for m in methods:
        assert set(data["methods"][m]) == {"hv", "cpu_s"}
        assert len(data["methods"][m]["hv"]) == 2 and len(data["methods"][m]["cpu_s"]) == 2
        assert all(math.isfinite(v) and v >= 0 for v in data["methods"][m]["hv"])
        assert all(c > 0 for c in data["methods"][m]["cpu_s"])  # what the kept history cost, reported
    assert set(data["paired"]) == {"random", "pymoo-ga"}
    for m, s in data["paired"].items():
        hv_o, hv_m = data["methods"]["paretosched"]["hv"], data["methods"][m]["hv"]
        assert s["of"] == 2 and s["wins"] == sum(a >= b for a, b in zip(hv_o, hv_m))
        assert 0 <= s["p"] <= 1 and 0 <= s["wilcoxon_p"] <= 1


def test_budget_in_evaluations_counts_new_simulations(sq) -> None:  # type: ignore[no-untyped-def]
    from paretosched.search.analytic import study_dict
    from paretosched.search.study import Study

    study = Study.model_validate(study_dict(seeds=[1, 2]))
    led = sq.Ledger(study)
    ok = {o: 1.0 for o in study.objective_names} | {"cpu_s": 7.0}
    led.add({"a": 1}, [(1, ok, 0.1), (2, ok, 0.1)])
    led.add({"a": 1}, [(1, ok, 0.1), (2, ok, 0.1)])  # a repeat costs nothing again
    led.add({"a": 2}, [(1, None, 0.5), (2, ok, 0.1)])  # a failure costs its simulation too
    assert [e.cost for e in led.events] == [1.0, 0.0, 1.0]
    assert [e.cpu for e in led.events] == [14.0, 0.0, 7.5]
    events, cpu = sq.cut(led, 1.5)
    assert len(events) == 2 and cpu == 14.0
    assert [e.cost for e in sq.Ledger(study, cpu=True).events] == []
    led_cpu = sq.Ledger(study, cpu=True)
    led_cpu.add({"a": 1}, [(1, ok, 0.1), (2, ok, 0.1)])
    assert led_cpu.events[0].cost == 14.0


def test_only_points_beating_the_baseline_count(sq) -> None:  # type: ignore[no-untyped-def]
    ref = np.array([10.0, 2.0])
    F = np.array([[8.0, 1.0], [11.0, 0.5], [9.0, 2.5], [10.0, 1.0]])  # only the first beats ref on both
    assert sq.rechecked_hv(F, ref) == pytest.approx(2.0 * 1.0)
    assert sq.rechecked_hv(np.array([[12.0, 3.0]]), ref) == 0.0
    assert sq.rechecked_hv(np.empty((0, 2)), ref) == 0.0


def test_cut_keeps_what_fits_the_budget(sq) -> None:  # type: ignore[no-untyped-def]
    led = sq.Ledger.__new__(sq.Ledger)
    led.events = [sq.Event(str(i), {}, None, c, 10 * c) for i, c in enumerate([1.0, 2.0, 3.0, 0.5])]
    events, cpu = sq.cut(led, 3.5)
    assert [e.key for e in events] == ["0", "1"] and cpu == 30.0  # the third would pass 3.5; none after it


def test_paired_test_counts_wins_and_gives_exact_p(sq) -> None:  # type: ignore[no-untyped-def]
    ours = [10.0, 20.0, 0.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 5.0]
    peer = [5.0, 10.0, 0.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 9.0]
    s = sq.paired(ours, peer)
    # 8 strict wins, 1 tie (both 0: counts as >=), 1 loss; the sign test drops the tie: P(X >= 8 | 9, 1/2)
    assert (s["wins"], s["of"], s["strict_wins"], s["losses"]) == (9, 10, 8, 1)
    assert s["p"] == pytest.approx(10 / 512)
    assert 0 < s["wilcoxon_p"] < 0.05
    # a method that never differs gives no evidence either way
    assert sq.paired([1.0, 2.0], [1.0, 2.0])["p"] == 1.0
    assert sq.paired([1.0, 2.0], [2.0, 3.0])["wins"] == 0


def test_merge_pairs_by_repetition(sq, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"problem": "classic", "budget": 200, "reps": [0, 1],
                             "methods": {"paretosched": {"hv": [3.0, 4.0], "cpu_s": [1, 1]},
                                         "random": {"hv": [1.0, 5.0], "cpu_s": [1, 1]}}}))
    b.write_text(json.dumps({"problem": "classic", "budget": 200, "reps": [1, 2],
                             "methods": {"tpe": {"hv": [2.0, 9.0], "cpu_s": [1, 1]}}}))
    out = tmp_path / "m.json"
    assert sq.merge([str(a), str(b)], str(out)) == 0
    data = json.loads(out.read_text())
    assert data["reps"] == [1]  # the only repetition every method ran
    assert data["methods"]["paretosched"]["hv"] == [4.0] and data["methods"]["tpe"]["hv"] == [2.0]
    assert data["paired"]["random"]["wins"] == 0 and data["paired"]["tpe"]["wins"] == 1
    assert "left out" in capsys.readouterr().out


def test_prefix_screening_runs_are_charged_and_never_on_the_front(sq, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib
    import io

    import yaml

    from paretosched.search.analytic import study_dict
    from paretosched.search.optimise import optimise
    from paretosched.search.runlog import read_evaluations
    from paretosched.search.study import load_study

    base = {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0 + k} for k in range(8)]}}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(study_dict(budget={"evaluations": 40}, base=base, algorithm={"pop_size": 10},
                                              screening={"by": "prefix", "factor": 2, "prefix": 0.5},
                                              evaluator=sq.EVALUATOR)))  # the twin, timed: rows carry cpu_s
    monkeypatch.setenv("PARETOSCHED_EVALUATORS", sq.EVALUATOR)
    with contextlib.redirect_stderr(io.StringIO()):
        run = optimise(str(path), out=str(tmp_path / "run"), quiet=True)
    led = sq.log_ledger(load_study(path), run)
    rows = [r for r in read_evaluations(run) if r.kind in ("search", "baseline", "screen")]
    assert len(led.events) == len(rows) and any(r.kind == "screen" for r in rows)
    for e, r in zip(led.events, rows):
        assert (e.F is None) == (r.kind != "search")  # screen rows cost, but are no trade-off


def test_the_json_holds_each_finished_repetition(sq, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # a long invocation stopped in its second repetition keeps the first one's figures
    monkeypatch.delenv("PARETOSCHED_EVALUATORS", raising=False)
    real, calls = sq.run_random, []

    def second_fails(*a, **k):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(sq, "run_random", second_fails)
    out = tmp_path / "q.json"
    with pytest.raises(KeyboardInterrupt):
        sq.main(["--problem", "classic", "--trace", "builtin:hpc2n-3k.swf.gz", "--first-job", "0", "--n-jobs", "40",
                 "--budget", "4", "--reps", "2", "--recheck", "1", "--methods", "random",
                 "--out", str(tmp_path / "work"), "--json", str(out)])
    data = json.loads(out.read_text())
    assert len(data["methods"]["random"]["hv"]) == 1 and math.isfinite(data["methods"]["random"]["hv"][0])
