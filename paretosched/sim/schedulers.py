"""Scheduler strategies: an object with `decide(twin)` called at each decision instant.

A classic scheduler is a policy pair (thesis table 3.2) plus optional backfilling, run by
`backfill.strategies.schedule_pair` (the RL scheduler and the gym environment run their chosen pair with it too).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from paretosched.sim.backfill.strategies import backfill_strategy, schedule_pair
from paretosched.sim.placement.policies import job_selector, resource_selector

if TYPE_CHECKING:
    from paretosched.sim.engine.twin import Twin


class ClassicScheduler:
    def __init__(self, twin: Twin, job_policy: str, resource_policy: str, backfilling: str,
                 rng: random.Random, bw_cap: float | None = None) -> None:
        self.jsel = job_selector(job_policy, rng)
        self.rsel = resource_selector(resource_policy, twin.procs, rng, bw_cap, prefer_on=twin.switch_off)
        self.fill = backfill_strategy(backfilling)

    def decide(self, twin: Twin) -> None:
        schedule_pair(twin, self.jsel, self.rsel, self.fill)


def build_scheduler(twin: Twin, spec: Any, rng: random.Random, agent: Any = None) -> Any:
    """The strategy object for a validated scheduler spec (`agent`: a trained RL agent, for kind rl)."""
    if spec.kind == "classic":
        return ClassicScheduler(twin, spec.job_policy, spec.resource_policy, spec.backfilling, rng, spec.bw_cap)
    if spec.kind == "rl":
        from paretosched.sim.rl.env import RLScheduler

        if agent is None:
            raise ValueError("an rl scheduler needs its agent (train it or load its weights first)")
        return RLScheduler(twin, spec, agent, rng, None)  # greedy evaluation
    if spec.kind == "slurm":
        from paretosched.sim.slurm.scheduler import SlurmScheduler

        return SlurmScheduler(twin, spec, rng)
    raise ValueError(f"unknown scheduler kind {spec.kind!r}")
