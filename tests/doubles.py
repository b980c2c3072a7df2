"""Test doubles of the search layer's evaluator: the analytic problem, made to fail or to be slow.

Studies name them as `tests.doubles:evaluate_flaky` / `tests.doubles:evaluate_slow`; like any
evaluator outside paretosched they must be allowed in `PARETOSCHED_EVALUATORS`
(tests/search/conftest.py does, and puts the repository on PYTHONPATH for child processes).
"""

from __future__ import annotations

import os
import time
from typing import Any

from paretosched.search.analytic import evaluate


def evaluate_flaky(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """As `evaluate` but raises for job_policy 'random' (tests failure handling)."""
    if cfg["scheduler"].get("job_policy") == "random":
        raise ValueError("simulated twin failure for job_policy=random")
    return evaluate(cfg, seed)


def evaluate_slow(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """As `evaluate` but takes 20 ms (PARETOSCHED_SLOW_S seconds if set), so a test can kill a run
    in the middle of a generation. With PARETOSCHED_COUNT_FILE set, appends one line per call
    there (counts simulations)."""
    time.sleep(float(os.environ.get("PARETOSCHED_SLOW_S", "0.02")))
    counter = os.environ.get("PARETOSCHED_COUNT_FILE")
    if counter:
        with open(counter, "a", encoding="utf-8") as f:
            f.write(f"{seed}\n")
    return evaluate(cfg, seed)
