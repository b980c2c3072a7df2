"""Slurm's plan and jobs running past their estimate (interference slows them down)."""

from __future__ import annotations

from typing import Any

from paretosched.config import config_from_dict
from paretosched.sim.engine import twin as twin_module
from paretosched.sim.run import prepare, simulate


def test_a_job_past_its_estimate_keeps_its_cores(monkeypatch: Any) -> None:
    # on this window a job overruns its estimate at t=258,270 while the main scheduler places a
    # 2-core job; its cores were counted free now and given out twice (busy > cores, a crash)
    over: list[tuple[float, int, int, int]] = []
    start = twin_module.Twin.start

    def checked(self: Any, job: Any, alloc: list[tuple[Any, int]]) -> None:
        over.extend((self.now, job.id, k, len(p.free)) for p, k in alloc if k > len(p.free))
        start(self, job, alloc)

    monkeypatch.setattr(twin_module.Twin, "start", checked)
    cfg = config_from_dict({"platform": "gaia-mini", "seed": 0, "scheduler": {"kind": "slurm"},
                            "workload": {"path": "builtin:hpc2n-3k.swf.gz", "mode": "trace", "n_jobs": 300}})
    metrics = simulate(cfg, prepared=prepare(cfg)).metrics
    assert over == []
    assert metrics["n_jobs"] == 300 and metrics["energy_j"] > 0
