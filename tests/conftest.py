"""Shared test helpers: build configs in a line and run them."""

from __future__ import annotations

import os
from typing import Any

# Dask's scheduler, workers and nanny log every start, stop and lost connection at INFO on stderr
# (~60 lines a cluster): a failing test's output must show the failure. Set before dask is imported
# (it reads its config from the environment then); the workers' processes inherit it.
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")

import pytest

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
