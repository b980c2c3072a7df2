"""The `slurm` kind's availability profile: free cores per processor and memory per node over time.

A step function from now: row k holds what is free on [t_k, t_k+1). Built from what is free now
plus what running (and booting) jobs release at their expected ends; each reservation the backfill
pass makes is subtracted over its [start, end). A job fits at t for d seconds on the minimum of
the rows that [t, t + d) touches (a reservation may end inside the window and give cores back,
but never before the job needs them: the minimum is the conservative reading, as Slurm's
`bf_resolution` rounding is).

Hand-written rather than reusing `backfill.reservation`: that computes one reservation for EASY's
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
        self._c = np.zeros((cap, len(free_cores)), dtype=np.int64)
        self._m = np.zeros((cap, len(free_mem)), dtype=np.float64)
        self._c[0] = free_cores
        self._m[0] = free_mem
        for t, cores, mem in releases:
            k = row[max(t, now)]
            for p, n in cores.items():
                self._c[k, p] += n
            for n, m in mem.items():
                self._m[k, n] += m
        n = len(times)
        np.cumsum(self._c[:n], axis=0, out=self._c[:n])
        with np.errstate(invalid="ignore"):  # inf memory stays inf
            np.cumsum(self._m[:n], axis=0, out=self._m[:n])
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
        self._c[k + 2:n + 1] = self._c[k + 1:n].copy()
        self._m[k + 2:n + 1] = self._m[k + 1:n].copy()
        self._c[k + 1] = self._c[k]
        self._m[k + 1] = self._m[k]
        self.t.insert(k + 1, t)
        return k + 1

    def add(self, start: float, end: float, cores: dict[int, int], mem: dict[int, float], sign: int) -> None:
        """Add (sign +1) or take (-1) cores per processor and memory per node over [start, end)."""
        a = self._split(max(start, self.t[0]))
        b = self._split(end) if end < math.inf else len(self.t)
        for p, k in cores.items():
            self._c[a:b, p] += sign * k
        for n, m in mem.items():
            self._m[a:b, n] += sign * m

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

    def usable_rows(self, node_of: np.ndarray, mem_per_core: float) -> np.ndarray:
        """Cores a job could use in each row alone, counting node memory (`node_of`: processor x node 0/1)."""
        per_node = self.cores @ node_of
        if mem_per_core > 0:
            per_node = np.minimum(per_node, np.floor(self.mem / mem_per_core + 1e-9))
        return per_node.sum(axis=1)


def take(ranked: list[Any], cores: np.ndarray, mem: np.ndarray, size: int, mem_per_core: float) -> dict[Any, int] | None:
    """Cores of `size` in `ranked` processor order within the free `cores`/`mem` vectors, or None."""
    out: dict[Any, int] = {}
    used: dict[int, float] = {}
    need = size
    for p in ranked:
        k = int(cores[p.idx])
        if k <= 0:
            continue
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
