"""Shared test helpers: build configs in a line and run them."""

from __future__ import annotations

from typing import Any

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
