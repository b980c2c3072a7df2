"""One decision with a classic policy pair (thesis table 3.2), shared by every scheduler kind.

It starts jobs in the job policy's order until the chosen job does not fit (head-of-line
blocking), then backfills around that job's reservation (EASY); with conservative backfilling the
whole queue, head included, follows the plan of kept reservations. The backfilling is a strategy
object, built once from the YAML name (`backfill_strategy`), like the job and resource policies
(`policies.job_selector`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from paretosched.sim.backfill.easy import backfill
from paretosched.sim.placement.policies import JobSelector, ResourceSelector

if TYPE_CHECKING:
    from paretosched.sim.engine.twin import Twin
    from paretosched.sim.readers.workload import Job


class Backfilling:
    """No backfilling: the decision ends at the first job that does not fit."""

    name: ClassVar[str] = "none"

    def schedule(self, twin: Twin, jsel: JobSelector, rsel: ResourceSelector) -> int:
        """Start jobs in `jsel`'s order until one does not fit, then `fill` around it; returns jobs started."""
        started = 0
        queue = twin.queue
        while queue:
            job = jsel.head(queue)
            alloc = rsel.allocate(job) if job.size <= twin.free_total else None
            if alloc is None:
                if len(queue) > 1:
                    before = len(queue)
                    self.fill(twin, job, jsel, rsel)
                    started += before - len(queue)
                break
            twin.start(job, alloc)
            started += 1
        return started

    def fill(self, twin: Twin, blocked: Job, jsel: JobSelector, rsel: ResourceSelector) -> None:
        """Start what may jump the queue around `blocked`, the job that does not fit."""


class Easy(Backfilling):
    """EASY: jobs that do not delay the blocked job's reservation."""

    name = "easy"

    def fill(self, twin: Twin, blocked: Job, jsel: JobSelector, rsel: ResourceSelector) -> None:
        backfill(twin, blocked, jsel, rsel)


class Conservative(Backfilling):
    """Conservative: the whole queue follows the plan of kept reservations."""

    name = "conservative"
    _pass: Callable[[Twin, JobSelector, ResourceSelector], None] | None = None

    def schedule(self, twin: Twin, jsel: JobSelector, rsel: ResourceSelector) -> int:
        # the head is the plan's first job: starting it whenever it fits now could take cores
        # that later jobs' kept reservations count on (on a heterogeneous platform)
        queue = twin.queue
        if not queue:
            return 0
        before = len(queue)
        run = self._pass
        if run is None:  # imported on first use: its modules (and numpy's) cost every other run 10 ms
            from paretosched.sim.backfill.conservative.decide import conservative

            run = self._pass = conservative
        run(twin, jsel, rsel)
        return before - len(queue)


# stateless: one instance of each serves every scheduler
BACKFILLINGS: dict[str, Backfilling] = {c.name: c() for c in (Backfilling, Easy, Conservative)}


def backfill_strategy(name: str) -> Backfilling:
    """The backfilling the user named (config: `scheduler.backfilling`)."""
    return BACKFILLINGS[name]


def schedule_pair(twin: Twin, jsel: JobSelector, rsel: ResourceSelector, fill: Backfilling) -> int:
    """Start jobs with one policy pair under the backfilling `fill`; returns jobs started."""
    return fill.schedule(twin, jsel, rsel)
