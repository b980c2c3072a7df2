"""What conservative backfilling's group profile keeps between decisions: the running jobs' cores
per processor group, summed per estimated end (`Releases`); and the checks tests run against fresh
counts at each decision.

A profile (`consprofile.Profile`) adds, at the row of each running job's estimated end, the cores
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

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

import numpy as np

from paretosched.sim.conssearch import CORES

if TYPE_CHECKING:
    from paretosched.sim.twin import Twin


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
        # None): what `conscarry.carry` brings that profile forward by
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
                entry = by_end.get(e)
                if entry is None:
                    by_end[e] = [vec, 1]
                else:
                    entry[0] = entry[0] + vec
                    entry[1] += 1
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
                 holds: list[Any]) -> bool:
    """Whether the profile the last decision left, its first step moved to `now`, is the one a
    build would make now (then it is moved). The caller knows that no job began, ended or was
    re-timed since; here: no processor or node changed either (power states), memory is one row,
    no reservation is due, no step lies before `now`, and a build's steps are these steps."""
    times = prof.times
    if prof.mem is not None or not cache.quiet() or (len(times) > 1 and times[1] <= now):
        return False
    rel = cache.releases(twin, est)
    if rel is None or any(h[0] <= now for h in holds):
        return False
    steps = sorted(set(rel.by_end).union([h[1] for h in holds], [h[0] for h in holds]))
    if steps != times[1:]:
        return False
    times[0] = now
    return True


def verify_stuck(prof: Any, job: Any, old: tuple[Any, ...], before: int, slowest: float) -> None:
    """Check, the slow way, that a job skipped as stuck has no start before its slot with enough
    cores in its groups (tests set `_Cache.verify`)."""
    cores = prof.cores.copy()
    a, b = bisect_left(prof.times, old[0]), bisect_left(prof.times, old[1])
    cores[a:b, old[2]] += old[3]  # its own reservation counts as free while it looks
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
