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
