"""What backfilling keeps between passes: running jobs by estimated end, and what they release.

`EndOrder` holds the twin's running jobs sorted by (estimated end, arrival). A job's estimate
(requested operations left over its current speed) moves only when it begins, when one of its
groups is re-timed (a speed change) or when it ends; the twin marks the job on each
(`Twin.job_watchers`) and a pass re-files only the marked jobs, where sorting every running job
at every pass was most of EASY's cost on deep queues. Entries hold the unclamped estimate: jobs
already past it (overran) form a prefix, which a pass orders by arrival (their estimate is now).

For reservations counted in cores, it also keeps the cores per processor that a prefix of that
order releases (`released`, updated by the jobs entering or leaving the prefix between passes)
and the processors with a free core (from the twin's processor marks, `NodeState.watchers`), so
a pass costs the jobs it walks and the changes since the last one, not every running core.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from paretosched.sim.engine.state import ProcState

if TYPE_CHECKING:
    from paretosched.sim.engine.twin import Twin


def raw_end(job: Any) -> float:
    """The latest of the job's groups' estimated ends (not clamped to now)."""
    extra = job.req_ops - job.ops
    groups = job.groups
    g = groups[0]
    est = g.end + extra / g.speed
    for g in groups:
        t = g.end + extra / g.speed
        if t > est:
            est = t
    return est


def lockstep_end(job: Any) -> float:
    """`raw_end` under lockstep progress, where every part of a job has the same end and speed
    (`starting`, `pacing._set_pace`): its first part's, the same float, without a pass over its parts."""
    g = job.groups[0]
    return g.end + (job.req_ops - job.ops) / g.speed


def _seq(job: Any) -> int:
    return job.seq


class EndOrder:
    """The twin's running jobs ordered by (estimated end, arrival), kept between passes."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.entries: list[tuple[float, int, Any]] = []  # (raw estimated end, seq, job), sorted
        self.est: dict[Any, float] = {}
        self._dirty: dict[Any, None] = dict.fromkeys(twin.running)
        twin.job_watchers.append(self._dirty)
        self.unbounded_mem = all(n.mem_cap == math.inf for n in twin.nodes)
        # one core per processor: a running job's processors have no free core (`easy_count.py`)
        self.one_core = all(p.ncores == 1 for p in twin.procs)
        # every core's speed the same for the whole run: an allocation's slowest core is the fastest
        self.uniform_speed = twin.interference == "none" and len({p.speed for p in twin.procs}) == 1
        self.prefix: dict[Any, None] = {}      # the jobs `released` counts
        self.released: dict[ProcState, int] = {}
        self.released_total = 0
        self.free_procs: dict[ProcState, None] | None = None  # made on first use
        self._raw_end = lockstep_end if twin.lockstep else raw_end
        self._proc_dirty: dict[Any, None] = {}

    def sync(self) -> None:
        dirty = self._dirty
        if not dirty:
            return
        entries, est, running, prefix, end_of = self.entries, self.est, self.twin.running, self.prefix, self._raw_end
        for job in dirty:
            old = est.pop(job, None)
            if old is not None:
                del entries[bisect_left(entries, (old, job.seq))]
            if job in prefix:
                self._leave(job)
            if job in running:
                e = est[job] = end_of(job)
                insort(entries, (e, job.seq, job))
        dirty.clear()

    def walk(self, now: float) -> Iterator[Any]:
        """Running jobs in the order of (estimated end clamped to now, arrival)."""
        entries = self.entries
        cut = bisect_right(entries, (now, math.inf))
        if cut:
            yield from sorted((e[2] for e in entries[:cut]), key=_seq)
        for i in range(cut, len(entries)):
            yield entries[i][2]

    # -- cores released by a prefix of the order --------------------------------------------
    def set_prefix(self, jobs: list[Any]) -> None:
        """Make `released` count exactly the cores of `jobs` (a prefix of the order)."""
        prefix = self.prefix
        if len(prefix) > len(jobs) or any(j not in prefix for j in jobs):
            keep = set(jobs)
            for job in [j for j in prefix if j not in keep]:
                self._leave(job)
        for job in jobs:
            if job not in prefix:
                prefix[job] = None
                released = self.released
                for g in job.groups:
                    p = g.proc
                    released[p] = released.get(p, 0) + len(g.cores)
                self.released_total += job.size

    def _leave(self, job: Any) -> None:
        del self.prefix[job]
        released = self.released
        for g in job.groups:
            p = g.proc
            n = released[p] - len(g.cores)
            if n:
                released[p] = n
            else:
                del released[p]
        self.released_total -= job.size

    def with_free_cores(self) -> dict[ProcState, None]:
        """The processors with a free core now (platform order not kept)."""
        free = self.free_procs
        if free is None:
            free = self.free_procs = {p: None for p in self.twin.procs if p.free}
            for node in self.twin.nodes:
                node.watchers.append(self._proc_dirty)
            return free
        dirty = self._proc_dirty
        if dirty:
            for x in dirty:
                if x.__class__ is ProcState:
                    if x.free:
                        free[x] = None
                    else:
                        free.pop(x, None)
            dirty.clear()
        return free


def end_order(twin: Twin) -> EndOrder:
    """The twin's `EndOrder`, made on first use (one per twin: RL schedulers switch policy pairs)."""
    order = twin.sched_state.get("end_order")
    if order is None:
        order = twin.sched_state["end_order"] = EndOrder(twin)
    order.sync()
    return order
