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
                    "--n-jobs", "40", "--budget", "4", "--reps", "2", "--recheck", "1", "--unit-cpu", "0.01",
                    "--methods", ",".join(methods), "--out", str(tmp_path / "work"), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data) == {"problem", "budget", "methods", "p_values"}
    assert data["problem"] == "classic" and data["budget"] == 4
    assert list(data["methods"]) == methods
    for m in methods:
        assert set(data["methods"][m]) == {"hv", "cpu_s"}
        assert len(data["methods"][m]["hv"]) == 2 and len(data["methods"][m]["cpu_s"]) == 2
        assert all(math.isfinite(v) and v >= 0 for v in data["methods"][m]["hv"])
        # the history is cut at the budget: 4 x 0.01 CPU s
        assert all(0 <= c <= 0.04 + 1e-9 for c in data["methods"][m]["cpu_s"])
    assert set(data["p_values"]) == {"random", "pymoo-ga"}
    assert all(0 <= p <= 1 for p in data["p_values"].values())


def test_only_points_beating_the_baseline_count(sq) -> None:  # type: ignore[no-untyped-def]
    ref = np.array([10.0, 2.0])
    F = np.array([[8.0, 1.0], [11.0, 0.5], [9.0, 2.5], [10.0, 1.0]])  # only the first beats ref on both
    assert sq.rechecked_hv(F, ref) == pytest.approx(2.0 * 1.0)
    assert sq.rechecked_hv(np.array([[12.0, 3.0]]), ref) == 0.0
    assert sq.rechecked_hv(np.empty((0, 2)), ref) == 0.0


def test_cut_keeps_what_fits_the_budget(sq) -> None:  # type: ignore[no-untyped-def]
    led = sq.Ledger.__new__(sq.Ledger)
    led.events = [sq.Event(str(i), {}, None, c) for i, c in enumerate([1.0, 2.0, 3.0, 0.5])]
    events, spent = sq.cut(led, 3.5)
    assert [e.key for e in events] == ["0", "1"] and spent == 3.0  # the third would pass 3.5; none after it


def test_win_factor_is_the_smallest_multiple_that_passes(sq) -> None:  # type: ignore[no-untyped-def]
    from scipy.stats import mannwhitneyu

    peer = [0.0, 100.0, 300.0, 700.0, 1100.0, 1200.0, 1500.0, 250.0, 690.0, 680.0]
    k = sq.win_factor(peer)
    assert k is not None and 1.05 <= k <= 5
    assert mannwhitneyu(k * np.array(peer), peer, alternative="greater").pvalue < 0.10
    assert mannwhitneyu((k - 0.05) * np.array(peer), peer, alternative="greater").pvalue >= 0.10
    assert sq.win_factor([0.0, 0.0, 0.0]) is None  # nothing to multiply: no multiple wins


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
                 "--budget", "4", "--reps", "2", "--recheck", "1", "--unit-cpu", "0.01", "--methods", "random",
                 "--out", str(tmp_path / "work"), "--json", str(out)])
    data = json.loads(out.read_text())
    assert len(data["methods"]["random"]["hv"]) == 1 and math.isfinite(data["methods"]["random"]["hv"][0])
