"""EASY on one-core processors without memory limits, counted: the head's reservation as a number.

On such a platform (the homogeneous machines of the peer comparisons and of most traces) a running
job's processors have no free core, so the head takes every core released up to its shadow time and
then the first free cores in rank order; an allocation without caps takes free cores in that order
too. So a pass keeps one count (the free cores held for the head) where `easy.backfill` keeps a
cap per processor and recounts them at each start. The schedules are the same
(tests/sim/test_backfill_incremental.py checks the count against the general pass's caps after
every start, and compares schedules with `backfill.COUNTED` off).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress, islice
from operator import attrgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paretosched.sim.backfill.end_order import EndOrder
    from paretosched.sim.engine.twin import Twin
    from paretosched.sim.placement.policies import JobSelector, ResourceSelector

# Called after the counted reservation and after each start of `backfill_counted` when set (tests
# compare the kept count with the general pass's caps): (twin, head, rsel, (shadow, held cores) or None,
# the allocation started or None at the reservation, whether it was a job past the shadow time).
CHECK: Callable[..., None] | None = None

_free = attrgetter("free")
_proc = attrgetter("proc")


class FirstFree:
    """Where, in a fixed ranking, the first processor with a free core is: the allocator's walk
    starts there, not at the top (a busy machine's busy processors are the top of the ranking,
    since every allocation takes free cores from the top).

    Kept as a lower bound: starts only take cores, so only an end can move it up; the twin marks
    the jobs that end (`Twin.job_watchers`) and their processors lower it at the next look.
    """

    def __init__(self, twin: Twin, ranked: list[Any]) -> None:
        self.ranked = ranked
        self.pos = {p: i for i, p in enumerate(ranked)}
        self.at = 0
        self.running = twin.running
        self.marks: dict[Any, None] = {}
        twin.job_watchers.append(self.marks)

    def first(self) -> int:
        """The rank position of the first processor with a free core (the caller checked there is one)."""
        at = self.at
        marks = self.marks
        if marks:
            running, pos = self.running, self.pos
            for job in marks:
                if job not in running:  # ended (or re-timed and ended): its processors are free again
                    m = min(map(pos.__getitem__, map(_proc, job.groups)))
                    if m < at:
                        at = m
            marks.clear()
        ranked = self.ranked
        while not ranked[at].free:
            at += 1
        self.at = at
        return at


def first_free(twin: Twin, ranked: list[Any]) -> FirstFree:
    """The twin's `FirstFree` for this ranking, made on first use."""
    kept = twin.sched_state.setdefault("first_free", {})  # by ranking (RL schedulers switch pairs)
    ff = kept.get(id(ranked))  # (the list lives as long as its entry: its id is not reused)
    if ff is None:
        ff = kept[id(ranked)] = FirstFree(twin, ranked)
    return ff


def held_reservation(twin: Twin, head: Any, order: EndOrder) -> tuple[float, int] | None:
    """(shadow time, held cores) for the head on one-core processors without memory limits.

    A running job's processors have no free core there, so the head takes every core the jobs up
    to the shadow time release and then the first `held` free cores in rank order: the caps
    `easy._static_count_reservation` would give are those cores' (`held_caps`), counted, not listed.
    """
    now = twin.now
    short = head.size - twin.free_total
    last = None
    for last in order.walk(now):
        short -= last.size
        if short <= 0:
            break
    if last is None or short > 0:
        return None  # the running jobs never free enough: the head waits for booting nodes' jobs
    # released cores = head.size - free_total - short; the head takes them all, then the rest
    held = twin.free_total + short
    return max(now, order.est[last]), held if held > 0 else 0


def held_caps(ranked: list[Any], held: int) -> dict[int, int]:
    """The caps that keep the first `held` free cores in rank order for the head (one core each:
    a cap of 0 on each of the first `held` processors with a free core)."""
    limits: dict[int, int] = {}
    if held:
        for p in ranked:
            if p.free:
                limits[p.idx] = 0
                held -= 1
                if not held:
                    break
    return limits


def backfill_counted(twin: Twin, head: Any, jsel: JobSelector, rsel: ResourceSelector, order: EndOrder) -> None:
    """`easy.backfill` on one-core processors without memory limits under a static ranking.

    The head's share of the free cores is the first `held` of them in rank order, and an allocation
    without caps takes free cores in that order too: a short job takes the held cores first (so
    they stay the first ones, fewer), a job past the shadow time the free cores after the held
    ones. So the pass keeps one count where `easy.backfill` keeps a cap per processor and
    recounts them at each start, and no allocation can fail (a job is tried only when it fits in
    the free cores, less the held ones when it runs past the shadow time).
    """
    res = held_reservation(twin, head, order)
    check = CHECK
    if check is not None:
        check(twin, head, rsel, res, None, False)
    if res is None:
        return
    shadow, held = res
    twin.note_reservation(head, shadow)
    now = twin.now
    ranked = rsel.ranked()
    # the ranking is fixed unless nodes on come first (then it follows their power states)
    ff = None if rsel.prefer_on else first_free(twin, ranked)
    max_speed = rsel.max_speed
    uniform = order.uniform_speed
    for job in jsel.order(twin.queue):
        size = job.size
        if job is head or size > twin.free_total:
            continue
        if now + job.req_ops / max_speed <= shadow:
            # the static allocator's choice here (`taking.take_once`: one core from each processor
            # with a free one, in rank order) from the first processor with a free core
            top = ranked[ff.first():] if ff is not None else ranked
            alloc = [(p, 1) for p in islice(compress(top, map(_free, top)), size)]
            if uniform or now + job.req_ops / min(p.speed * p.factor for p, _ in alloc) <= shadow:
                twin.start(job, alloc)
                held = held - size if held > size else 0
                if check is not None:
                    check(twin, head, rsel, (shadow, held), alloc, False)
                continue
        # a job past the shadow time: the allocator under `held_caps`, which skips the held cores
        if size > twin.free_total - held:
            continue
        top = ranked[ff.first():] if ff is not None else ranked
        alloc = [(p, 1) for p in islice(compress(top, map(_free, top)), held, held + size)]
        twin.start(job, alloc)
        if check is not None:
            check(twin, head, rsel, (shadow, held), alloc, True)
        if twin.free_total == 0:
            break
