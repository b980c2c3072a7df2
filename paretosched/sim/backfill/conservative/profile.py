"""Conservative backfilling's availability profile on processor groups (`decide.py` explains
the model): free cores per group and free memory per node over time, as steps.

A pass asks it for the earliest step where a job fits (`slots.Search`, which it is), and
takes or gives back a reservation's cores (`hold`), splitting a step where one starts or ends.

`carry` brings the last decision's profile to now by the changes since, instead of a build from
every release and reservation.

A profile row is what is free from its time on: the free cores now, less every running job until
its estimated end, less every reservation over its slot. Between two decisions what changes is
known: the jobs that began, ended or were re-timed (`kept.Releases` logs each re-filing as
(old end, new end)), the jobs the last pass started (held in its profile from then until their
planned end, now running until their estimated end), and the reservations dropped since (their
jobs left the queue, or their start passed). So a row of the new profile at time t > now is the
old profile's row at t (the last one starting at or before t) plus, for each such change, the
job's cores where its old span covered t and its new one does not (or less, the other way round):
one slice update per change, where a build sums every release and reservation and accumulates the
whole matrix again. Row 0 (what is free now) is counted afresh from the twin's processor marks, as
a build counts it. The steps are the ones a build makes, so the result is that build's profile,
row for row (compared with a fresh build at every decision in the check mode, `kept.Cache.verify`).

It applies where memory is one row (no running job and no reservation holds memory) and every busy
core is a filed running job's (`whole`); otherwise the profile is built. A pass that found the plan
broken by an overrun re-placed every job in its profile, so that profile is carried as well.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from ctypes import memmove
from typing import TYPE_CHECKING, Any

import numpy as np

from paretosched.sim.backfill.conservative.plan import Hold, Reservation, limits_in_rank
from paretosched.sim.backfill.conservative.slots import CORES, Search, add
from paretosched.sim.backfill.end_order import end_order

if TYPE_CHECKING:
    from paretosched.sim.engine.twin import Twin


class Profile(Search):
    """Free cores per processor group (and memory per node) over time, as steps starting at `times`.

    Processors of the same speed are interchangeable for a plan when their node's memory is no
    limit (a group per speed), else within their node (a group per node and speed): counting per
    group rather than per processor is what makes a homogeneous platform plan as textbook
    conservative backfilling does, by counts alone. Built at each decision from the running jobs
    (their releases summed per estimated end, kept between decisions: `kept.Releases`) and
    the kept reservations (`holds`).
    """

    flat_mem = True  # tests: off builds every memory profile as a matrix

    def __init__(self, twin: Twin, ranked: list[Any], cache: Any, holds: list[Reservation], kept: bool = True) -> None:
        # One function (91 lines): the build of every decision on groups that cannot carry its last
        # profile, all in numpy calls on whole rows (docs/performance.md, `gaia`)
        now = twin.now
        order = end_order(twin)
        self.bounded = not order.unbounded_mem
        self.group_of, self.members = cache.groups(ranked)
        est = order.est
        running = twin.running
        # the running jobs' cores summed per estimated end, kept between decisions (`kept.Releases`);
        # None when one holds memory (or `kept` is off: tests build it both ways)
        rel = cache.releases(twin, est) if kept else None
        ends = {max(now, e) for e in rel.by_end} if rel is not None else {max(now, est[j]) for j in running}
        # row 0 holds what is free now; jobs past their estimate release at `now` too, but in a
        # row of their own after it (they hold their cores until they really end); the kept
        # reservations (`holds`) are held here in one go
        later = {h.end for h in holds} | {h.start for h in holds if h.start > now}
        self.times = [now] + sorted(ends | later)
        row = {t: i for i, t in enumerate(self.times) if i}
        group_of = self.group_of
        m = len(self.times)
        cores = np.zeros((m, len(self.members)), dtype=CORES)
        cores[0] = cache.free_by_group(twin)
        # memory per node is flat (every row what is free now) while no running job and no hold
        # has any: then it is kept as that one row (`mem_row`) and made a matrix on the first hold
        # that has memory (`hold`), the same floats a full build gives
        flat = self.bounded and self.flat_mem and not any(len(h.hold.nodes) for h in holds)
        mem = np.zeros((m, len(twin.nodes))) if self.bounded and not flat else None
        # every release and hold as (row, column, amount), added in one call each: np.add.at adds
        # in index order, the order the per-part loop it replaces used (so every float is the same)
        rc: list[int] = []
        gc: list[int] = []
        kc: list[int] = []
        rm: list[int] = []
        nm: list[int] = []
        vm: list[float] = []
        if rel is not None:
            rows, vecs, over = rel.rows(now, row)
            if vecs:
                cores[rows] = vecs  # one row per estimated end after now
            if over is not None:
                cores[row[now]] += over
        for job in running if rel is None else ():
            i = row[max(now, est[job])]
            gs, ks, nodes, ms = cache.flat(job, group_of)
            rc.extend([i] * len(gs))
            gc.extend(gs)
            kc.extend(ks)
            if ms:
                rm.extend([i] * len(ms))
                nm.extend(nodes)
                vm.extend(ms)
        if flat and rm:
            flat = False
            mem = np.zeros((m, len(twin.nodes)))
        self.free_now = cores[0].copy()  # each group's free cores now (before reservations)
        self.mem_row: Any = None  # with `mem` None but bounded: every row of the memory profile
        if self.bounded:
            row0 = cache.mem_by_node(twin)
            if mem is not None:
                mem[0] = row0
            else:
                self.mem_row = row0
            self.mem_now = row0.copy()
        else:
            self.mem_now = None
        if holds:
            a = [0 if h.start <= now else row[h.start] for h in holds]
            b = [row[h.end] for h in holds]
            n = [len(h.hold.groups) for h in holds]
            gs = np.concatenate([h.hold.groups for h in holds])
            ks = np.concatenate([h.hold.cores for h in holds])
            np.add.at(cores, (np.concatenate((np.array(rc, dtype=np.intp), np.repeat(a, n), np.repeat(b, n))),
                              np.concatenate((np.array(gc, dtype=np.intp), gs, gs))),
                      np.concatenate((np.array(kc, dtype=CORES), -ks, ks)))
            if mem is not None:
                n = [len(h.hold.nodes) for h in holds]
                nodes = np.concatenate([h.hold.nodes for h in holds])
                memk = np.concatenate([h.hold.mem for h in holds])
                np.add.at(mem, (np.concatenate((np.array(rm, dtype=np.intp), np.repeat(a, n), np.repeat(b, n))),
                                np.concatenate((np.array(nm, dtype=np.intp), nodes, nodes))),
                          np.concatenate((np.array(vm, dtype=float), -memk, memk)))
        else:
            if rc:
                np.add.at(cores, (rc, gc), kc)
            if mem is not None and rm:
                np.add.at(mem, (rm, nm), vm)
        # the steps live in a buffer with room below them, so a split moves the rows after it
        # down in place (`split`) instead of copying the whole matrix anew
        buf = np.empty((2 * m + 16, cores.shape[1]), dtype=CORES)
        np.cumsum(cores, axis=0, out=buf[:m])
        self.mem = np.cumsum(mem, axis=0) if mem is not None else None
        self.steps(buf, m)

    def steps(self, buf: Any, m: int) -> None:
        """Take `buf[:m]` as the free cores per group of its rows (`buf` has room below them), and
        start the record of its pass (also for a profile `carry` makes)."""
        self._buf = buf
        self._at = 0  # its address: asked on the first split, not at every build
        self.cores = buf[:m]
        self.totals: list[int] = add(self.cores, axis=1, dtype=CORES).tolist()  # all groups' free cores per row
        self.held: dict[Any, Any] | None = None  # the reservations it holds after its pass, and the
        self.started: list[tuple[float, Any]] = []  # jobs it started: (planned end, cores); `carry`
        self.whole = False

    def split(self, t: float) -> int:
        """The row starting at `t`, made by splitting the step that holds it if needed."""
        times = self.times
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t:
            return i
        times.insert(i, t)
        m = len(times) - 1  # the rows before this split
        buf = self._buf
        if m == len(buf):
            buf = self._buf = np.concatenate((buf, np.empty_like(buf)))
            self._at = 0
        if not self._at:
            self._at = buf.ctypes.data
        # rows i.. one down, by one memmove: numpy copies an overlapping shift through a temporary
        # (a tenth of the instructions of copying the matrix anew with `np.concatenate`)
        step = buf.strides[0]
        memmove(self._at + (i + 1) * step, self._at + i * step, (m - i) * step)
        buf[i] = buf[i - 1]
        self.cores = buf[:m + 1]
        tot = self.totals
        tot.insert(i, tot[i - 1])
        if self.mem is not None:
            mm = self.mem
            self.mem = np.concatenate((mm[:i], mm[i - 1:i], mm[i:]))
        return i

    def hold(self, t0: float, t1: float, vec: Hold, size: int, sign: int = 1, row: int | None = None) -> None:
        """Take (sign 1) or give back (-1) `vec` (`size` cores in all) over
        [t0, t1), from row `row` when given (a row of jobs past their estimate shares now with
        row 0), else from `t0`'s row (row 0 for a reservation that is due)."""
        start = row if row is not None else 0 if t0 <= self.times[0] else self.split(t0)
        end = self.split(t1)
        nodes, memk, dense = vec.nodes, vec.mem, vec.dense  # a whole-row update with the cores as a dense row costs a
        # third of a fancy-indexed one
        if sign > 0:
            self.cores[start:end] -= dense
        else:
            self.cores[start:end] += dense
        tot = self.totals
        d = sign * size
        for r in range(start, end):
            tot[r] -= d
        if len(nodes) and self.mem is None and self.mem_row is not None:
            self.mem = np.tile(self.mem_row, (len(self.times), 1))  # flat until now: made a matrix
            self.mem_row = None
        if self.mem is not None and len(nodes):
            self.mem[start:end, nodes] -= sign * memk

    def give_totals(self, a: int, b: int, size: int) -> None:
        """Add `size` to the totals of rows [a, b): the rest of giving back a reservation without
        memory whose cores were given back in the matrix alone (`conservative`)."""
        tot = self.totals
        for r in range(a, b):
            tot[r] += size

    def mem_cap(self, i: int, j: int) -> Any:
        """Each node's least free memory over rows [i, j) (None when memory is no limit)."""
        return self.mem[i:j].min(axis=0) if self.mem is not None else self.mem_row

    def mem_short(self) -> bool:
        """Whether some node's memory is over-held at some step (beyond the float residue)."""
        mem = self.mem if self.mem is not None else self.mem_row
        return mem is not None and bool((mem < -1e-6).any())

    def limits(self, cap: Any) -> dict[int, int]:
        """Per-processor caps for a job starting now: each group's cap, given to its processors'
        free cores in rank order (only caps below a processor's free cores are listed)."""
        short = (cap < self.free_now).nonzero()[0]  # the other groups' caps limit nothing
        return limits_in_rank(self.members, cap.tolist(), short.tolist())


def carry(kept: Profile, twin: Twin, cache: Any, res: dict[Any, Reservation], est: dict[Any, float]) -> Profile | None:
    """The profile a build would make now, from `kept` (the last decision's, after its pass) and the
    changes since; None where it cannot be carried (then build)."""
    # One function (71 lines), run at every decision on groups: one walk over the reservations and
    # one over the changes, in place of a build (docs/performance.md, `gaia`)
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
        t0 = r.start
        if t0 >= now:
            starts.append(t0)
            ends.append(r.end)
            if t0 == now:
                due.append(r.hold.dense)
            if held.get(job) is not r:
                added.append(r)
    if kept.bounded and any(len(r.hold.nodes) for r in added):
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
        if res.get(job) is not r or r.start < now:  # dropped (or made afresh) since
            _shift(cores, times, r.start, r.end, r.hold.dense, 1)
    for r in added:
        _shift(cores, times, r.start, r.end, r.hold.dense, -1)
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
