"""One decision with a classic policy pair (thesis table 3.2), shared by every scheduler kind.

It starts jobs in the job policy's order until the chosen job does not fit (head-of-line
blocking), then backfills around that job's reservation (EASY) or around every queued job's
(conservative). The backfilling is a strategy object, built once from the YAML name
(`backfilling`), like the job and resource policies (`policies.job_selector`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from paretosched.sim.backfill import backfill
from paretosched.sim.conservative import conservative
from paretosched.sim.policies import JobSelector, ResourceSelector

if TYPE_CHECKING:
    from paretosched.sim.workload import Job
    from paretosched.sim.twin import Twin


class Backfilling:
    """No backfilling: the decision ends at the first job that does not fit."""

    name: ClassVar[str] = "none"

    def __call__(self, twin: Twin, blocked: Job, jsel: JobSelector, rsel: ResourceSelector) -> None:
        """Start what may jump the queue around `blocked`, the job that does not fit."""


class Easy(Backfilling):
    """EASY: jobs that do not delay the blocked job's reservation."""

    name = "easy"

    def __call__(self, twin: Twin, blocked: Job, jsel: JobSelector, rsel: ResourceSelector) -> None:
        backfill(twin, blocked, jsel, rsel)


class Conservative(Backfilling):
    """Conservative: jobs that delay no queued job's reservation."""

    name = "conservative"

    def __call__(self, twin: Twin, blocked: Job, jsel: JobSelector, rsel: ResourceSelector) -> None:
        conservative(twin, jsel, rsel)


# stateless: one instance of each serves every scheduler
BACKFILLINGS: dict[str, Backfilling] = {c.name: c() for c in (Backfilling, Easy, Conservative)}


def backfill_strategy(name: str) -> Backfilling:
    """The backfilling the user named (config: `scheduler.backfilling`)."""
    return BACKFILLINGS[name]


def schedule_pair(twin: Twin, jsel: JobSelector, rsel: ResourceSelector, fill: Backfilling) -> int:
    """Start jobs with one policy pair until the selected job does not fit, then `fill`; returns jobs started."""
    started = 0
    queue = twin.queue
    while queue:
        job = jsel.head(queue)
        alloc = rsel.allocate(job) if job.size <= twin.free_total else None
        if alloc is None:
            if len(queue) > 1:
                before = len(queue)
                fill(twin, job, jsel, rsel)
                started += before - len(queue)
            break
        twin.start(job, alloc)
        started += 1
    return started
