"""Scheduler strategies: an object with `decide(twin)` called at each decision instant.

A classic scheduler is a policy pair (thesis table 3.2) plus optional EASY backfilling: it starts
jobs in its job policy's order until the chosen job does not fit (head-of-line blocking), then
backfills around that job's reservation when EASY is on.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from paretosched.sim.backfill import backfill
from paretosched.sim.policies import JobSelector, ResourceSelector

if TYPE_CHECKING:
    from paretosched.sim.twin import Twin


class ClassicScheduler:
    def __init__(self, twin: Twin, job_policy: str, resource_policy: str, backfilling: str,
                 rng: random.Random, bw_cap: float | None = None) -> None:
        self.jsel = JobSelector(job_policy, rng)
        self.rsel = ResourceSelector(resource_policy, twin.procs, rng, bw_cap, prefer_on=twin.switch_off)
        self.easy = backfilling == "easy"

    def decide(self, twin: Twin) -> None:
        schedule_pair(twin, self.jsel, self.rsel, self.easy)


def schedule_pair(twin: Twin, jsel: JobSelector, rsel: ResourceSelector, easy: bool) -> int:
    """Start jobs with one policy pair until the selected job does not fit; returns jobs started."""
    started = 0
    queue = twin.queue
    while queue:
        job = jsel.head(queue)
        alloc = rsel.allocate(job) if job.size <= twin.free_total else None
        if alloc is None:
            if easy and len(queue) > 1:
                before = len(queue)
                backfill(twin, job, jsel, rsel)
                started += before - len(queue)
            break
        twin.start(job, alloc)
        started += 1
    return started


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
        from paretosched.sim.slurm_sched import SlurmScheduler

        return SlurmScheduler(twin, spec, rng)
    raise ValueError(f"unknown scheduler kind {spec.kind!r}")
