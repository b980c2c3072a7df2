"""One decision with a classic policy pair (thesis table 3.2), shared by every scheduler kind.

It starts jobs in the job policy's order until the chosen job does not fit (head-of-line
blocking), then backfills around that job's reservation (EASY); with conservative backfilling the
whole queue, head included, follows the plan of kept reservations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paretosched.sim.backfill import backfill
from paretosched.sim.conservative import conservative
from paretosched.sim.policies import JobSelector, ResourceSelector

if TYPE_CHECKING:
    from paretosched.sim.twin import Twin


def schedule_pair(twin: Twin, jsel: JobSelector, rsel: ResourceSelector, backfilling: bool | str) -> int:
    """Start jobs with one policy pair until the selected job does not fit; returns jobs started.

    `backfilling`: "none", "easy" or "conservative" (a bool: EASY or none).
    """
    easy = backfilling is True or backfilling == "easy"
    cons = backfilling == "conservative"
    started = 0
    queue = twin.queue
    if cons and queue:
        # the head is the plan's first job: starting it whenever it fits now could take cores
        # that later jobs' kept reservations count on (on a heterogeneous platform)
        before = len(queue)
        conservative(twin, jsel, rsel)
        return before - len(queue)
    while queue:
        job = jsel.head(queue)
        alloc = rsel.allocate(job) if job.size <= twin.free_total else None
        if alloc is None:
            if (easy or cons) and len(queue) > 1:
                before = len(queue)
                if easy:
                    backfill(twin, job, jsel, rsel)
                else:
                    conservative(twin, jsel, rsel)
                started += before - len(queue)
            break
        twin.start(job, alloc)
        started += 1
    return started
