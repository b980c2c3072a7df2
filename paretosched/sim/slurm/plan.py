"""The `slurm` kind's availability profile: free cores per processor and memory per node over time.

A step function from now: row k holds what is free on [t_k, t_k+1). Built from what is free now
plus what running (and booting) jobs release at their expected ends; each reservation the backfill
pass makes is subtracted over its [start, end). A job fits at t for d seconds on the minimum of
the rows that [t, t + d) touches (a reservation may end inside the window and give cores back,
but never before the job needs them: the minimum is the conservative reading, as Slurm's
`bf_resolution` rounding is).

Beside the cores, each row counts the backfill reservations that hold each node: a reservation of
Slurm's backfill holds whole nodes (backfill.c, `_add_reservation` takes nodes out of the
`node_space` bitmaps, whatever select plugin), while running jobs hold their cores (the select
plugin's own state, which `_try_sched`'s will-run test reads). A node held in a row gives nothing
in it (`blocked`).

Hand-written rather than reusing `backfill.easy.reservation`: that computes one reservation for EASY's
head job against the running jobs; Slurm's backfill keeps a reservation for every job it tests.
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np


class Profile:
    def __init__(self, now: float, free_cores: np.ndarray, free_mem: np.ndarray, proc_node: np.ndarray,
                 releases: list[tuple[float, dict[int, int], dict[int, float]]] = ()) -> None:
        """`releases`: (time, cores per processor, memory per node) that running jobs give back."""
        self.proc_node = proc_node  # node index of each processor
        times = sorted({max(t, now) for t, _, _ in releases} | {now})
        row = {t: i for i, t in enumerate(times)}
        # built in one go (deltas, then a running sum), rows kept in buffers with spare room:
        # reservations insert breakpoints, and np.insert's copies were most of a pass's cost
        cap = 2 * len(times) + 16
        n_nodes = len(free_mem)
        self._c = np.zeros((cap, len(free_cores)), dtype=np.int64)
        self._m = np.zeros((cap, n_nodes), dtype=np.float64)
        # free cores per node, kept beside the per-processor rows: what `usable_rows` asks of every
        # job a pass tests (a processor x node product per job was most of a large window's cost)
        self._n = np.zeros((cap, n_nodes), dtype=np.int64)
        self._b = np.zeros((cap, n_nodes), dtype=np.int64)  # backfill reservations holding each node
        self.n_blocks = 0  # reservations made: none, and the node rows are not read at all
        self._c[0] = free_cores
        self._m[0] = free_mem
        np.add.at(self._n[0], proc_node, free_cores)
        # every release's deltas in three flat lists, then one indexed add per array: a numpy scalar
        # update per processor and release was most of the build (a build per decision). np.add.at adds
        # in list order, which is the order the memory floats were always summed in
        rows, procs, counts, mrows, mnodes, mvals = [], [], [], [], [], []
        for t, cores, mem in releases:
            k = row[max(t, now)]
            if cores:
                procs.extend(cores)
                counts.extend(cores.values())
                rows.extend([k] * len(cores))
            if mem:
                mnodes.extend(mem)
                mvals.extend(mem.values())
                mrows.extend([k] * len(mem))
        if procs:
            k_arr = np.array(rows, dtype=np.int64)
            p_arr = np.array(procs, dtype=np.int64)
            c_arr = np.array(counts, dtype=np.int64)
            np.add.at(self._c, (k_arr, p_arr), c_arr)
            np.add.at(self._n, (k_arr, proc_node[p_arr]), c_arr)
        if mnodes:
            np.add.at(self._m, (np.array(mrows, dtype=np.int64), np.array(mnodes, dtype=np.int64)),
                      np.array(mvals, dtype=np.float64))
        n = len(times)
        np.cumsum(self._c[:n], axis=0, out=self._c[:n])
        np.cumsum(self._n[:n], axis=0, out=self._n[:n])
        with np.errstate(invalid="ignore"):  # inf memory stays inf
            np.cumsum(self._m[:n], axis=0, out=self._m[:n])
        self.version = 0  # bumped by every change, so a pass can reuse what it read from an unchanged profile
        self._usable: dict[tuple[float, bytes | None], tuple[int, np.ndarray]] = {}
        self._times = (-1, np.empty(0))
        self.t: list[float] = times

    @property
    def cores(self) -> np.ndarray:
        return self._c[:len(self.t)]

    @property
    def mem(self) -> np.ndarray:
        return self._m[:len(self.t)]

    def _split(self, t: float) -> int:
        """Make `t` a breakpoint; returns its row."""
        k = bisect.bisect_right(self.t, t) - 1
        if self.t[k] == t:
            return k
        n = len(self.t)
        if n == len(self._c):
            self._c = np.concatenate([self._c, np.zeros_like(self._c)])
            self._m = np.concatenate([self._m, np.zeros_like(self._m)])
            self._n = np.concatenate([self._n, np.zeros_like(self._n)])
            self._b = np.concatenate([self._b, np.zeros_like(self._b)])
        for a in (self._c, self._m, self._n, self._b):
            a[k + 2:n + 1] = a[k + 1:n].copy()
            a[k + 1] = a[k]
        self.t.insert(k + 1, t)
        return k + 1  # `add`, its only caller, bumps the version

    def add(self, start: float, end: float, cores: dict[int, int], mem: dict[int, float], sign: int) -> None:
        """Add (sign +1) or take (-1) cores per processor and memory per node over [start, end)."""
        a = self._split(max(start, self.t[0]))
        b = self._split(end) if end < math.inf else len(self.t)
        if cores:  # one fancy-indexed update per array, not one slice per processor
            procs = np.fromiter(cores, np.int64, len(cores))
            counts = np.fromiter(cores.values(), np.int64, len(cores)) * sign
            self._c[a:b, procs] += counts
            per_node: dict[int, int] = {}
            for n, k in zip(self.proc_node[procs].tolist(), counts.tolist()):
                per_node[n] = per_node.get(n, 0) + k
            self._n[a:b, list(per_node)] += np.fromiter(per_node.values(), np.int64, len(per_node))
        if mem:
            nodes = np.fromiter(mem, np.int64, len(mem))
            self._m[a:b, nodes] += sign * np.fromiter(mem.values(), np.float64, len(mem))
        self.version += 1

    def block(self, start: float, end: float, nodes: list[int]) -> None:
        """Hold whole nodes over [start, end) (a backfill reservation: backfill.c `_add_reservation`)."""
        a = self._split(max(start, self.t[0]))
        b = self._split(end) if end < math.inf else len(self.t)
        self._b[a:b, nodes] += 1
        self.n_blocks += 1
        self.version += 1

    def blocked(self, start: float, last: float, before: float) -> np.ndarray:
        """Nodes held by a reservation in a row that begins at or before `last` or before `before`
        and ends after `start` (backfill.c: a row conflicts with a job ending at `last` when its
        begin_time <= end_time, inclusive; `before` is the rounded end of the job's own reservation,
        `_test_resv_overlap`'s begin_time < end_reserve)."""
        a = bisect.bisect_right(self.t, max(start, self.t[0])) - 1
        b = max(bisect.bisect_right(self.t, last), bisect.bisect_left(self.t, before), a + 1)
        return self._b[a:b].max(axis=0) > 0

    def window(self, t: float, d: float) -> tuple[np.ndarray, np.ndarray]:
        """Cores and memory free throughout [t, t + d)."""
        a = bisect.bisect_right(self.t, t) - 1
        b = bisect.bisect_left(self.t, t + d) if d > 0 else a + 1
        b = max(b, a + 1)
        return self.cores[a:b].min(axis=0), self.mem[a:b].min(axis=0)

    def enough(self, cores: np.ndarray, mem: np.ndarray, size: int, mem_per_core: float) -> bool:
        """Whether `size` cores fit in these free vectors at all, counting node memory (vectorised:
        most candidate times fail, and this rejects them without the per-processor walk of `take`)."""
        per_node = np.bincount(self.proc_node, weights=cores, minlength=len(mem))
        if mem_per_core > 0:
            per_node = np.minimum(per_node, np.floor(mem / mem_per_core + 1e-9))
        return float(per_node.sum()) >= size

    def times(self) -> np.ndarray:
        """The breakpoints as an array (reused while the profile is unchanged)."""
        if self._times[0] != self.version:
            self._times = (self.version, np.array(self.t))
        return self._times[1]

    def usable_rows(self, mem_per_core: float, allow: np.ndarray | None = None) -> np.ndarray:
        """Cores a job could use in each row alone, counting node memory, on the nodes `allow` marks (all
        when None: a partition's otherwise); reused while the profile is unchanged."""
        key = (mem_per_core, None if allow is None else allow.tobytes())
        hit = self._usable.get(key)
        if hit is not None and hit[0] == self.version:
            return hit[1]
        per_node = self._n[:len(self.t)]
        if self.n_blocks:
            per_node = np.where(self._b[:len(self.t)] > 0, 0, per_node)
        if mem_per_core > 0:
            per_node = np.minimum(per_node, np.floor(self.mem / mem_per_core + 1e-9))
        if allow is not None:
            per_node = np.where(allow, per_node, 0)
        usable = per_node.sum(axis=1)
        self._usable[key] = (self.version, usable)
        return usable


def take(ranked: list[Any], cores: np.ndarray, mem: np.ndarray, size: int, mem_per_core: float,
         order: np.ndarray | None = None) -> dict[Any, int] | None:
    """Cores of `size` in `ranked` processor order within the free `cores`/`mem` vectors, or None
    (`order`: the processors' indices in `ranked` order, if the caller has them)."""
    if order is None:
        order = np.fromiter((p.idx for p in ranked), np.int64, len(ranked))
    avail = cores[order]
    pos = np.flatnonzero(avail > 0)  # only processors with a free core are walked
    out: dict[Any, int] = {}
    used: dict[int, float] = {}
    need = size
    for i, k in zip(pos.tolist(), avail[pos].tolist()):
        p = ranked[i]
        k = min(k, need)
        if mem_per_core > 0:
            n = p.node.idx
            left = mem[n] - used.get(n, 0.0)
            if left < math.inf:
                k = min(k, int(math.floor(left / mem_per_core + 1e-9)))
                if k <= 0:
                    continue
                used[n] = used.get(n, 0.0) + k * mem_per_core
        out[p] = k
        need -= k
        if need == 0:
            return out
    return None


def take_nodes(ranked: list[Any], cores: np.ndarray, capacity: list[int], size: int, mem_per_core: float,
               mem: list[float]) -> dict[Any, int] | None:
    """select/linear: whole free nodes in `ranked` order (first fit) until they hold `size` cores;
    the job runs on `size` of their cores, the first ones in rank order, within each node's memory
    `mem` (its capacity: a free node is the job's alone). A node is free when every processor of it
    has all its cores free."""
    nodes: dict[Any, list[Any]] = {}
    for p in ranked:
        nodes.setdefault(p.node, []).append(p)
    out: dict[Any, int] = {}
    need = size
    for node, procs in nodes.items():
        if any(cores[p.idx] < capacity[p.idx] for p in node.procs):
            continue
        room = math.inf if mem_per_core <= 0 else math.floor(mem[node.idx] / mem_per_core + 1e-9)
        if room <= 0:
            continue
        for p in procs:
            k = int(min(capacity[p.idx], need, room))
            if k <= 0:
                break
            out[p] = k
            need -= k
            room -= k
        if need == 0:
            return out
    return None
