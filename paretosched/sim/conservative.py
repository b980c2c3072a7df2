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
plain counts (`consplan.count_pass`), and a job that cannot move earlier costs one test (the most
free cores at any step before its slot), so a decision costs the queue, not a re-plan of it.

A reservation's start may coincide with no event (jobs overran their estimates, or a job of no
duration ended at once), so the twin is asked for a decision at the earliest one (`Twin.wake_at`).
A job due now starts on the processor groups it was planned on; if a running job overran and a
kept reservation lost its cores, every job is placed afresh at its earliest slot for that pass.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from typing import TYPE_CHECKING, Any

import numpy as np

from paretosched.sim.consplan import Plan, count_pass, hold_end, limits_in_rank, wake
from paretosched.sim.endorder import end_order
from paretosched.sim.policies import JobSelector, ResourceSelector
from paretosched.sim.taking import power_rank

if TYPE_CHECKING:
    from paretosched.sim.twin import Twin

_least = np.minimum.reduce
_add = np.add.reduce


class Profile:
    """Free cores per processor group (and memory per node) over time, as steps starting at `times`.

    Processors of the same speed are interchangeable for a plan when their node's memory is no
    limit (a group per speed), else within their node (a group per node and speed): counting per
    group rather than per processor is what makes a homogeneous platform plan as textbook
    conservative backfilling does, by counts alone. Built at each decision from the running jobs;
    the queued jobs' reservations are then held in it (`Plan.apply`).
    """

    def __init__(self, twin: Twin, ranked: list[Any], cache: _Cache, holds: list[Any]) -> None:
        now = twin.now
        order = end_order(twin)
        self.bounded = not order.unbounded_mem
        self.group_of, self.members = cache.groups(ranked)
        ends = {max(now, order.est[j]) for j in twin.running}
        # row 0 holds what is free now; jobs past their estimate release at `now` too, but in a
        # row of their own after it (they hold their cores until they really end); the kept
        # reservations (`holds`: start, end, then `_vec`'s arrays) are held here in one go
        later = {h[1] for h in holds} | {h[0] for h in holds if h[0] > now}
        self.times = [now] + sorted(ends | later)
        row = {t: i for i, t in enumerate(self.times) if i}
        group_of = self.group_of
        cores = np.zeros((len(self.times), len(self.members)), dtype=np.int64)
        for p in order.with_free_cores():
            cores[0, group_of[p.idx]] += len(p.free)
        mem = np.zeros((len(self.times), len(twin.nodes))) if self.bounded else None
        if mem is not None:
            mem[0] = [n.mem_free for n in twin.nodes]
        for job in twin.running:
            i = row[max(now, order.est[job])]
            for g, k, node, m in cache.parts(job, group_of):
                cores[i, g] += k
                if mem is not None and m > 0:
                    mem[i, node] += m
        self.free_now = cores[0].copy()  # each group's free cores now (before reservations)
        self.mem_now = mem[0].copy() if mem is not None else None
        if holds:
            a = [0 if h[0] <= now else row[h[0]] for h in holds]
            b = [row[h[1]] for h in holds]
            gs = np.concatenate([h[2] for h in holds])
            ks = np.concatenate([h[3] for h in holds])
            n = [len(h[2]) for h in holds]
            np.subtract.at(cores, (np.repeat(a, n), gs), ks)
            np.add.at(cores, (np.repeat(b, n), gs), ks)
            if mem is not None:
                nodes = np.concatenate([h[4] for h in holds])
                memk = np.concatenate([h[5] for h in holds])
                n = [len(h[4]) for h in holds]
                np.subtract.at(mem, (np.repeat(a, n), nodes), memk)
                np.add.at(mem, (np.repeat(b, n), nodes), memk)
        self.cores = np.cumsum(cores, axis=0)
        self.mem = np.cumsum(mem, axis=0) if mem is not None else None
        self._totals: list[int] | None = None

    def candidates(self, size: int, duration: float, before: int) -> Any:
        """The rows before `before` where a job of `size` cores could start for `duration`,
        counting all groups together (a necessary condition, vectorised; each is then checked
        per group)."""
        times = np.asarray(self.times)
        m = len(times)
        rows = np.arange(m)
        ends = np.maximum(np.searchsorted(times, times + duration, side="left"), rows + 1)
        bad = np.where(self.cores.sum(axis=1) < size, rows, m)
        next_bad = np.minimum.accumulate(bad[::-1])[::-1]  # the first short row at or after each
        return np.flatnonzero(next_bad[:before] >= ends[:before])

    def most_before(self, before: int) -> int:
        """The most free cores (all groups together) at any step before row `before`."""
        if self._totals is None:
            self._totals = self.cores.sum(axis=1).tolist()
        return max(self._totals[:before]) if before else -1

    def window(self, i: int, duration: float) -> int:
        """The end (exclusive) of the rows a job starting at row `i` for `duration` spans."""
        return bisect_left(self.times, self.times[i] + duration, lo=i + 1)

    def split(self, t: float) -> int:
        """The row starting at `t`, made by splitting the step that holds it if needed."""
        times = self.times
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t:
            return i
        insort(times, t)
        c = self.cores
        self.cores = np.concatenate((c[:i], c[i - 1:i], c[i:]))
        if self.mem is not None:
            mm = self.mem
            self.mem = np.concatenate((mm[:i], mm[i - 1:i], mm[i:]))
        return i

    def hold(self, t0: float, t1: float, vec: Any, sign: int = 1, row: int | None = None) -> None:
        """Take (sign 1) or give back (-1) `vec` (`_vec`'s arrays) over [t0, t1), from row `row`
        when given (a row of jobs past their estimate shares now with row 0), else from `t0`'s row
        (row 0 for a reservation that is due)."""
        start = row if row is not None else 0 if t0 <= self.times[0] else self.split(t0)
        end = self.split(t1)
        gs, ks, nodes, memk = vec
        self.cores[start:end, gs] -= sign * ks  # groups, and nodes, appear once in a vec
        if self.mem is not None and len(nodes):
            self.mem[start:end, nodes] -= sign * memk
        self._totals = None

    def limits(self, cap: Any) -> dict[int, int]:
        """Per-processor caps for a job starting now: each group's cap, given to its processors'
        free cores in rank order (only caps below a processor's free cores are listed)."""
        short = np.flatnonzero(cap < self.free_now)  # the other groups' caps limit nothing
        return limits_in_rank(self.members, cap.tolist(), short.tolist())


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
        return
    group_of, members = cache.groups(ranked)
    order = end_order(twin)
    if len(members) == 1 and order.unbounded_mem:
        count_pass(twin, jsel, rsel, plan, members, compress)
        return
    now = twin.now
    res = plan.res
    # a reservation whose start has passed (jobs overran) is made afresh: not held
    prof = Profile(twin, ranked, cache, [r[:6] for r in res.values() if r[0] >= now])
    # a kept reservation can only have lost its cores when jobs overran their estimates (or sped
    # down): then every job is placed afresh this pass, at its earliest slot given the others
    broken = bool((prof.cores < 0).any()) or (prof.mem is not None and bool((prof.mem < -1e-6).any()))
    slowest = plan.slowest
    group_speed = [m[0].speed for m in prof.members]
    group_node = [m[0].node for m in prof.members]
    for job in jsel.order(twin.queue):
        before = len(prof.times)
        old = res.get(job)
        if old is not None:
            t0, t1 = old[0], old[1]
            if t0 > twin.now and not broken:
                if not compress:
                    continue  # nothing ended or began since the last decision: it cannot move
                before = bisect_left(prof.times, t0)
                if prof.most_before(before) < job.size:
                    continue  # cannot move earlier: its reservation stays as it is
            vec = old[2:6]
            if t0 >= now:
                prof.hold(t0, t1, vec, sign=-1)
        longest = job.req_ops / slowest
        if old is not None and old[0] == now and not broken:
            # due now: it starts on the groups it was planned on, so it runs no longer than the plan
            # holds (the cores of another group could be slower, and later plans start at its end)
            j = max(bisect_left(prof.times, old[1], lo=1), 1)
            want = np.zeros(len(prof.members), dtype=np.int64)
            want[vec[0]] = vec[1]
            if _start_now(twin, rsel, prof, job, np.minimum(prof.cores[0:j].min(axis=0), want),
                          prof.mem[0:j].min(axis=0) if prof.mem is not None else None):
                res.pop(job, None)
                continue
        placed = False
        for i in prof.candidates(job.size, longest, before).tolist():
            j = prof.window(i, longest)
            # the ufuncs' reduce rather than the methods, which wrap it: this runs for every row
            # that passes the totals, hundreds of thousands of times in a long window
            cap = _least(prof.cores[i:j], axis=0)
            if int(_add(cap)) < job.size:
                continue
            mcap = prof.mem[i:j].min(axis=0) if prof.mem is not None else None
            if i == 0:
                if _start_now(twin, rsel, prof, job, cap, mcap):
                    res.pop(job, None)
                    placed = True
                    break
                continue
            take = _take_counts(range(len(prof.members)), group_node, job.size, job.mem, cap, mcap)
            if take is None:
                continue
            t = prof.times[i]
            twin.note_reservation(job, t)
            t_end = hold_end(t, job.req_ops / min(group_speed[g] for g, _, _ in take))
            vec = _vec(take, job.mem)
            res[job] = (t, t_end, *vec, [cache.keys[g] for g in vec[0].tolist()])
            prof.hold(t, t_end, vec, row=i)
            placed = True
            break
        if not placed and old is not None and old[0] >= now:
            prof.hold(old[0], old[1], vec)  # no earlier slot: it stays
    wake(twin, plan)


def _start_now(twin: Twin, rsel: ResourceSelector, prof: Profile, job: Any, cap: Any, mcap: Any) -> bool:
    """Start `job` now within `cap` cores per group and `mcap` memory per node, and hold its cores."""
    if job.size > twin.free_total or int(cap.sum()) < job.size:
        return False
    mem_limits = None
    if mcap is not None:  # only the caps below a node's free memory limit anything (a margin for
        # the float residue of the running sum: listing a cap that limits nothing is harmless)
        keep = np.flatnonzero(mcap <= prof.mem_now + 1e-6 * np.maximum(1.0, np.abs(prof.mem_now)))
        mem_limits = {i: float(mcap[i]) for i in keep.tolist()}
    alloc = rsel.allocate(job, prof.limits(cap), mem_limits)
    if alloc is None:
        return False
    duration = job.req_ops / min(p.speed * p.factor for p, _ in alloc)
    twin.start(job, alloc)
    for p, k in alloc:
        prof.free_now[prof.group_of[p.idx]] -= k
        if prof.mem_now is not None and job.mem > 0:
            prof.mem_now[p.node.idx] -= k * job.mem
    prof.hold(twin.now, hold_end(twin.now, duration), _vec([(prof.group_of[p.idx], p.node, k) for p, k in alloc],
                                                          job.mem))
    return True


def _vec(parts: list[tuple[int, Any, int]], mem: float) -> tuple[Any, Any, Any, Any]:
    """(groups, cores, nodes, memory) arrays of (group, node, cores) triples, each group and node once."""
    by_group: dict[int, int] = {}
    by_node: dict[int, float] = {}
    for g, node, k in parts:
        by_group[g] = by_group.get(g, 0) + k
        if mem > 0 and node.mem_cap < math.inf:
            by_node[node.idx] = by_node.get(node.idx, 0.0) + k * mem
    return (np.fromiter(by_group, np.int64, len(by_group)), np.fromiter(by_group.values(), np.int64, len(by_group)),
            np.fromiter(by_node, np.int64, len(by_node)), np.fromiter(by_node.values(), float, len(by_node)))


def _index_of(keys: list[tuple[float, int]], index: dict[tuple[float, int], int]) -> Any:
    return np.fromiter((index[k] for k in keys), np.int64, len(keys))


class _Cache:
    """What a twin's passes share: the plan, processor groups per ranking, each job's cores per group."""

    def __init__(self) -> None:
        self.plan = Plan()
        self._ranked: list[Any] | None = None
        self._groups: tuple[list[int], list[list[Any]]] = ([], [])
        self.keys: list[tuple[float, int]] = []         # each group's (speed, node or -1)
        self.index: dict[tuple[float, int], int] = {}   # and back
        self._parts: dict[Any, list[tuple[int, int, int, float]]] = {}

    def groups(self, ranked: list[Any]) -> tuple[list[int], list[list[Any]]]:
        """(group of each processor, each group's processors in rank order)."""
        if ranked is not self._ranked and (self._ranked is None or ranked != self._ranked):
            key_group: dict[tuple[float, int], int] = {}
            group_of = [0] * len(ranked)
            members: list[list[Any]] = []
            for p in ranked:
                key = (p.speed, p.node.idx if p.node.mem_cap < math.inf else -1)
                g = key_group.get(key)
                if g is None:
                    g = key_group[key] = len(members)
                    members.append([])
                group_of[p.idx] = g
                members[g].append(p)
            self._ranked, self._groups = list(ranked), (group_of, members)
            self.index = key_group
            self.keys = list(key_group)
            # a reservation keeps its groups' keys (speed, node): renumber its groups
            res = self.plan.res
            for job, r in res.items():
                if len(r) == 7:
                    res[job] = (r[0], r[1], _index_of(r[6], key_group), *r[3:])
            self._parts.clear()
        return self._groups

    def parts(self, job: Any, group_of: list[int]) -> list[tuple[int, int, int, float]]:
        """(group, cores, node, memory) per part of a running job."""
        parts = self._parts.get(job)
        if parts is None:
            if len(self._parts) > 4096:
                self._parts.clear()
            parts = self._parts[job] = [(group_of[g.proc.idx], len(g.cores), g.proc.node.idx,
                                         len(g.cores) * job.mem) for g in job.groups]
        return parts


def _platform_order(twin: Twin, rsel: ResourceSelector) -> list[Any]:
    if rsel.prefer_on:
        return sorted(twin.procs, key=power_rank)
    return twin.procs


def _take_counts(groups: Any, group_node: list[Any], need: int, mem: float, cap: Any,
                 mcap: Any) -> list[tuple[int, Any, int]] | None:
    """The greedy in rank order on counts: cores within each group's cap, whole cores per node memory."""
    out = []
    node_mem: dict[int, float] = {}
    for g in groups:
        k = int(cap[g])
        if k <= 0:
            continue
        if k > need:
            k = need
        node = group_node[g]
        if mcap is not None and mem > 0 and node.mem_cap < math.inf:
            left = node_mem.get(node.idx, float(mcap[node.idx]))
            fit = int(left / mem + 1e-9)
            if fit < k:
                if fit <= 0:
                    continue
                k = fit
            node_mem[node.idx] = left - k * mem
        out.append((g, node, k))
        need -= k
        if not need:
            return out
    return None
