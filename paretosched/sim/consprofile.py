"""Conservative backfilling's availability profile on processor groups (`conservative.py` explains
the model): free cores per group and free memory per node over time, as steps.

A pass asks it for the earliest step where a job fits; the cost is numpy's per call, not the
rows, so the steps a job cannot start at are ruled out in bulk: a kept job first by the stretch
its runs of starts share (`core_bound`), then by all groups' free cores together and a sampled
count (`candidates`), then, for a run of candidates whose windows share a row, by each group's
least free cores over every window at once (`counts`); a new or re-placed job by the same tests
a few rows at a time, earliest first (`earliest`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from ctypes import memmove
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from paretosched.sim.consplan import limits_in_rank
from paretosched.sim.endorder import end_order

if TYPE_CHECKING:
    from paretosched.sim.twin import Twin

least = np.minimum.reduce
add = np.add.reduce
# cores per group are counted in int32: they fit (a count never exceeds the platform's cores times
# the queue), and numpy's minimum on int32 is one SIMD instruction where int64's is emulated below
# AVX-512 (2% fewer instructions on the gaia window); sums over groups (`add`) are asked in int32
# too (a sum is bounded as a count is), where numpy would make them in int64 through a cast
CORES = np.int32
# from this many candidate rows a search first rules rows out by a sampled bound (`sampled`)
SAMPLE_FROM = 3


class Profile:
    """Free cores per processor group (and memory per node) over time, as steps starting at `times`.

    Processors of the same speed are interchangeable for a plan when their node's memory is no
    limit (a group per speed), else within their node (a group per node and speed): counting per
    group rather than per processor is what makes a homogeneous platform plan as textbook
    conservative backfilling does, by counts alone. Built at each decision from the running jobs
    (their releases summed per estimated end, kept between decisions: `conskeep.Releases`) and
    the kept reservations (`holds`).
    """

    flat_mem = True  # tests: off builds every memory profile as a matrix

    def __init__(self, twin: Twin, ranked: list[Any], cache: Any, holds: list[Any], kept: bool = True) -> None:
        now = twin.now
        order = end_order(twin)
        self.bounded = not order.unbounded_mem
        self.group_of, self.members = cache.groups(ranked)
        est = order.est
        running = twin.running
        # the running jobs' cores summed per estimated end, kept between decisions (`conskeep`);
        # None when one holds memory (or `kept` is off: tests build it both ways)
        rel = cache.releases(twin, est) if kept else None
        ends = {max(now, e) for e in rel.by_end} if rel is not None else {max(now, est[j]) for j in running}
        # row 0 holds what is free now; jobs past their estimate release at `now` too, but in a
        # row of their own after it (they hold their cores until they really end); the kept
        # reservations (`holds`: start, end, then `_vec`'s arrays) are held here in one go
        later = {h[1] for h in holds} | {h[0] for h in holds if h[0] > now}
        self.times = [now] + sorted(ends | later)
        row = {t: i for i, t in enumerate(self.times) if i}
        group_of = self.group_of
        m = len(self.times)
        cores = np.zeros((m, len(self.members)), dtype=CORES)
        cores[0] = cache.free_by_group(twin)
        # memory per node is flat (every row what is free now) while no running job and no hold
        # has any: then it is kept as that one row (`mem_row`) and made a matrix on the first hold
        # that has memory (`hold`), the same floats a full build gives
        flat = self.bounded and self.flat_mem and not any(len(h[4]) for h in holds)
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
            a = [0 if h[0] <= now else row[h[0]] for h in holds]
            b = [row[h[1]] for h in holds]
            n = [len(h[2]) for h in holds]
            gs = np.concatenate([h[2] for h in holds])
            ks = np.concatenate([h[3] for h in holds])
            np.add.at(cores, (np.concatenate((np.array(rc, dtype=np.intp), np.repeat(a, n), np.repeat(b, n))),
                              np.concatenate((np.array(gc, dtype=np.intp), gs, gs))),
                      np.concatenate((np.array(kc, dtype=CORES), -ks, ks)))
            if mem is not None:
                n = [len(h[4]) for h in holds]
                nodes = np.concatenate([h[4] for h in holds])
                memk = np.concatenate([h[5] for h in holds])
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
        start the record of its pass (also for a profile `conscarry` makes)."""
        self._buf = buf
        self._at = 0  # its address: asked on the first split, not at every build
        self.cores = buf[:m]
        self.totals: list[int] = add(self.cores, axis=1, dtype=CORES).tolist()  # all groups' free cores per row
        self.held: dict[Any, Any] | None = None  # the reservations it holds after its pass, and the
        self.started: list[tuple[float, Any]] = []  # jobs it started: (planned end, cores); `conscarry`
        self.whole = False

    def candidates(self, size: int, duration: float, before: int, own: tuple[int, int, Any] | None = None,
                   start: int = 0, below: int = -1) -> tuple[list[int], list[int], list[int]]:
        """The rows before `before` where a job of `size` cores could start for `duration`: first
        counting all groups together, then, from `SAMPLE_FROM` rows on, each group's least over
        three steps of the window (`sampled`); both are necessary conditions, and each row left is
        then counted per group over its whole window (`counts`). Returns those rows, the end
        (exclusive) of each one's window, and for every row before `before` an upper bound on the
        free cores a start there offers when it was ruled out (the total of a short step, or the
        sampled count), else -1. `own`: rows [a, b) counted with the job's own reservation (its
        cores per group, a row) given back. Rows before `start` are known to be short, each with at most
        `below` cores (`core_bound`).

        The totals are one number per row, so they are scanned in plain Python: on the few dozen
        rows a profile has, a dozen numpy calls cost more than the loop. A row is a candidate when
        the first short row at or after it (`nb`) lies at or past its window's end, i.e. when
        `times[nb] >= times[i] + duration`: no window end is searched for the rows ruled out."""
        times, totals = self.times, self.totals
        m = len(times)
        a, b = (own[0], own[1]) if own is not None else (0, 0)
        # the first short row at or after `before`; a row whose time is past every window's end
        # stands for it too (every window ends before it: no row is ruled out by what follows)
        nb = before
        if before:
            reach = times[before - 1] + duration
            while nb < m and times[nb] < reach and totals[nb] + (size if a <= nb < b else 0) >= size:
                nb += 1
        short = [below] * start + [-1] * (before - start)
        rows = []
        for i in range(before - 1, start - 1, -1):
            n = totals[i] + (size if a <= i < b else 0)
            if n < size:
                short[i] = n
                nb = i
            elif nb < m and times[nb] < times[i] + duration:
                short[i] = totals[nb] + (size if a <= nb < b else 0)
            else:
                rows.append(i)
        rows.reverse()
        ends = []
        j = 0
        for i in rows:  # windows' ends only for the rows left (both ascend)
            t = times[i] + duration
            if j <= i:
                j = i + 1
            while j < m and times[j] < t:
                j += 1
            ends.append(j)
        if len(rows) >= SAMPLE_FROM:
            if own is not None:  # given back while sampling, held again after
                self.cores[a:b] += own[2]
                bound = self.sampled(rows, ends)
                self.cores[a:b] -= own[2]
            else:
                bound = self.sampled(rows, ends)
            rows, ends = _cut(rows, ends, bound, size, short)
        return rows, ends, short

    def core_bound(self, size: int, duration: float, before: int,
                   own: tuple[int, int, Any] | None) -> tuple[int, int, int]:
        """Upper bounds on the free cores (all groups) the starts before row `before` offer for
        `duration`, with the job's own reservation (`own`, as in `candidates`) given back: the rows
        are cut into runs whose windows all span a common stretch of rows (from the run's last row
        to its first row's window end), and a start in a run has at most the free cores of that
        stretch, each group's least over it summed. Stops at the first run whose stretch has
        `size` cores. Returns (a bound for every row before `before`, the first row of that run or
        `before`, a bound for the rows before it or -1 if none): a numpy call or two per run,
        where `candidates` costs a scan and a sampled count per row, and most jobs that cannot
        move are ruled out here."""
        times = self.times
        cores = self.cores
        totals = self.totals
        a, b, dense = own if own is not None else (before, before, None)
        held = True
        most = -1
        p = 0
        while p < before:
            e = bisect_left(times, times[p] + duration, lo=p + 1)
            q = e if e < before else before
            # all groups' least free cores never exceed the least total over the stretch: when
            # that is short (a plain-Python min over a list), it is the run's bound, no numpy call
            if a < b and e > a and q - 1 < b:  # (the own reservation's rows count its cores as free)
                n = min(totals[max(q - 1, a):min(e, b)]) + size
                if q - 1 < a:
                    n = min(n, min(totals[q - 1:a]))
                if e > b:
                    n = min(n, min(totals[b:e]))
            else:
                n = min(totals[q - 1:e])
            if n < size:
                if n > most:
                    most = n
                p = q
                continue
            if a < b and e > a and held:  # the stretch reaches the own reservation: given back
                cores[a:b] += dense
                held = False
            n = int(add(least(cores[q - 1:e], axis=0), dtype=CORES))
            if n >= size:
                if not held:
                    cores[a:b] -= dense
                return n, p, most
            if n > most:
                most = n
            p = q
        if not held:
            cores[a:b] -= dense
        return most, before, most

    def earliest(self, size: int, duration: float, short: list[int],
                 start: int = 0) -> Iterator[tuple[int, int, int, Any]]:
        """`counts` of every row from `start` on where a job of `size` cores could start for
        `duration`, earliest first, found lazily: the rows are scanned forward on their totals, and those left are
        sampled and counted a few at a time (most jobs start at one of the first few), while
        `short` (a list as long as the profile) gets the bound `candidates` gives each row ruled
        out. Do not resume it after the profile changed."""
        times, totals = self.times, self.totals
        m = len(times)
        nb = 0  # past the rows known to have the cores, up to the first short one or a window's end
        rows: list[int] = []
        chunk = 4
        for i in range(start, m):
            n = totals[i]
            if n < size:
                short[i] = n
                continue
            t = times[i] + duration
            if nb <= i:
                nb = i + 1
            while nb < m and times[nb] < t and totals[nb] >= size:
                nb += 1
            if nb < m and times[nb] < t:
                short[i] = totals[nb]
                continue
            rows.append(i)
            rows.append(nb)  # (then `nb` is the window's end: every row between is before it)
            if len(rows) >= chunk:
                yield from self._sift(size, rows[::2], rows[1::2], short)
                rows = []
                chunk *= 2
        if rows:
            yield from self._sift(size, rows[::2], rows[1::2], short)

    def _sift(self, size: int, rows: list[int], ends: list[int], short: list[int]) -> Iterator[tuple[int, int, int, Any]]:
        if len(rows) >= SAMPLE_FROM:
            rows, ends = _cut(rows, ends, self.sampled(rows, ends), size, short)
        return self.counts(rows, ends)

    def counts(self, rows: list[int], ends: list[int]) -> Iterator[tuple[int, int, int, Any]]:
        """Each row of `rows` (ascending candidates, `ends` their windows' ends) with its window's
        end, the free cores per group over the window summed, and those per group (or None).

        A row's window ends no earlier than an earlier row's, so every candidate up to the last
        row of a window shares that row: for such a run, the minima over each window are taken
        from running minima back and forward from that row, all at once."""
        cores = self.cores
        k, m = 0, len(rows)
        while k < m:
            i = rows[k]
            a = ends[k] - 1
            k2 = bisect_right(rows, a, k)
            if k2 - k < 12:  # below this, row by row costs fewer numpy calls
                cap = least(cores[i:a + 1], axis=0)
                yield i, a + 1, int(add(cap, dtype=CORES)), cap
                k += 1
                continue
            run = np.array(rows[k:k2])
            e = np.array(ends[k:k2])
            back = _running_least(cores[i:a + 1][::-1])
            fwd = _running_least(cores[a:int(e[-1])])
            sums = add(np.minimum(back[a - run], fwd[e - 1 - a]), axis=1, dtype=CORES)
            for r, j, n in zip(rows[k:k2], ends[k:k2], sums.tolist()):
                yield r, j, n, None
            k = k2

    def sampled(self, rows: list[int], ends: list[int]) -> list[int]:
        """For each row of `rows`, the free cores per group summed, each group's least taken over
        only the first, middle and last step of the row's window: never fewer than the count over
        the whole window, so a row where this is short of a job is short (most are, on groups)."""
        k = len(rows)
        # the three steps of every window in one take (fewer numpy calls than a fancy index each)
        at = self.cores.take(rows + [e - 1 for e in ends] + [(i + e - 1) >> 1 for i, e in zip(rows, ends)], axis=0)
        low = np.minimum(at[:k], at[k:2 * k])
        np.minimum(low, at[2 * k:], out=low)
        return add(low, axis=1, dtype=CORES).tolist()

    def most_before(self, before: int) -> int:
        """The most free cores (all groups together) at any step before row `before`."""
        return max(self.totals[:before]) if before else -1

    def window(self, i: int, duration: float) -> int:
        """The end (exclusive) of the rows a job starting at row `i` for `duration` spans."""
        return bisect_left(self.times, self.times[i] + duration, lo=i + 1)

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

    def hold(self, t0: float, t1: float, vec: Any, size: int, sign: int = 1, row: int | None = None) -> None:
        """Take (sign 1) or give back (-1) `vec` (`_vec`'s arrays, `size` cores in all) over
        [t0, t1), from row `row` when given (a row of jobs past their estimate shares now with
        row 0), else from `t0`'s row (row 0 for a reservation that is due)."""
        start = row if row is not None else 0 if t0 <= self.times[0] else self.split(t0)
        end = self.split(t1)
        nodes, memk, dense = vec[2:5]  # a whole-row update with the cores as a dense row costs a
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


def _running_least(rows: Any) -> Any:
    """Each group's least over rows[:k + 1], for every k: `np.minimum.accumulate` along rows walks
    each group's column apart (strided), where a minimum per row runs along it (2.5x fewer
    instructions on a few dozen rows of a few hundred groups)."""
    out = np.empty_like(rows)
    out[0] = rows[0]
    low = np.minimum
    for k in range(1, len(rows)):
        low(out[k - 1], rows[k], out=out[k])
    return out


def _cut(rows: list[int], ends: list[int], bound: Any, size: int, short: list[int]) -> tuple[list[int], list[int]]:
    """The rows (and their ends) whose bound reaches `size`; the others' bounds go to `short`."""
    keep = []
    kends = []
    for i, e, n in zip(rows, ends, bound):
        if n < size:
            short[i] = n
        else:
            keep.append(i)
            kends.append(e)
    return keep, kends
