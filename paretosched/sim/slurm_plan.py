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
    def __init__(self, now: float, free_cores: np.ndarray, free_mem: np.ndarray, proc_node: np.ndarray) -> None:
        self.proc_node = proc_node  # node index of each processor
        self.t: list[float] = [now]
        self.cores = free_cores[None, :].astype(np.int64)
        self.mem = free_mem[None, :].astype(np.float64)

    def _split(self, t: float) -> int:
        """Make `t` a breakpoint; returns its row."""
        k = bisect.bisect_right(self.t, t) - 1
        if self.t[k] == t:
            return k
        self.t.insert(k + 1, t)
        self.cores = np.insert(self.cores, k + 1, self.cores[k], axis=0)
        self.mem = np.insert(self.mem, k + 1, self.mem[k], axis=0)
        return k + 1

    def add(self, start: float, end: float, cores: dict[int, int], mem: dict[int, float], sign: int) -> None:
        """Add (sign +1) or take (-1) cores per processor and memory per node over [start, end)."""
        a = self._split(max(start, self.t[0]))
        b = self._split(end) if end < math.inf else len(self.t)
        for p, k in cores.items():
            self.cores[a:b, p] += sign * k
        for n, m in mem.items():
            self.mem[a:b, n] += sign * m

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
            with np.errstate(invalid="ignore"):
                per_node = np.minimum(per_node, np.floor(mem / mem_per_core + 1e-9))
        return float(per_node.sum()) >= size


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
