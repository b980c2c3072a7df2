"""EASY on one-core processors without memory limits, counted: the head's reservation as a number.

On such a platform (the homogeneous machines of the peer comparisons and of most traces) a running
job's processors have no free core, so the head takes every core released up to its shadow time and
then the first free cores in rank order; an allocation without caps takes free cores in that order
too. So a pass keeps one count (the free cores held for the head) where `backfill.backfill` keeps a
cap per processor and recounts them at each start, and makes the caps only when a job that would
run past the shadow time asks for cores. The schedules are the same (tests/sim/test_backfill_incremental.py
checks the count against the general pass's caps after every start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from paretosched.sim.failmemo import add_fail, dominated

if TYPE_CHECKING:
    from paretosched.sim.endorder import EndOrder
    from paretosched.sim.policies import JobSelector, ResourceSelector
    from paretosched.sim.twin import Twin

# Called after the counted reservation and after each start of `backfill_counted` when set (tests
# compare the kept count with the general pass's caps): (twin, head, rsel, (shadow, held cores) or None,
# the caps made or None, the allocation started or None at the reservation, whether it was a job past
# the shadow time).
CHECK: Callable[..., None] | None = None


def held_reservation(twin: Twin, head: Any, order: EndOrder) -> tuple[float, int] | None:
    """(shadow time, held cores) for the head on one-core processors without memory limits.

    A running job's processors have no free core there, so the head takes every core the jobs up
    to the shadow time release and then the first `held` free cores in rank order: the caps
    `backfill._static_count_reservation` would give are those cores' (`held_caps`), counted, not listed.
    """
    now = twin.now
    short = head.size - twin.free_total
    last = None
    for last in order.walk(now):
        short -= last.size
        if short <= 0:
            break
    if last is None or short > 0:
        return None  # the head never fits (cannot happen for jobs the loader accepted)
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
    """`backfill.backfill` on one-core processors without memory limits under a static ranking.

    The head's share of the free cores is the first `held` of them in rank order, and an allocation
    without caps takes free cores in that order too: a short job takes the held cores first (so
    they stay the first ones, fewer), a job past the shadow time takes none. So the pass keeps one
    count where `backfill.backfill` keeps caps and recounts them per start, and makes the caps only when a
    job past the shadow time asks for cores (rarely: most jobs started are short).
    """
    res = held_reservation(twin, head, order)
    check = CHECK
    if check is not None:
        check(twin, head, rsel, res, None, None, False)
    if res is None:
        return
    shadow, held = res
    twin.note_reservation(head, shadow)
    now = twin.now
    ranked = rsel.ranked()
    max_speed = rsel.max_speed
    uniform = order.uniform_speed
    limits: dict[int, int] | None = None
    no_mem: dict[int, float] = {}
    short_fails: list[tuple[int, float]] = []
    long_fails: list[tuple[int, float]] = []
    for job in jsel.order(twin.queue):
        size = job.size
        if job is head or size > twin.free_total:
            continue
        mem = job.mem
        if short_fails and dominated(short_fails, size, mem):
            continue  # cannot start at all, so not as a long job either
        if now + job.req_ops / max_speed <= shadow:
            alloc = rsel.allocate(job, ranked=ranked)
            if alloc is None:
                add_fail(short_fails, size, mem)
                continue
            if uniform or now + job.req_ops / min(p.speed * p.factor for p, _ in alloc) <= shadow:
                twin.start(job, alloc)
                held = held - size if held > size else 0
                if check is not None:
                    check(twin, head, rsel, (shadow, held), limits, alloc, False)
                continue
        # cores for a job past the shadow time: the free ones less the held ones
        if size > twin.free_total - held or (long_fails and dominated(long_fails, size, mem)):
            continue
        if limits is None:
            limits = held_caps(ranked, held)
        alloc = rsel.allocate(job, limits, no_mem, ranked=ranked)
        if alloc is None:
            add_fail(long_fails, size, mem)
            continue
        # (the caps never change: a capped processor has no core a job past the shadow time may take)
        twin.start(job, alloc)
        if check is not None:
            check(twin, head, rsel, (shadow, held), limits, alloc, True)
        if twin.free_total == 0:
            break
