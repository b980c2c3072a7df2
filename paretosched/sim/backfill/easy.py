"""EASY backfilling on a heterogeneous platform.

The blocked head job gets a reservation: the shadow time is the earliest estimated end of
running jobs after which the head fits, where a running job's estimated end comes from its
*requested* operations left and the current speed of its cores (what a real scheduler knows).
The reserved cores are, preferably, cores those jobs release (then free-now cores), which on a
homogeneous machine is classic count-based EASY: backfilled jobs may use the "extra" cores.
Another queued job may start now if its own estimate (requested time on the cores it would get)
ends by the shadow time, or if it leaves the reserved cores and the head's memory untouched.
With exact estimates and no interference the head never starts later than its reservation (a tested
invariant); with interference, backfilled jobs may slow running ones.

A pass does not rebuild what it needs: running jobs stay ordered by estimated end, and under a
static ranking with no memory in play the cores released up to the shadow time are kept between
passes (`end_order.py`), so a pass costs the queue it examines and the changes since the last one.
On one-core processors without memory limits the reservation is a count (`easy_count.py`).
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from paretosched.sim.backfill.easy_count import backfill_counted
from paretosched.sim.backfill.end_order import EndOrder, end_order, raw_end
from paretosched.sim.placement.policies import JobSelector, RandomJob, ResourceSelector
from paretosched.sim.placement.taking import take_once

if TYPE_CHECKING:
    from paretosched.sim.engine.twin import Twin

_size = attrgetter("size")


def estimated_end(job: Any, now: float) -> float:
    """When the scheduler expects `job` to end: requested operations left over current speed."""
    return max(now, raw_end(job))


Reservation = tuple[float, dict[int, int], dict[int, float]]


def reservation(twin: Twin, head: Any, rsel: ResourceSelector, incremental: bool = True) -> Reservation | None:
    """(shadow time, spare cores per processor, spare memory per node) for the head job.

    Spare = what other jobs may still hold at the shadow time without touching the head's share.
    None when the head can never fit (cannot happen for jobs the loader accepted).
    `incremental=False` always takes the general pass (tests compare the two).
    """
    now = twin.now
    order = end_order(twin)
    # Without memory in play the head fits once enough cores are free (the allocator then always
    # succeeds): count them first and release only the jobs before that point.
    count_only = head.mem <= 0 or order.unbounded_mem
    first_try = 0
    if count_only:
        short = head.size - twin.free_total
        prefix = []
        for first_try, job in enumerate(order.walk(now)):  # noqa: B007 (read after the loop)
            prefix.append(job)
            short -= job.size
            if short <= 0:
                break
        if rsel.static and incremental:
            return _static_count_reservation(twin, head, rsel, order, prefix)
    return _walk_reservation(twin, head, rsel, order, count_only, first_try)


def _walk_reservation(twin: Twin, head: Any, rsel: ResourceSelector, order: EndOrder, count_only: bool,
                      first_try: int) -> Reservation | None:
    """The general pass: release running jobs into the free lists in order and ask the allocator.

    With memory in play, the cores the head could use on each node (free cores, bounded by node
    memory) are counted, and the allocator is asked only once their total suffices.
    """
    now = twin.now
    est = order.est
    released_cores: dict[Any, int] = {}
    released_mem: dict[Any, float] = {}
    hmem = head.mem
    node_free: dict[Any, int] = {}
    usable: dict[Any, int] = {}
    usable_total = 0
    if not count_only:
        for node in twin.nodes:
            n = node.ncores - node.busy  # busy counts cores held by running and booting jobs
            node_free[node] = n
            u = n if node.mem_free == math.inf else _usable(n, node.mem_free, hmem)
            usable[node] = u
            usable_total += u
    saved: list[tuple[Any, int]] = []
    saved_mem: dict[Any, float] = {}
    shadow = None
    alloc = None
    try:
        for i, job in enumerate(order.walk(now)):
            for g in job.groups:
                p = g.proc
                k = len(g.cores)
                if p not in released_cores:
                    saved.append((p, len(p.free)))
                released_cores[p] = released_cores.get(p, 0) + k
                p.free.extend(g.cores)  # temporarily, to ask the allocator; restored below
                node = p.node
                if job.mem > 0:
                    if node not in saved_mem:
                        saved_mem[node] = node.mem_free
                    node.mem_free += k * job.mem
                    released_mem[node] = released_mem.get(node, 0.0) + k * job.mem
                if not count_only:
                    node_free[node] += k
                    u = _usable(node_free[node], node.mem_free, hmem)
                    usable_total += u - usable[node]
                    usable[node] = u
            if i < first_try or (not count_only and usable_total < head.size):
                continue
            # Reserve preferably cores released by then, in the policy's order: free-now cores stay
            # available to backfilling (on a homogeneous machine this is classic count-based EASY).
            # The head still gets its cores by the policy when it starts; this only sets the guarantee.
            ranked = rsel.ranked()
            order_ = [p for p in ranked if p in released_cores] + [p for p in ranked if p not in released_cores]
            alloc = take_once(order_, head.size, head.mem, None, None)
            if alloc is not None:
                shadow = max(now, est[job])
                break
    finally:
        for p, n in saved:
            del p.free[n:]
        for node, m in saved_mem.items():
            node.mem_free = m
    if alloc is None or shadow is None:
        return None
    limits: dict[int, int] = {}
    for p, k in released_cores.items():
        limits[p.idx] = len(p.free) + k
    mem_limits: dict[int, float] = {}
    for node, m in released_mem.items():
        mem_limits[node.idx] = node.mem_free + m
    for p, k in alloc:
        limits[p.idx] = limits.get(p.idx, len(p.free)) - k
        if head.mem > 0:
            mem_limits[p.node.idx] = mem_limits.get(p.node.idx, p.node.mem_free) - k * head.mem
    return shadow, limits, mem_limits


def _static_count_reservation(twin: Twin, head: Any, rsel: ResourceSelector, order: EndOrder,
                              prefix: list[Any]) -> Reservation | None:
    """`reservation` when only cores count and the ranking does not depend on free cores.

    The same reservation as releasing the `prefix` jobs into the free lists and asking the
    allocator, from counts kept between passes: the head takes, in rank order, the processors
    those jobs release (their free cores plus the released ones), then other processors' free
    cores. Caps are given only to processors with a free core now: a backfilling allocator never
    looks at the others' (resources only shrink during a pass), so their caps cannot matter.
    """
    if not prefix:
        return None
    now = twin.now
    order.set_prefix(prefix)
    released = order.released
    free_procs = order.with_free_cores()
    need = head.size
    if twin.free_total + order.released_total < need:
        return None  # the head never fits (cannot happen for jobs the loader accepted)
    total = order.released_total  # cores of the released processors at the shadow time
    # the released processors with a free core now (on single-core processors, none): the rest
    # of each set is walked only where it matters
    if len(released) < len(free_procs):
        both = [p for p in released if p in free_procs]
    else:
        both = [p for p in free_procs if p in released]
    for p in both:
        total += len(p.free)
    limits: dict[int, int] = {}
    if total <= need:  # the head takes every released processor whole, then free cores elsewhere
        need -= total
        for p in both:
            limits[p.idx] = 0
        if need:
            pos = rsel.rank_pos()
            others = [p for p in free_procs if p not in released] if both else list(free_procs)
            others.sort(key=pos)
            for p in others:
                n = len(p.free)
                t = n if n < need else need
                limits[p.idx] = n - t
                need -= t
                if not need:
                    break
    elif both:  # the head's share ends within the released processors, in rank order
        shared = set(both)
        for p in sorted(released, key=rsel.rank_pos()):
            n = len(p.free) + released[p]
            t = n if n < need else need
            need -= t
            if p in shared:
                limits[p.idx] = n - t
            if not need:
                break  # the caps of the processors after it would be their free cores: no cap
    mem_limits: dict[int, float] = {}
    if not order.unbounded_mem:  # the jobs' released memory, summed in order as the general pass does
        for job in prefix:
            jmem = job.mem
            if jmem > 0:
                for g in job.groups:
                    node = g.proc.node
                    mem_limits[node.idx] = mem_limits.get(node.idx, 0.0) + len(g.cores) * jmem
        for i, m in mem_limits.items():
            mem_limits[i] = twin.nodes[i].mem_free + m
    # head.mem > 0 only with unbounded memory here: the head's share of node memory is no limit
    return max(now, order.est[prefix[-1]]), limits, mem_limits


def _usable(free_cores: int, mem_free: float, mem: float) -> int:
    if mem <= 0 or mem_free == math.inf:
        return free_cores
    return min(free_cores, max(int(math.floor(mem_free / mem + 1e-9)), 0))


def _dominated(fails: list[tuple[int, float]], size: int, mem: float) -> bool:
    return any(fs <= size and fm <= mem for fs, fm in fails)


def _add_fail(fails: list[tuple[int, float]], size: int, mem: float) -> None:
    """Keep only the minimal failures: a larger one is implied by a smaller one."""
    fails[:] = [(fs, fm) for fs, fm in fails if not (fs >= size and fm >= mem)]
    fails.append((size, mem))


def _another_fits(queue: list[Any], head: Any, free: int) -> bool:
    """Whether a queued job other than `head` asks at most `free` cores (the smallest size found at
    C speed first: the queue is deep and this is asked at every blocked decision)."""
    if min(map(_size, queue)) > free:
        return False
    return head.size > free or any(j.size <= free and j is not head for j in queue)


COUNTED = True  # `easy_count.backfill_counted` where it applies (tests compare schedules with it off)


def backfill(twin: Twin, head: Any, jsel: JobSelector, rsel: ResourceSelector) -> None:
    """Start every queued job that does not delay the head's reservation."""
    # nothing could start: the reservation is wanted only for the record (a random job order still
    # draws its order below whenever the reservation exists, so the run's stream stays the same)
    if not twin.record and not isinstance(jsel, RandomJob) and not _another_fits(twin.queue, head, twin.free_total):
        return
    if COUNTED and rsel.static and rsel.bw_cap is None:
        order = end_order(twin)
        if order.one_core and order.unbounded_mem:
            backfill_counted(twin, head, jsel, rsel, order)
            return
    res = reservation(twin, head, rsel)
    if res is None:
        return
    shadow, limits, mem_limits = res
    twin.note_reservation(head, shadow)
    now = twin.now
    # only static rankings are reused (dynamic and random policies rank inside `allocate`)
    ranked = rsel.ranked() if rsel.static else None
    long_cap = _long_capacity(twin, limits)
    # Resources only shrink during a pass, so a (size, memory) that failed once fails for every
    # larger job: these lists prune most allocator calls when the queue is deep.
    short_fails: list[tuple[int, float]] = []
    long_fails: list[tuple[int, float]] = []
    for job in jsel.order(twin.queue):
        if job is head or job.size > twin.free_total:
            continue
        size, mem = job.size, job.mem
        if short_fails and _dominated(short_fails, size, mem):
            continue  # cannot start at all, so not as a long job either
        if now + job.req_ops / rsel.max_speed <= shadow:
            alloc = rsel.allocate(job, ranked=ranked)
            if alloc is None:
                _add_fail(short_fails, size, mem)
                continue
            slowest = min(p.speed * p.factor for p, _ in alloc)
            if now + job.req_ops / slowest <= shadow:
                before = _held(twin, alloc, limits)
                twin.start(job, alloc)
                long_cap += before - _held(twin, alloc, limits) - size
                continue
        if size > long_cap or (long_fails and _dominated(long_fails, size, mem)):
            continue
        alloc = rsel.allocate(job, limits, mem_limits, ranked=ranked)
        if alloc is None:
            _add_fail(long_fails, size, mem)
            continue
        before = _held(twin, alloc, limits)
        for p, k in alloc:
            if p.idx in limits:
                limits[p.idx] -= k
            if mem > 0 and p.node.idx in mem_limits:
                mem_limits[p.node.idx] -= k * mem
        twin.start(job, alloc)
        if twin.free_total == 0:
            break
        long_cap += before - _held(twin, alloc, limits) - size


def _held(twin: Twin, alloc: list[Any], limits: dict[int, int]) -> int:
    """The free cores the reservation keeps on `alloc`'s processors (`_long_capacity`'s terms for
    them): a start changes only these, so the capacity is updated, not recounted."""
    held = 0
    for p, _ in alloc:
        lim = limits.get(p.idx)
        if lim is not None:
            n = len(p.free)
            if lim < n:
                held += n - (lim if lim > 0 else 0)
    return held


def _long_capacity(twin: Twin, limits: dict[int, int]) -> int:
    """Cores a job running past the shadow time could get, memory aside: the free cores less
    those the reservation keeps (only capped processors are visited, not the whole platform)."""
    procs = twin.procs
    total = twin.free_total
    for idx, lim in limits.items():
        n = len(procs[idx].free)
        if lim < n:
            total -= n - (lim if lim > 0 else 0)
    return total
