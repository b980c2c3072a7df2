"""Conservative backfilling's kept plan, and its pass in plain counts (one group of identical
processors with no memory limit: what textbook conservative backfilling keeps).

`Plan` holds every queued job's reservation between decisions (`decide.py` explains the
model). `count_pass` is that module's decision on such a platform: the profile is a list of
(time, free cores) steps built from the running jobs' estimated ends and the kept reservations,
a job that cannot move earlier costs one test (the most free cores at any step before its slot),
and a job's own reservation is counted as free while it looks for an earlier slot, so one that
stays costs no update. Hand-written rather than numpy: on steps of one count, numpy's per-call
cost was most of a decision.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from itertools import accumulate
from typing import TYPE_CHECKING, Any, NamedTuple

from paretosched.sim.backfill.end_order import end_order
from paretosched.sim.placement.policies import JobSelector, ResourceSelector

if TYPE_CHECKING:
    from paretosched.sim.engine.twin import Twin


# The given-back log is trimmed, past this many entries, to what some kept bound still reads (a
# bound on memory, not on correctness: tests lower it to trim at almost every decision).
TRIM_GIVEN = 4096


class Hold(NamedTuple):
    """The cores (and memory) a job holds in a group profile, each group and node once."""

    groups: Any  # the processor groups (int64 array)
    cores: Any   # the cores on each of them
    nodes: Any   # the nodes it holds memory on (int64 array; empty for a job without memory)
    mem: Any     # the memory on each of them (MB)
    dense: Any   # the cores as a row of all groups: what a profile adds and takes in one update


class Reservation(NamedTuple):
    """A queued job's kept slot on processor groups (`conservative`)."""

    start: float
    end: float
    hold: Hold


class Counted(NamedTuple):
    """A queued job's kept slot in plain counts (`count_pass`: one group, no memory)."""

    start: float
    end: float
    size: int


class Plan:
    """The reservations kept between decisions, job -> `Reservation` (or `Counted` in `count_pass`)."""

    def __init__(self) -> None:
        self.res: dict[Any, Any] = {}  # job -> Reservation (Counted in `count_pass`): one kind per twin
        self.slowest: float | None = None
        self._marks: dict[Any, None] | None = None
        # cores given back in the profile, as (from when, cores): jobs that ended early or now
        # release earlier, reservations dropped or moved (an upper bound on how much the free
        # cores of any step from that time on rose). `stuck` keeps, per job, where this log stood
        # and the most free cores (all groups) any start before its reservation offered when it
        # last looked for one: while that plus what was given back since, early enough to lie
        # in one of its windows, stays below its size, it cannot move earlier (`still_stuck`)
        self.given: list[tuple[float, int]] = []
        self.stuck: dict[Any, tuple[int, int]] = {}
        self.changed: list[Any] = []            # the jobs that began, ended or were re-timed
        self.release: dict[Any, float] = {}     # each running job's release in the last profile
        self.at = -1.0                          # the time of that profile

    def compress(self, twin: Twin) -> bool:
        """Whether this decision compresses the plan: a job began or ended (or was re-timed) since
        the last one (the twin marks them, `Twin.job_watchers`). Otherwise no kept reservation can
        move earlier, and only new and due jobs are placed."""
        marks = self._marks
        if marks is None:
            marks = self._marks = {}
            twin.job_watchers.append(marks)
            return True
        changed = bool(marks)
        if changed:
            self.changed = list(marks)
            marks.clear()
        return changed

    def count_given(self, twin: Twin, est: dict[Any, float]) -> None:
        """Add to `given` the cores of the jobs that began, ended or were re-timed since the last
        profile and now release earlier in it than they did (`est`: the running jobs' estimated
        ends now); remember this profile's releases."""
        now = twin.now
        release = self.release
        running = twin.running
        given = self.given
        for job in self.changed:
            was = release.get(job, math.inf)
            if job in running:
                t = max(now, est[job])
                if t < max(now, was):
                    given.append((t, job.size))
            elif was > now or now == self.at:  # ended: free now (at the same instant, from row 0)
                given.append((now, job.size))
        self.changed = []
        self.release = dict(est)
        self.at = now
        if len(given) > TRIM_GIVEN:  # forget what no kept bound still counts from
            base = min((i for i, _ in self.stuck.values()), default=len(given))
            if base:
                del given[:base]
                stuck = self.stuck
                for job, (i, m) in list(stuck.items()):
                    stuck[job] = (i - base, m)

    def still_stuck(self, job: Any, limit: float) -> bool:
        """Whether `job` still cannot move before its reservation: the cores its kept bound says
        any earlier start offered, plus those given back since from before `limit` (the latest
        time one of its windows reaches), are fewer than it needs (then the bound moves on)."""
        was = self.stuck.get(job)
        if was is None:
            return False
        i, most = was
        size = job.size
        if most >= size:  # it was refused for other reasons than counts: no bound
            return False
        given = self.given
        for k in range(i, len(given)):
            t, n = given[k]
            if t < limit:
                most += n
                if most >= size:
                    return False
        self.stuck[job] = (len(given), most)
        return True

    def keep_queued(self, queue: list[Any]) -> None:
        """Forget the reservations of jobs no longer queued (started, by the plan or as heads)."""
        res = self.res
        if res:
            queued = set(queue)
            for job in [j for j in res if j not in queued]:
                self.given.append((res.pop(job).start, job.size))
                self.stuck.pop(job, None)


def limits_in_rank(members: list[list[Any]], cap: list[int], groups: Any = None) -> dict[int, int]:
    """Per-processor caps for a job starting now: each group's cap (of `groups`, default all),
    given to its processors' free cores in rank order (only caps below a processor's free cores
    are listed)."""
    out = {}
    for g in range(len(members)) if groups is None else groups:
        left = cap[g]
        ps = members[g]
        for i, p in enumerate(ps):
            n = len(p.free)
            if n < left:
                left -= n
                continue
            if not n:
                continue  # (a cap below zero goes to the next processor with a free core)
            if left < n:
                out[p.idx] = left
            # the cap is used up: every later processor with a free core gets none
            out.update({q.idx: 0 for q in ps[i + 1:] if q.free})
            break
    return out


def hold_end(t: float, duration: float) -> float:
    """A job of no duration holds its cores for an instant (the next float), so nothing that
    runs across that instant can take them."""
    return t + duration if duration > 0 else math.nextafter(t, math.inf)


def count_pass(twin: Twin, jsel: JobSelector, rsel: ResourceSelector, plan: Plan,
                members: list[list[Any]], compress: bool) -> None:
    """`conservative` on one group of identical processors with no memory limit: the profile in
    plain counts (what textbook conservative backfilling keeps), the same decisions."""
    # One function (106 lines): the whole pass of the count path, whose per-call costs were most of
    # a decision (docs/performance.md, the homogeneous windows); its profile lists stay locals.
    now = twin.now
    order = end_order(twin)
    est = order.est
    res = plan.res
    speed = plan.slowest
    # the profile: row 0 is free now; jobs past their estimate release in a row of their own at now
    delta: dict[float, int] = {}
    get = delta.get
    overrun = 0
    for job in twin.running:
        e = est[job]
        if e > now:
            delta[e] = get(e, 0) + job.size
        else:
            overrun += job.size
    held_now = 0
    for t0, t1, size in res.values():  # (`Counted`: one group, plain counts)
        if t0 > now:
            delta[t0] = get(t0, 0) - size
            delta[t1] = get(t1, 0) + size
        elif t0 == now:  # due now: held from row 0 (one whose start has passed is made afresh)
            held_now += size
            delta[t1] = get(t1, 0) + size
    times = [now]
    free = [twin.free_total - held_now]
    if overrun:
        times.append(now)
        free.append(free[0] + overrun)
    ts = sorted(delta)
    times += ts
    steps = accumulate(map(delta.__getitem__, ts), initial=free[-1])
    next(steps)  # (the row before)
    free += steps
    broken = min(free) < 0  # as in `conservative`: reservations overran by running jobs

    def hold(t0: float, t1: float, size: int, row: int | None = None) -> None:
        a = row if row is not None else 0 if t0 <= now else _split(times, free, t0)
        b = _split(times, free, t1)
        for r in range(a, b):
            free[r] -= size

    # the most free cores in rows before `seen` (kept while no hold changes the profile: queued
    # jobs mostly come in the order of their slots, so each check scans only the rows past it)
    seen = 0
    most = 0
    for job in jsel.order(twin.queue):
        old = res.get(job)
        if old is not None and not compress and old.start > now and not broken:
            continue
        size = job.size
        m = len(times)
        before = m
        o0 = o1 = m  # the rows the job's own reservation holds (none)
        if old is not None:
            t0, t1 = old.start, old.end
            if t0 > now and not broken:
                before = bisect_left(times, t0)
                if before > seen:
                    top = max(free[seen:before])
                    if seen and most > top:
                        top = most
                    most, seen = top, before
                elif before == seen:
                    top = most
                else:
                    top = max(free[:before]) if before else -1
                if top < size:
                    continue  # cannot move earlier: its reservation stays as it is
                o0 = before
                o1 = bisect_left(times, t1, lo=o0)
            elif t0 >= now:
                o0 = 0 if t0 == now else bisect_left(times, t0)
                o1 = bisect_left(times, t1, lo=o0)
        duration = job.req_ops / speed
        # its own reservation counted as free: given back in place (rows o0..o1 are its start
        # and end), and taken again only if it stays
        for r in range(o0, o1):
            free[r] += size
        found = _earliest(times, free, size, duration, before, twin.free_total)
        if found < 0:
            for r in range(o0, o1):
                free[r] -= size
            continue  # no earlier slot: its reservation stays (a new job always finds one)
        seen = 0  # the holds below change the profile
        if found == 0:
            cap = min(free[:max(bisect_left(times, now + duration, lo=1), 1)])
            # a cap of every free core lists no processor: no walk
            limits = {} if cap >= twin.free_total else limits_in_rank(members, [cap])
            alloc = rsel.allocate(job, limits, None)
            if alloc is None:  # cannot happen on identical processors: counts decide
                raise RuntimeError(f"conservative: job {job.id} fits {size} of {cap} cores but was refused")
            duration = job.req_ops / min([p.speed * p.factor for p, _ in alloc])
            twin.start(job, alloc)
            res.pop(job, None)
            hold(now, hold_end(now, duration), size)
        elif found > 0:
            t = times[found]
            twin.note_reservation(job, t)
            t_end = hold_end(t, duration)
            res[job] = Counted(t, t_end, size)
            hold(t, t_end, size, found)
    wake(twin, plan)


def _earliest(times: list[float], free: list[int], size: int, duration: float, before: int,
              free_now: int) -> int:
    """The first row before `before` where `size` cores are free for `duration`, or -1."""
    m = len(times)
    i = 0
    while i < before:
        if free[i] < size:
            # most rows a scan meets are short: a `for` over them costs fewer bytecodes per row
            # than the `while` (4.3 million rows skipped on the Lublin window)
            for i in range(i + 1, before):  # noqa: B020 (i goes on from where the scan stood)
                if free[i] >= size:
                    break
            else:
                return -1
        t_end = times[i] + duration
        j = i + 1
        while j < m and times[j] < t_end and free[j] >= size:
            j += 1
        if j < m and times[j] < t_end:
            i = j + 1  # row j is short: no start before it can span it
            continue
        if i == 0 and size > free_now:
            i += 1
            continue
        return i
    return -1


def wake(twin: Twin, plan: Plan) -> None:
    """A decision at the earliest reservation: when running jobs overrun their estimates (or a
    job of no duration ends at once), nothing else may happen at that time."""
    if plan.res:
        twin.wake_at(min([r.start for r in plan.res.values()]))


def _split(times: list[float], free: list[int], t: float) -> int:
    i = bisect_left(times, t, lo=1)
    if i < len(times) and times[i] == t:
        return i
    times.insert(i, t)
    free.insert(i, free[i - 1])
    return i


def take_counts(group_node: list[Any], need: int, mem: float, cap: Any,
                mcap: Any) -> list[tuple[int, Any, int]] | None:
    """`conservative`'s greedy in rank order on counts: cores within each group's cap (an array),
    whole cores per node memory."""
    out = []
    node_mem: dict[int, float] = {}
    caps = cap.tolist()
    mcaps = mcap.tolist() if mcap is not None and mem > 0 else None
    for g in (cap > 0).nonzero()[0].tolist():  # the groups with a core, in rank order
        k = caps[g]
        if k > need:
            k = need
        node = group_node[g]
        if mcaps is not None and node.mem_cap < math.inf:
            left = node_mem.get(node.idx, mcaps[node.idx])
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
