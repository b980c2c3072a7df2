"""benchmarks/worker_efficiency.py: the replay schedules, by hand, and reading a real log."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
import worker_efficiency as we  # noqa: E402

sys.path.remove(str(BENCH))


def test_barrier_and_steady_by_hand() -> None:
    bs = [[4.0, 1.0, 1.0], [1.0, 1.0]]
    # barrier, 2 workers: batch 1 ends at 4 (4 | 1+1), batch 2 at 5; busy 8 of 2 x 5
    assert we.barrier(bs, 2) == 5.0 and we.efficiency(bs, 2, 5.0) == pytest.approx(0.8)
    # steady: 4 | 1,1,1,1 -> both end at 4
    assert we.steady(bs, 2) == 4.0 and we.efficiency(bs, 2, 4.0) == 1.0
    # a master paying 0.5 per dispatch, serially: 4 runs 0.5-4.5; the 1s run 1.0-2.0, 2.5-3.5, 4.0-5.0,
    # and the last goes to the worker free at 4.5: 5.0-6.0
    assert we.steady(bs, 2, master_s=0.5) == pytest.approx(6.0)
    assert we.barrier(bs, 1) == we.steady(bs, 1) == 8.0  # one worker is never idle


def test_batches_skip_cache_hits_and_copied_seeds(tmp_path: Path) -> None:
    def seed(s: int, wall: float, cached: bool = False) -> dict:
        return {"seed": s, "status": "ok", "metrics": {"cpu_s": wall / 2}, "error": None, "wall_s": wall, "cached": cached}

    rows = [
        {"eval_id": 0, "kind": "search", "generation": 0, "supersedes": None, "seeds": [1], "per_seed": [seed(1, 2.0)]},
        {"eval_id": 1, "kind": "search", "generation": 0, "supersedes": None, "seeds": [1], "per_seed": [seed(1, 0.0, True)]},
        {"eval_id": 2, "kind": "search", "generation": 0, "supersedes": 0, "seeds": [1, 2],
         "per_seed": [seed(1, 2.0), seed(2, 3.0)]},
    ]
    log = tmp_path / "evaluations.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert we.batches(log) == [[2.0], [3.0]]  # the search batch, then its resampling round
    assert we.batches(log, cpu=True) == [[1.0], [1.5]]
