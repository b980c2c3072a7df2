"""Shared test helpers: build configs in a line and run them."""

from __future__ import annotations

import os
from typing import Any

# Dask's scheduler, workers and nanny log every start, stop and lost connection at INFO on stderr
# (~60 lines a cluster): a failing test's output must show the failure. Set before dask is imported
# (it reads its config from the environment then); the workers' processes inherit it.
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")

import pytest
from hypothesis import settings

# Property and fuzz tests draw the same examples on every run (a hash of each test seeds them, and
# no example database replays old failures): a test that passes on a clone passes on the next one.
# `pytest --hypothesis-profile=explore` draws fresh examples when hunting for bugs.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("deterministic")

from paretosched.config import config_from_dict
from paretosched.sim.run import RunResult, simulate


def run_cfg(platform: Any, jobs: list[dict] | None = None, seed: int = 0, record: bool = True,
            workload: dict | None = None, **sections: Any) -> RunResult:
    """Simulate inline jobs (or a workload section) with scheduler/model overrides."""
    data: dict[str, Any] = {"platform": platform, "workload": workload or {"jobs": jobs}}
    data.update(sections)
    return simulate(config_from_dict(data), seed=seed, record_jobs=record)


@pytest.fixture
def run():
    return run_cfg
