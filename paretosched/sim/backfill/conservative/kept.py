"""What conservative backfilling keeps between decisions (`decide.py` explains the model): what a
twin's passes on processor groups share (`Cache`: the plan, the processor groups of the ranking,
the running jobs' releases and each group's free cores now, kept from the twin's marks); the
running jobs' cores per processor group, summed per estimated end (`Releases`); and the checks
tests run against fresh counts at each decision.

A profile (`profile.Profile`) adds, at the row of each running job's estimated end, the cores
that job gives back. Walking every part of every running job at each decision was the largest
part of building it; the sums per estimated end change only when a job begins, ends or is re-timed,
and the twin marks each such job (`Twin.job_watchers`), so only those are re-filed here. Cores are
integers, so the sums are the same in any order; memory is floats, where the order of the sum
matters, so a profile with a running job that holds memory is still built part by part (and that
case is counted here: `with_mem`). A profile from these sums is the same, row for row, as one
built fresh. (Keeping the reservations' sums per time too was tried: 1.2% fewer instructions.)
When nothing but the time changed since the last decision, its profile is used again, its first
step moved (`still_fresh`).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

import numpy as np

from paretosched.sim.backfill.conservative.plan import Plan, Reservation
from paretosched.sim.backfill.conservative.profile import whole
from paretosched.sim.backfill.conservative.slots import CORES
from paretosched.sim.engine.state import ProcState

if TYPE_CHECKING:
    from paretosched.sim.backfill.conservative.profile import Profile
    from paretosched.sim.engine.twin import Twin


class Cache:
    """What a twin's passes share: the plan, processor groups per ranking, each job's cores per group."""

    verify = False  # tests: check every job skipped as stuck and the kept free counts, the slow way
    carry = True  # tests: off builds every profile that is not used again whole

    def __init__(self) -> None:
        self.plan = Plan()
        self._ranked: list[Any] | None = None
        self._groups: tuple[list[int], list[list[Any]]] = ([], [])
        self.group_speed: list[float] = []              # each group's speed and node
        self.group_node: list[Any] = []
        self.keys: list[tuple[float, int]] = []         # each group's (speed, node or -1)
        self._parts: dict[Any, tuple[list[int], list[int], list[int], list[float]]] = {}
        self._free: Any = None  # `free_by_group`'s counts, per processor, and marks
        self._last: list[int] = []
        self._dirty: dict[Any, None] | None = None
        self._mem: Any = None  # each node's free memory, kept from the same marks
        self._releases: Releases | None = None  # made on first use, anew with the groups
        self.kept: Profile | None = None  # the last decision's profile, while nothing changed since
        self._twin: Any = None

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
            old_keys = self.keys  # (the numbering every kept reservation's groups are in)
            self._ranked, self._groups = list(ranked), (group_of, members)
            self.group_speed = [m[0].speed for m in members]
            self.group_node = [m[0].node for m in members]
            self.keys = list(key_group)
            # a reservation's groups are renumbered by their keys (speed, node)
            res = self.plan.res
            for job, r in res.items():
                if isinstance(r, Reservation):  # (`count_pass` keeps plain counts)
                    h = r.hold
                    gs = np.fromiter((key_group[old_keys[g]] for g in h.groups.tolist()), np.int64, len(h.groups))
                    dense = np.zeros(len(members), dtype=CORES)
                    dense[gs] = h.cores
                    res[job] = r._replace(hold=h._replace(groups=gs, dense=dense))
            self._parts.clear()
            self.plan.stuck.clear()
            self.kept = None
            self._free = None
            self._drop_releases()
        return self._groups

    def releases(self, twin: Twin, est: dict[Any, float]) -> Releases | None:
        """The running jobs' cores per group by estimated end, kept (None if one holds memory)."""
        rel = self._releases
        if rel is None:
            group_of, members = self._groups
            rel = self._releases = Releases(twin, group_of, len(members))
            self._twin = twin
        rel.sync(twin, est)
        return rel if not rel.with_mem else None

    def made(self, twin: Twin, prof: Profile) -> None:
        """`prof` was made now: the releases' log starts anew, and it may be carried forward only
        if every busy core is a filed running job's (none is held by a job still booting)."""
        rel = self._releases
        if rel is not None:
            rel.log.clear()
            prof.whole = whole(twin, rel)

    def _drop_releases(self) -> None:
        if self._releases is not None:
            self._releases.close(self._twin)
            self._releases = None

    def flat(self, job: Any, group_of: list[int]) -> tuple[list[int], list[int], list[int], list[float]]:
        """A running job's parts: (groups, cores, nodes, memory), the last two of the parts that
        hold memory."""
        parts = self._parts.get(job)
        if parts is None:
            if len(self._parts) > 4096:
                self._parts.clear()
            mem = [(g.proc.node.idx, len(g.cores) * job.mem) for g in job.groups]
            mem = [(n, m) for n, m in mem if m > 0]
            parts = self._parts[job] = ([group_of[g.proc.idx] for g in job.groups], [len(g.cores) for g in job.groups],
                                        [n for n, _ in mem], [m for _, m in mem])
        return parts

    def quiet(self) -> bool:
        """Whether the twin marked no processor or node since `free_by_group` last read the marks."""
        return self._dirty is not None and not self._dirty

    def free_by_group(self, twin: Twin) -> Any:
        """Each group's free cores now (an array: read, not changed), kept from the processors the
        twin marks as changed."""
        free, last, dirty = self._free, self._last, self._dirty
        group_of = self._groups[0]
        if dirty is None:
            dirty = self._dirty = {}
            for node in twin.nodes:
                node.watchers.append(dirty)
            last = self._last = [len(p.free) for p in twin.procs]
        if free is None:
            counts = [0] * len(self._groups[1])
            for p in twin.procs:
                n = last[p.idx] = len(p.free)
                counts[group_of[p.idx]] += n
            free = self._free = np.array(counts, dtype=CORES)
        mem = self._mem
        change: dict[int, int] = {}
        for x in dirty:
            if x.__class__ is ProcState:
                n = len(x.free)
                if n != last[x.idx]:
                    g = group_of[x.idx]
                    change[g] = change.get(g, 0) + n - last[x.idx]
                    last[x.idx] = n
            elif mem is not None:  # a node: the twin marks one whenever its free memory changes
                mem[x.idx] = x.mem_free
        dirty.clear()
        if change:  # (kept as an array: a profile's first row is copied from it, not converted)
            free[list(change)] += list(change.values())
        return free

    def mem_by_node(self, twin: Twin) -> Any:
        """Each node's free memory now (a copy), kept from the twin's node marks: call after
        `free_by_group`, which reads the marks."""
        if self._mem is None:
            self._mem = np.array([n.mem_free for n in twin.nodes], dtype=float)
        return self._mem.copy()


class Releases:
    """Running jobs' cores per group summed per estimated end, kept from the twin's job marks."""

    def __init__(self, twin: Twin, group_of: list[int], n_groups: int) -> None:
        self.group_of = group_of
        self.n_groups = n_groups
        self.marks: dict[Any, None] = dict.fromkeys(twin.running)  # every running job to file
        twin.job_watchers.append(self.marks)
        self.by_end: dict[float, list[Any]] = {}            # estimated end -> [cores per group, jobs]
        self.of_job: dict[Any, tuple[float, Any]] = {}      # running job -> (its key, its cores)
        self.with_mem = 0                                   # running jobs filed that hold memory
        # each re-filing since the last profile was made, as (old (end, cores) or None, new or
        # None): what `profile.carry` brings that profile forward by
        self.log: list[tuple[Any, Any]] = []
        self.filed = 0                                      # the cores of the jobs filed

    def close(self, twin: Twin) -> None:
        """Stop following the twin's marks (the groups were made anew)."""
        watchers = twin.job_watchers  # by identity: another watcher's marks may be equal to these
        del watchers[next(i for i, w in enumerate(watchers) if w is self.marks)]

    def sync(self, twin: Twin, est: dict[Any, float]) -> None:
        """Re-file the jobs marked since the last call: out of their old end, in at their estimate
        now (`est`: the running jobs' raw estimated ends) if they still run."""
        marks = self.marks
        if not marks:
            return
        by_end, of_job, running = self.by_end, self.of_job, twin.running
        log = self.log
        for job in marks:
            old = of_job.pop(job, None)
            new = None
            if old is not None:
                entry = by_end[old[0]]
                if entry[1] == 1:
                    del by_end[old[0]]
                else:
                    entry[0] = entry[0] - old[1]
                    entry[1] -= 1
                if job.mem > 0:
                    self.with_mem -= 1
                self.filed -= job.size
            if job in running:
                e = est[job]
                vec = self._cores(job)
                new = of_job[job] = (e, vec)
                at_end = by_end.get(e)
                if at_end is None:
                    by_end[e] = [vec, 1]
                else:
                    at_end[0] = at_end[0] + vec
                    at_end[1] += 1
                if job.mem > 0:
                    self.with_mem += 1
                self.filed += job.size
            if old is not None or new is not None:
                log.append((old, new))
        marks.clear()

    def _cores(self, job: Any) -> Any:
        group_of = self.group_of
        vec = np.zeros(self.n_groups, dtype=CORES)
        for g in job.groups:
            vec[group_of[g.proc.idx]] += len(g.cores)
        return vec

    def rows(self, now: float, row: dict[float, int]) -> tuple[list[int], list[Any], Any]:
        """(rows, cores per group) of the ends after `now`, each end its own row in `row`, and the
        cores of the jobs past their estimate (released in the row at `now`), or None."""
        rows, vecs, over = [], [], None
        for e, (vec, _) in self.by_end.items():
            if e > now:
                rows.append(row[e])
                vecs.append(vec)
            else:
                over = vec if over is None else over + vec
        return rows, vecs, over


def still_fresh(prof: Any, cache: Any, twin: Twin, now: float, est: dict[Any, float],
                 holds: list[Reservation]) -> bool:
    """Whether the profile the last decision left, its first step moved to `now`, is the one a
    build would make now (then it is moved). The caller knows that no job began, ended or was
    re-timed since; here: no processor or node changed either (power states), memory is one row,
    no reservation is due, no step lies before `now`, and a build's steps are these steps."""
    times = prof.times
    if prof.mem is not None or not cache.quiet() or (len(times) > 1 and times[1] <= now):
        return False
    rel = cache.releases(twin, est)
    if rel is None or any(h.start <= now for h in holds):
        return False
    steps = sorted(set(rel.by_end).union([h.end for h in holds], [h.start for h in holds]))
    if steps != times[1:]:
        return False
    times[0] = now
    return True


def verify_stuck(prof: Any, job: Any, old: Reservation, before: int, slowest: float) -> None:
    """Check, the slow way, that a job skipped as stuck has no start before its slot with enough
    cores in its groups (tests set `_Cache.verify`)."""
    cores = prof.cores.copy()
    a, b = bisect_left(prof.times, old.start), bisect_left(prof.times, old.end)
    cores[a:b, old.hold.groups] += old.hold.cores  # its own reservation counts as free while it looks
    longest = job.req_ops / slowest
    for i in range(before):
        n = int(cores[i:prof.window(i, longest)].min(axis=0).sum())
        if n >= job.size:
            raise AssertionError(f"conservative: job {job.id} skipped as stuck but {n} cores are free "
                                 f"from {prof.times[i]} for {longest} s")


def verify_free(twin: Twin, prof: Any) -> None:
    """Check the free cores per group kept from the twin's marks against a fresh count (tests)."""
    fresh = [0] * len(prof.members)
    for p in twin.procs:
        fresh[prof.group_of[p.idx]] += len(p.free)
    if fresh != prof.free_now.tolist():
        raise AssertionError("conservative: kept free cores per group differ from a count")
    if prof.mem_now is not None and [n.mem_free for n in twin.nodes] != prof.mem_now.tolist():
        raise AssertionError("conservative: kept free memory per node differs from the nodes'")


def verify_profile(prof: Any, fresh: Any) -> None:
    """Check a profile built from the kept releases against one built part by part (tests)."""
    same = prof.times == fresh.times and np.array_equal(prof.cores, fresh.cores)
    if not same or not np.array_equal(prof.totals, fresh.totals):
        raise AssertionError("conservative: the profile from kept releases differs from a fresh build")


def verify_totals(prof: Any) -> None:
    """Check the profile's totals (kept through holds and lazy give-backs) against its matrix (tests)."""
    if prof.totals != prof.cores.sum(axis=1).tolist():
        raise AssertionError("conservative: the profile's totals differ from its rows' sums")
