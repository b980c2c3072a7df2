"""Conservative backfilling (Mu'alem & Feitelson 2001) on a heterogeneous platform.

Every queued job holds a reservation, kept from one decision to the next (`Plan`): a start
time and cores per processor group, in an availability profile (free cores per processor group
and free memory per node over time) built from the free cores now, the running jobs' estimated
ends (`EndOrder`) and every other job's reservation. A job that arrives gets the earliest slot
in that profile; at each decision the plan is compressed the textbook way: in the job policy's
order each job may move to an earlier slot, given every other reservation, and never later. A
job whose slot is now starts, the resource policy choosing its cores within what the profile
leaves over its whole run, so it delays no reservation. A job only moves earlier when running
jobs end before their estimate, and no job is ever moved past its reservation to make room.

Durations come from requested operations: a job is placed with the slowest core of the platform
(its longest possible run, so it fits whatever cores it gets), then holds its planned cores for
its run on those. With exact estimates and no interference no job starts later than its first
reservation (a tested invariant); on a homogeneous platform this is textbook conservative
backfilling with compression (tested against a count-based reference), where the plan is kept in
plain counts (`plan.count_pass`), and a job that cannot move earlier costs one test (the most
free cores at any step before its slot), so a decision costs the queue, not a re-plan of it.
On groups (`profile.Profile`) a job is also skipped when the bound it kept from its last
search (the most free cores, all groups together, that any earlier start offered) plus every
core given back since early enough to matter is still below its size (`Plan.still_stuck`): it
cannot move, so the skip changes nothing (tested by a full count at every skip).

A reservation's start may coincide with no event (jobs overran their estimates, or a job of no
duration ended at once), so the twin is asked for a decision at the earliest one (`Twin.wake_at`).
A job due now starts on the processor groups it was planned on; if a running job overran and a
kept reservation lost its cores, every job is placed afresh at its earliest slot for that pass.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

import numpy as np

from paretosched.sim.backfill.conservative.kept import Cache as _Cache
from paretosched.sim.backfill.conservative.kept import still_fresh, verify_stuck
from paretosched.sim.backfill.conservative.kept import verify_free as _verify_free
from paretosched.sim.backfill.conservative.kept import verify_profile as _verify_profile
from paretosched.sim.backfill.conservative.kept import verify_totals as _verify_totals
from paretosched.sim.backfill.conservative.plan import Hold, Plan, Reservation, count_pass, hold_end, take_counts, wake
from paretosched.sim.backfill.conservative.profile import Profile, carry
from paretosched.sim.backfill.conservative.slots import CORES, least
from paretosched.sim.backfill.end_order import end_order
from paretosched.sim.placement.policies import JobSelector, ResourceSelector
from paretosched.sim.placement.taking import power_rank

if TYPE_CHECKING:
    from paretosched.sim.engine.twin import Twin


def conservative(twin: Twin, jsel: JobSelector, rsel: ResourceSelector) -> None:
    """Compress the plan in the job policy's order, place new jobs; start those whose slot is now."""
    # future cores are planned in the policy's order when it is static, else in platform order
    # (dynamic and random policies rank only what is free now); the start itself asks the policy
    ranked = rsel.ranked() if rsel.static else _platform_order(twin, rsel)
    cache = twin.sched_state.get("conservative")
    if cache is None:
        cache = twin.sched_state["conservative"] = _Cache()
    plan = cache.plan
    plan.keep_queued(twin.queue)
    if plan.slowest is None:
        plan.slowest = min(p.speed for p in twin.procs)
    queue = twin.queue
    compress = plan.compress(twin)
    while not plan.res and queue:
        # no reservation kept: the first job in order starts if it fits now, as it would in a
        # full pass (nothing is held in the future, so what is free now is its cap), for less
        job = jsel.head(queue)
        alloc = rsel.allocate(job) if job.size <= twin.free_total else None
        if alloc is None:
            break
        twin.start(job, alloc)
    if not queue:
        plan.stuck.clear()  # (none is kept with no reservation; the bounds count from a profile)
        return
    group_of, members = cache.groups(ranked)
    order = end_order(twin)
    if len(members) == 1 and order.unbounded_mem:
        count_pass(twin, jsel, rsel, plan, members, compress)
        return
    prof = _profile(twin, cache, ranked, order.est, compress)
    _place(twin, jsel, rsel, cache, prof, compress)
    if cache.verify:
        _verify_totals(prof)
    now = twin.now
    prof.held = {j: r for j, r in plan.res.items() if r.start >= now}
    cache.kept = prof
    wake(twin, plan)


def _profile(twin: Twin, cache: _Cache, ranked: list[Any], est: dict[Any, float], compress: bool) -> Profile:
    """This decision's profile: the last one moved on when only the time changed, else the last one
    carried forward by the changes since, else a build."""
    plan = cache.plan
    now = twin.now
    plan.count_given(twin, est)
    res = plan.res
    # a reservation whose start has passed (jobs overran) is made afresh: not held
    # (a dropped hold gives its cores back)
    passed = [(now, job.size) for job, r in res.items() if r.start < now]
    plan.given.extend(passed)
    holds = [r for r in res.values() if r.start >= now]
    kept, cache.kept = cache.kept, None
    # (a profile still holding a reservation whose start passed is not the one to use again)
    if kept is not None and not compress and not passed and still_fresh(kept, cache, twin, now, est, holds):
        prof = kept  # nothing changed since the last decision but the time: its profile, moved on
    else:
        # the last decision's profile brought forward by the changes since, else a build
        carried = carry(kept, twin, cache, res, est) if kept is not None and cache.carry else None
        prof = carried if carried is not None else Profile(twin, ranked, cache, holds)
        cache.made(twin, prof)
    if cache.verify:
        _verify_free(twin, prof)
        _verify_profile(prof, Profile(twin, ranked, cache, holds, kept=False))
    return prof


def _place(twin: Twin, jsel: JobSelector, rsel: ResourceSelector, cache: _Cache, prof: Profile,
           compress: bool) -> None:
    """Each queued job in the policy's order: kept where it cannot move earlier, else placed at its
    earliest slot (started if that is now)."""
    # One function, not split further: it runs for every queued job at every decision, and its
    # twenty locals would travel through calls per job.
    now = twin.now
    plan = cache.plan
    res = plan.res
    # a kept reservation can only have lost its cores when jobs overran their estimates (or sped
    # down): then every job is placed afresh this pass, at its earliest slot given the others
    broken = int(prof.cores.min()) < 0 or prof.mem_short()
    slowest = plan.slowest
    assert slowest is not None  # (set by `conservative` before any pass)
    group_speed, group_node = cache.group_speed, cache.group_node
    stuck = plan.stuck
    for job in jsel.order(twin.queue):
        size = job.size
        before = len(prof.times)
        old = res.get(job)
        found = lazy = None
        if old is not None:
            t0, t1 = old.start, old.end
            if t0 > twin.now and not broken:
                if not compress:
                    continue  # nothing ended or began since the last decision: it cannot move
                before = bisect_left(prof.times, t0)
                most = prof.most_before(before)
                if most < size:
                    stuck[job] = (len(plan.given), most)
                    continue  # cannot move earlier: its reservation stays as it is
                if plan.still_stuck(job, t0 + job.req_ops / slowest):
                    if cache.verify:
                        verify_stuck(prof, job, old, before, slowest)
                    continue  # no start before its slot had its cores, and too few were given back since
                # its own reservation counted as free (what giving it back would make the totals)
                own = (before, bisect_left(prof.times, t1, lo=before), old.hold.dense)
                most, first, below = prof.core_bound(size, job.req_ops / slowest, before, own)
                if most < size:
                    stuck[job] = (len(plan.given), most)
                    if cache.verify:
                        verify_stuck(prof, job, old, before, slowest)
                    continue  # every start before its slot spans a stretch without its cores
                found = prof.candidates(size, job.req_ops / slowest, before, own, first, below)
                if not found[0]:
                    stuck[job] = (len(plan.given), max(found[2]))
                    continue  # no start before its slot has the cores (all groups together, or sampled)
            vec = old.hold
            if found is not None and not len(vec.nodes):
                # a kept job searched: its cores given back in the matrix alone while its rows are
                # counted, and in the totals once one has the cores (a third that find none take
                # them back with one update, no row split looked up and no totals walked twice)
                lazy = own
                prof.cores[own[0]:own[1]] += own[2]
            elif t0 >= now:
                prof.hold(t0, t1, vec, size, sign=-1)
        longest = job.req_ops / slowest
        if old is not None and old.start == now and not broken:
            # due now: it starts on the groups it was planned on, so it runs no longer than the plan
            # holds (the cores of another group could be slower, and later plans start at its end)
            j = max(bisect_left(prof.times, old.end, lo=1), 1)
            if _start_now(twin, rsel, prof, plan, job, np.minimum(prof.cores[0:j].min(axis=0), vec.dense),
                          prof.mem_cap(0, j)):
                res.pop(job, None)
                stuck.pop(job, None)
                plan.given.append((now, size))
                continue
        placed = -1  # the row it was placed at
        most = -1    # the most free cores (all groups) any start before it offers, counted per group
        if found is not None:
            rows, ends, short = found
            slots = prof.counts(rows, ends)
        else:
            short = [-1] * len(prof.times)
            start = 0
            if broken and old is not None and old.start > now:
                # placed afresh: a start before its old slot (its own cores given back) first
                # needs a stretch that every such start spans to have the cores (mostly none has)
                start = bisect_left(prof.times, old.start)
                bound, first, below = prof.core_bound(size, longest, start, None)
                start, most = (start, bound) if bound < size else (first, below)
            slots = prof.earliest(size, longest, short, start)
        for i, j, n, cap in slots:
            if n < size:
                if n > most:
                    most = n
                continue
            if lazy is not None:  # it may be placed: given back in the totals too (as `hold` does)
                prof.give_totals(lazy[0], lazy[1], size)
                lazy = None
            if cap is None:
                cap = least(prof.cores[i:j], axis=0)
            mcap = prof.mem_cap(i, j)
            if i == 0:
                if _start_now(twin, rsel, prof, plan, job, cap, mcap):
                    res.pop(job, None)
                    placed = 0
                    break
                most = size  # refused for other reasons than counts: no bound
                continue
            take = take_counts(group_node, size, job.mem, cap, mcap)
            if take is None:
                most = size
                continue
            t = prof.times[i]
            twin.note_reservation(job, t)
            t_end = hold_end(t, job.req_ops / min(group_speed[g] for g, _, _ in take))
            vec = _take_vec(take, job.mem, len(group_node))
            res[job] = Reservation(t, t_end, vec)
            prof.hold(t, t_end, vec, size, row=i)
            placed = i
            break
        held = old is not None and old.start >= now
        if lazy is not None:
            prof.cores[lazy[0]:lazy[1]] -= lazy[2]  # no row had its cores: it stays
        elif placed < 0 and held and old is not None:
            prof.hold(old.start, old.end, vec, size)  # no earlier slot: it stays
        elif placed >= 0 and held and old is not None:
            plan.given.append((old.start, size))  # its old slot is free
        if placed == 0:
            stuck.pop(job, None)
        elif job in res:
            limit = placed if placed > 0 else before
            if limit:
                most = max(most, max(short[:limit]))
            stuck[job] = (len(plan.given), most)


def _start_now(twin: Twin, rsel: ResourceSelector, prof: Profile, plan: Plan, job: Any, cap: Any,
               mcap: Any) -> bool:
    """Start `job` now within `cap` cores per group and `mcap` memory per node, and hold its cores."""
    if job.size > twin.free_total or int(cap.sum()) < job.size:
        return False
    mem_limits = None
    if mcap is not None and job.mem > 0:  # (the allocator reads no memory limit for a job without
        # memory) only the caps below a node's free memory limit anything (a margin for
        # the float residue of the running sum: listing a cap that limits nothing is harmless)
        keep = np.flatnonzero(mcap <= prof.mem_now + 1e-6 * np.maximum(1.0, np.abs(prof.mem_now)))
        mem_limits = dict(zip(keep.tolist(), mcap[keep].tolist()))
    alloc = rsel.allocate(job, prof.limits(cap), mem_limits)
    if alloc is None:
        return False
    duration = job.req_ops / min(p.speed * p.factor for p, _ in alloc)
    twin.start(job, alloc)
    for p, k in alloc:
        prof.free_now[prof.group_of[p.idx]] -= k
        if prof.mem_now is not None and job.mem > 0:
            prof.mem_now[p.node.idx] -= k * job.mem
    t_end = hold_end(twin.now, duration)
    plan.release[job] = t_end
    vec = _vec([(prof.group_of[p.idx], p.node, k) for p, k in alloc], job.mem, len(prof.members))
    prof.hold(twin.now, t_end, vec, job.size)
    prof.started.append((t_end, vec.dense))
    return True


def _vec(parts: list[tuple[int, Any, int]], mem: float, n_groups: int) -> Hold:
    """The `Hold` (groups, cores, nodes, memory arrays) of (group, node, cores) triples, each group and node
    once, and the cores as a row of all `n_groups` groups (what a profile adds and takes)."""
    by_group: dict[int, int] = {}
    by_node: dict[int, float] = {}
    for g, node, k in parts:
        by_group[g] = by_group.get(g, 0) + k
        if mem > 0 and node.mem_cap < math.inf:
            by_node[node.idx] = by_node.get(node.idx, 0.0) + k * mem
    gs = np.fromiter(by_group, np.int64, len(by_group))
    ks = np.fromiter(by_group.values(), CORES, len(by_group))
    dense = np.zeros(n_groups, dtype=CORES)
    dense[gs] = ks
    nodes = np.fromiter(by_node, np.int64, len(by_node))
    return Hold(gs, ks, nodes, np.fromiter(by_node.values(), float, len(by_node)), dense)


def _take_vec(take: list[tuple[int, Any, int]], mem: float, n_groups: int) -> Hold:
    """`_vec` of a take (`take_counts`: each group once) for a job without memory, without
    summing per group and node."""
    if mem > 0:
        return _vec(take, mem, n_groups)
    gs = np.array([g for g, _, _ in take], dtype=np.int64)
    ks = np.array([k for _, _, k in take], dtype=CORES)
    dense = np.zeros(n_groups, dtype=CORES)
    dense[gs] = ks
    return Hold(gs, ks, _NO_NODES, _NO_MEM, dense)


# a job without memory holds none on any node (shared: never written)
_NO_NODES = np.zeros(0, dtype=np.int64)
_NO_MEM = np.zeros(0)
_NO_NODES.flags.writeable = _NO_MEM.flags.writeable = False


def _platform_order(twin: Twin, rsel: ResourceSelector) -> list[Any]:
    if rsel.prefer_on:
        return sorted(twin.procs, key=power_rank)
    return twin.procs
