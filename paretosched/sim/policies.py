"""Job-selection and resource-selection policies of thesis table 3.2, as strategy functions.

Job policies pick the next job of the queue. Resource policies choose cores, honouring node
memory (a hard limit) and, when asked, a bandwidth cap:
- static keys (`high_gflops`: peak x DVFS; `low_power`: busy-core power) rank processors once
  and the allocator takes free cores in that order (consolidation);
- dynamic keys (`high_cores`, `high_mem`, `high_mem_bw`) are re-evaluated after every core taken,
  counting what the job itself has taken so far, as HDeepRM's `get_resources` re-sorts its core
  pool after each pick: a multi-core job spreads over the processors (or nodes) with the most
  free cores, memory or bandwidth (`spreading.py`);
- `random` takes a random free core, then its processor's other free cores.
Ties always break on platform order, so every run is deterministic.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from paretosched.sim.spreading import SpreadIndex
from paretosched.sim.state import ProcState
from paretosched.sim.taking import Alloc, power_rank, take

_DYNAMIC = ("high_cores", "high_mem", "high_mem_bw")


def _key_first(j: Any) -> Any:
    return j.seq


def _key_shortest(j: Any) -> Any:
    return (j.req_time, j.seq)


def _key_smallest(j: Any) -> Any:
    return (j.size, j.seq)


def _key_low_mem(j: Any) -> Any:
    return (j.mem, j.seq)


def _key_low_mem_bw(j: Any) -> Any:
    return (j.bw, j.seq)


JOB_KEYS: dict[str, Callable[[Any], Any]] = {
    "first": _key_first, "shortest": _key_shortest, "smallest": _key_smallest,
    "low_mem": _key_low_mem, "low_mem_bw": _key_low_mem_bw,
}


class JobSelector:
    """Picks jobs from the queue by one policy; `random` draws from the run's scheduler stream."""

    __slots__ = ("name", "key", "rng")

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name = name
        self.key = JOB_KEYS.get(name)
        self.rng = rng

    def head(self, queue: list[Any]) -> Any:
        if self.name == "first":
            return queue[0]  # the queue is kept in arrival order
        if self.key is None:
            return queue[self.rng.randrange(len(queue))]
        return min(queue, key=self.key)

    def order(self, queue: list[Any]) -> list[Any]:
        """The whole queue in this policy's preference order (for backfilling)."""
        if self.name == "first":
            return list(queue)
        if self.key is None:
            out = list(queue)
            self.rng.shuffle(out)
            return out
        return sorted(queue, key=self.key)


class ResourceSelector:
    """Ranks processors for one job and takes free cores from them in that order."""

    def __init__(self, name: str, procs: list[ProcState], rng: random.Random, bw_cap: float | None,
                 prefer_on: bool = False) -> None:
        self.name = name
        self.prefer_on = prefer_on
        self.procs = procs
        self.rng = rng
        self.bw_cap = bw_cap
        self.max_speed = max(p.speed for p in procs)
        if name == "high_gflops":
            self._static = sorted(procs, key=lambda p: (-p.speed, p.idx))
        elif name == "low_power":
            self._static = sorted(procs, key=lambda p: (p.busy_w, p.idx))
        else:
            self._static = None
        self._pos: dict[ProcState, int] | None = None
        self._dynamic = SpreadIndex(name, procs, bw_cap, prefer_on) if name in _DYNAMIC else None

    @property
    def static(self) -> bool:
        """True when the ranking depends on nothing that changes (high_gflops, low_power)."""
        return self._static is not None

    def rank_pos(self) -> Callable[[ProcState], Any]:
        """A sort key giving `ranked()`'s order, for static rankings (sorting a few processors
        by it is cheaper than walking the whole ranking)."""
        pos = self._pos
        if pos is None:
            pos = self._pos = {p: i for i, p in enumerate(self._static or ())}
        if self.prefer_on:
            return lambda p: (power_rank(p), pos[p])
        return pos.__getitem__

    def ranked(self) -> list[ProcState]:
        ranked = self._rank()
        if self.prefer_on:
            # with node switch-off, cores of running nodes first, then booting, then off ones
            ranked = sorted(ranked, key=power_rank)
        return ranked

    def _rank(self) -> list[ProcState]:
        """Processors in preference order now (dynamic policies: before the job takes anything)."""
        name = self.name
        if self._static is not None:
            return self._static
        procs = [p for p in self.procs if p.free]
        if name == "high_cores":
            procs.sort(key=lambda p: (-len(p.free), p.idx))
        elif name == "high_mem":
            procs.sort(key=lambda p: (-p.node.mem_free, p.idx))
        elif name == "high_mem_bw":
            procs.sort(key=lambda p: (-(p.bw_cap - p.bw_used), p.idx))
        return procs

    def allocate(self, job: Any, limits: dict[int, int] | None = None,
                 mem_limits: dict[int, float] | None = None,
                 ranked: list[ProcState] | None = None) -> Alloc | None:
        """Cores for `job` (list of (processor, count)) or None if it cannot start now.

        `limits`/`mem_limits` cap cores per processor and memory per node (EASY's reservation);
        `ranked` reuses a ranking computed for the current state (backfilling asks many times).
        """
        if self.name == "random":
            return self._allocate_random(job, limits, mem_limits)
        if self._static is None:
            return self._allocate_per_core(job, limits, mem_limits)
        if ranked is None:
            ranked = self.ranked()
        return take(ranked, job, limits, mem_limits, self.bw_cap if job.bw > 0 else None)

    def _allocate_per_core(self, job: Any, limits: dict[int, int] | None,
                           mem_limits: dict[int, float] | None) -> Alloc | None:
        """Dynamic policies: one core at a time on the best processor given what is taken."""
        return self._dynamic.allocate(job, limits, mem_limits)  # type: ignore[union-attr]

    def _allocate_random(self, job: Any, limits: dict[int, int] | None,
                         mem_limits: dict[int, float] | None) -> Alloc | None:
        # Processors in a random order weighted by their free cores, without replacement
        # (Efraimidis-Spirakis keys u^(1/w)): the first is the processor of a uniformly random free
        # core, and so on. O(processors) per job, where shuffling every free core was O(cores).
        rnd = self.rng.random
        cands = [p for p in self.procs if p.free]
        # keys drawn in platform order, then a C-level index sort (a stable reverse sort keeps
        # platform order among equal keys): the same draws and order as sorting with a key lambda,
        # without a Python call per processor
        keys = [rnd() ** (1.0 / len(p.free)) for p in cands]
        order = [cands[i] for i in sorted(range(len(cands)), key=keys.__getitem__, reverse=True)]
        if self.prefer_on:
            order.sort(key=power_rank)
        return take(order, job, limits, mem_limits, self.bw_cap if job.bw > 0 else None)
