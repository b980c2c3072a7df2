"""Conservative backfilling's slot search on a group profile (`profile.Profile` is one):
where a job of some size and duration can start, given each group's free cores per step.

The cost is numpy's per call, not the rows, so the steps a job cannot start at are ruled out in
bulk: a kept job first by the stretch its runs of starts share (`core_bound`; a stretch whose
least total is short costs no numpy call), then by all groups' free cores together and a sampled
count (`candidates`), then, for a run of candidates whose windows share a row, by each group's
least free cores over every window at once (`counts`); a new or re-placed job by the same tests a
few rows at a time, earliest first (`earliest`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Any

import numpy as np

least = np.minimum.reduce
add = np.add.reduce
# cores per group are counted in int32: they fit (a count never exceeds the platform's cores times
# the queue), and numpy's minimum on int32 is one SIMD instruction where int64's is emulated below
# AVX-512 (2% fewer instructions on the gaia window); sums over groups (`add`) are asked in int32
# too (a sum is bounded as a count is), where numpy would make them in int64 through a cast
CORES = np.int32
# from this many candidate rows a search first rules rows out by a sampled bound (`sampled`)
SAMPLE_FROM = 3


class Search:
    """The searches of a profile: `times` (each step's start), `cores` (free cores per group per
    step, a matrix) and `totals` (all groups' free cores per step, a list)."""

    times: list[float]
    cores: Any
    totals: list[int]

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

    def _sift(self, size: int, rows: list[int], ends: list[int],
              short: list[int]) -> Iterator[tuple[int, int, int, Any]]:
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
