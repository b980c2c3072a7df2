"""Conservative backfilling's group profile carried from one decision to the next: the last
decision's profile brought to now by the changes since, instead of a build from every release and
reservation (`consprofile.Profile`).

A profile row is what is free from its time on: the free cores now, less every running job until
its estimated end, less every reservation over its slot. Between two decisions what changes is
known: the jobs that began, ended or were re-timed (`conskeep.Releases` logs each re-filing as
(old end, new end)), the jobs the last pass started (held in its profile from then until their
planned end, now running until their estimated end), and the reservations dropped since (their
jobs left the queue, or their start passed). So a row of the new profile at time t > now is the
old profile's row at t (the last one starting at or before t) plus, for each such change, the
job's cores where its old span covered t and its new one does not (or less, the other way round):
one slice update per change, where a build sums every release and reservation and accumulates the
whole matrix again. Row 0 (what is free now) is counted afresh from the twin's processor marks, as
a build counts it. The steps are the ones a build makes, so the result is that build's profile,
row for row (compared with a fresh build at every decision in the check mode, `_Cache.verify`).

It applies where memory is one row (no running job and no reservation holds memory) and every busy
core is a filed running job's (`whole`); otherwise the profile is built. A pass that found the plan
broken by an overrun re-placed every job in its profile, so that profile is carried as well.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

import numpy as np

from paretosched.sim.consprofile import Profile
from paretosched.sim.conssearch import CORES

if TYPE_CHECKING:
    from paretosched.sim.twin import Twin


def carry(kept: Profile, twin: Twin, cache: Any, res: dict[Any, tuple[Any, ...]], est: dict[Any, float]) -> Profile | None:
    """The profile a build would make now, from `kept` (the last decision's, after its pass) and the
    changes since; None where it cannot be carried (then build)."""
    if kept.mem is not None or kept.held is None or not kept.whole:
        return None
    rel = cache.releases(twin, est)
    if rel is None or not whole(twin, rel):
        return None
    now = twin.now
    held = kept.held
    # the live reservations' starts and ends, those due now, and those `kept` does not hold (none:
    # between decisions reservations are only dropped), in one walk
    starts: list[float] = []
    ends: list[float] = []
    due = []
    added = []
    for job, r in res.items():
        t0 = r[0]
        if t0 >= now:
            starts.append(t0)
            ends.append(r[1])
            if t0 == now:
                due.append(r[6])
            if held.get(job) is not r:
                added.append(r)
    if kept.bounded and any(len(r[4]) for r in added):
        return None  # memory held in the future: a build makes it a matrix (`kept`'s hold none)
    # a build's steps: every estimated end and reservation start and end after now, and now again
    # (a row of its own) if a running job's estimated end has passed
    by_end = rel.by_end
    steps = sorted(set(by_end).union(starts, ends))
    steps = steps[bisect_right(steps, now):]
    times = [now, now] + steps if by_end and min(by_end) <= now else [now] + steps
    m = len(times)
    # each new row's old row: the last one starting at or before its time
    old_t = kept.times
    idx = [bisect_right(old_t, t) - 1 for t in times[1:]]
    buf = np.empty((2 * m + 16, kept.cores.shape[1]), dtype=CORES)
    cores = buf[:m]
    if m > 1:
        np.take(kept.cores, idx, axis=0, out=cores[1:])
    # the changes since, as (from, to, cores, sign): rows from 1 whose time lies in [from, to)
    # gain sign * cores (None: from the start)
    for old, new in rel.log:
        if old is not None:  # its old release given back: free before its old end
            _shift(cores, times, None, old[0], old[1], 1)
        if new is not None:
            _shift(cores, times, None, new[0], new[1], -1)
    for t_end, dense in kept.started:  # held from its start to its planned end: now a running job
        _shift(cores, times, None, t_end, dense, 1)
    for job, r in held.items():
        if res.get(job) is not r or r[0] < now:  # dropped (or made afresh) since
            _shift(cores, times, r[0], r[1], r[6], 1)
    for r in added:
        _shift(cores, times, r[0], r[1], r[6], -1)
    prof = object.__new__(Profile)
    prof.bounded = kept.bounded
    prof.group_of, prof.members = kept.group_of, kept.members
    prof.times = times
    cores[0] = cache.free_by_group(twin)
    prof.free_now = cores[0].copy()
    for dense in due:  # due now: held from the first row
        cores[0] -= dense
    if prof.bounded:
        prof.mem_row = cache.mem_by_node(twin)
        prof.mem_now = prof.mem_row.copy()
    else:
        prof.mem_row = prof.mem_now = None
    prof.mem = None
    prof.steps(buf, m)
    return prof


def _shift(cores: Any, times: list[float], t0: float | None, t1: float, vec: Any, sign: int) -> None:
    a = 1 if t0 is None else bisect_left(times, t0, lo=1)
    b = bisect_left(times, t1, lo=1)
    if a < b:
        if sign > 0:
            cores[a:b] += vec
        else:
            cores[a:b] -= vec


def whole(twin: Twin, rel: Any) -> bool:
    """Whether every busy core is a filed running job's (a job booting holds cores that are
    neither free nor released at an estimated end: the profile cannot be carried across that)."""
    return twin.free_total + rel.filed == twin.platform.n_cores
