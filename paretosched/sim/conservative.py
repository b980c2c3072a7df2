"""Conservative backfilling (Mu'alem & Feitelson 2001) on a heterogeneous platform.

At each decision every queued job, in the job policy's order, gets a reservation: the earliest
time at which it fits in an availability profile (free cores per processor and free memory per
node over time) built from the free cores now, the running jobs' estimated ends (`EndOrder`) and
the reservations of the jobs before it. A job whose reservation is now starts now, with the
resource policy choosing its cores within what the profile leaves over its whole run, so it
delays none of the reservations before it. The plan is made afresh at each decision (the jobs
keep their order), so a job only moves earlier when running jobs end before their estimate.

Durations come from requested operations: a job is placed with the slowest core of the platform
(its longest possible run, so it fits whatever cores it gets), then holds its planned cores for
its run on those. With exact estimates and no interference no job starts later than its first
reservation (a tested invariant); on a homogeneous platform this is textbook conservative
backfilling (tested against a reference).
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from typing import TYPE_CHECKING, Any


import numpy as np

from paretosched.sim.endorder import end_order
from paretosched.sim.policies import JobSelector, ResourceSelector
from paretosched.sim.taking import power_rank

if TYPE_CHECKING:
    from paretosched.sim.twin import Twin


class Profile:
    """Free cores per processor group (and memory per node) over time, as steps starting at `times`.

    Processors of the same speed are interchangeable for a plan when their node's memory is no
    limit (a group per speed), else within their node (a group per node and speed): counting per
    group rather than per processor is what makes a homogeneous platform plan as textbook
    conservative backfilling does, by counts alone.
    """

    def __init__(self, twin: Twin, ranked: list[Any], cache: _Cache) -> None:
        now = twin.now
        order = end_order(twin)
        self.bounded = not order.unbounded_mem
        self.group_of, self.members = cache.groups(ranked)
        ends = sorted({max(now, order.est[j]) for j in twin.running})
        # row 0 holds what is free now; jobs past their estimate release at `now` too, but in a
        # row of their own after it (they hold their cores until they really end)
        self.times = [now] + ends
        row = {t: i + 1 for i, t in enumerate(ends)}
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
        self.cores = np.cumsum(cores, axis=0)
        self.mem = np.cumsum(mem, axis=0) if mem is not None else None

    def candidates(self, size: int, duration: float) -> Any:
        """The rows where a job of `size` cores could start for `duration`, counting all groups
        together (a necessary condition, vectorised; each is then checked per group)."""
        times = np.asarray(self.times)
        m = len(times)
        rows = np.arange(m)
        ends = np.maximum(np.searchsorted(times, times + duration, side="left"), rows + 1)
        bad = np.where(self.cores.sum(axis=1) < size, rows, m)
        next_bad = np.minimum.accumulate(bad[::-1])[::-1]  # the first short row at or after each
        return np.flatnonzero(next_bad >= ends)

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

    def hold(self, start: int, duration: float, alloc: list[tuple[int, Any, int]], mem: float) -> None:
        """Take `alloc` ((group, node, cores) triples) from row `start` for `duration`.

        A job of no duration holds its cores for an instant (the next float), so nothing that
        runs across that instant can take them."""
        t = self.times[start]
        end = self.split(t + duration if duration > 0 else math.nextafter(t, math.inf))
        for g, node, k in alloc:
            self.cores[start:end, g] -= k
            if self.mem is not None and mem > 0:
                self.mem[start:end, node.idx] -= k * mem

    def limits(self, cap: Any) -> dict[int, int]:
        """Per-processor caps for a job starting now: each group's cap, given to its processors'
        free cores in rank order (only caps below a processor's free cores are listed)."""
        out = {}
        for g, members in enumerate(self.members):
            left = int(cap[g])
            for p in members:
                n = len(p.free)
                if n:
                    k = n if n < left else left
                    if k < n:
                        out[p.idx] = k
                    left -= k

        return out


def conservative(twin: Twin, jsel: JobSelector, rsel: ResourceSelector) -> None:
    """Reserve every queued job in order; start those whose reservation is now."""
    if twin.free_total == 0 and not twin.record:
        return  # nothing can start now (reservations are only kept for the record)
    # future cores are planned in the policy's order when it is static, else in platform order
    # (dynamic and random policies rank only what is free now); the start itself asks the policy
    ranked = rsel.ranked() if rsel.static else _platform_order(twin, rsel)
    cache = twin.sched_state.get("conservative")
    if cache is None:
        cache = twin.sched_state["conservative"] = _Cache()
    prof = Profile(twin, ranked, cache)
    slowest = min(p.speed for p in twin.procs)
    group_speed = [m[0].speed for m in prof.members]
    group_node = [m[0].node for m in prof.members]
    queue = jsel.order(twin.queue)
    # the smallest job from each position on: once it cannot fit in what is free now, no later
    # job starts now, and later reservations bind nobody before them (kept only for the record)
    smallest = [0] * len(queue)
    least = twin.free_total + 1
    for k in range(len(queue) - 1, -1, -1):
        least = smallest[k] = min(least, queue[k].size)
    for k, job in enumerate(queue):
        if smallest[k] > twin.free_total and not twin.record:
            break
        longest = job.req_ops / slowest
        for i in prof.candidates(job.size, longest).tolist():
            j = prof.window(i, longest)
            cap = prof.cores[i:j].min(axis=0)
            if int(cap.sum()) < job.size:
                continue
            mcap = prof.mem[i:j].min(axis=0) if prof.mem is not None else None
            if i == 0:
                if job.size > twin.free_total:
                    continue
                mem_limits = {n.idx: float(mcap[n.idx]) for n in twin.nodes} if mcap is not None else None
                alloc = rsel.allocate(job, prof.limits(cap), mem_limits)
                if alloc is not None:
                    duration = job.req_ops / min(p.speed * p.factor for p, _ in alloc)
                    twin.start(job, alloc)
                    prof.hold(0, duration, [(prof.group_of[p.idx], p.node, k) for p, k in alloc], job.mem)
                    break
                continue
            plan = _take_counts(range(len(prof.members)), group_node, job.size, job.mem, cap, mcap)
            if plan is None:
                continue
            twin.note_reservation(job, prof.times[i])
            prof.hold(i, job.req_ops / min(group_speed[g] for g, _, _ in plan), plan, job.mem)
            break
        else:
            # no step fits (cannot happen: the last step is the whole platform and the loader
            # accepted only jobs the empty platform holds); later jobs would not see this one
            return


class _Cache:
    """What a twin's passes share: processor groups per ranking, and each job's cores per group."""

    def __init__(self) -> None:
        self._ranked: list[Any] | None = None
        self._groups: tuple[list[int], list[list[Any]]] = ([], [])
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
