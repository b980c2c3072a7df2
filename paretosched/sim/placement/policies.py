"""Job-selection and resource-selection policies of thesis table 3.2, as strategy objects.

Each policy is an object behind one contract (as CloudSimPy's scheduler holds an interchangeable
algorithm object): a `JobSelector` gives the next job (`head`) and the queue in its order
(`order`); a `ResourceSelector` ranks processors (`ranked`) and takes cores for a job
(`allocate`). `job_selector(name, ...)` and `resource_selector(name, ...)` build one from the
name the user wrote (config.JobPolicy/ResourcePolicy); nothing else looks at the name.

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

import math
import random
from collections.abc import Callable
from functools import partial
from operator import attrgetter
from typing import Any, ClassVar

from paretosched.sim.engine.state import ProcState
from paretosched.sim.placement.spreading import BandwidthSpread, CoreSpread, MemorySpread, SpreadIndex
from paretosched.sim.placement.taking import Alloc, power_rank, take, take_ones

COUNTED_TAKE = True  # the one-core shortcut of `_StaticRanking.allocate` (tests compare schedules without it)

# -- job policies ------------------------------------------------------------------------------


class JobSelector:
    """A job policy: the next job of the queue (`head`) and the whole queue in its preference
    order (`order`, for backfilling). `random` draws from the run's scheduler stream (`rng`)."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def head(self, queue: list[Any]) -> Any:
        raise NotImplementedError

    def order(self, queue: list[Any]) -> list[Any]:
        raise NotImplementedError


class FirstCome(JobSelector):
    """`first`: arrival order."""

    __slots__ = ()

    def head(self, queue: list[Any]) -> Any:
        return queue[0]  # the queue is kept in arrival order

    def order(self, queue: list[Any]) -> list[Any]:
        return list(queue)


class RandomJob(JobSelector):
    """`random`: a uniformly random queued job."""

    __slots__ = ()

    def head(self, queue: list[Any]) -> Any:
        return queue[self.rng.randrange(len(queue))]

    def order(self, queue: list[Any]) -> list[Any]:
        out = list(queue)
        self.rng.shuffle(out)
        return out


class ByKey(JobSelector):
    """The job with the smallest key first (`JOB_KEYS`); every key ends with the arrival number
    `seq`, so ties go to the earlier job."""

    __slots__ = ("key",)

    def __init__(self, rng: random.Random, key: Callable[[Any], Any]) -> None:
        super().__init__(rng)
        self.key = key

    def head(self, queue: list[Any]) -> Any:
        return min(queue, key=self.key)

    def order(self, queue: list[Any]) -> list[Any]:
        return sorted(queue, key=self.key)


JOB_KEYS: dict[str, Callable[[Any], Any]] = {  # attrgetter: a tuple key without a Python call per job
    "shortest": attrgetter("req_time", "seq"), "smallest": attrgetter("size", "seq"),
    "low_mem": attrgetter("mem", "seq"), "low_mem_bw": attrgetter("bw", "seq"),
}
JOB_SELECTORS: dict[str, Callable[[random.Random], JobSelector]] = {
    "random": RandomJob, "first": FirstCome,
    **{name: partial(ByKey, key=key) for name, key in JOB_KEYS.items()},
}


def job_selector(name: str, rng: random.Random) -> JobSelector:
    """The job policy the user named (config.JobPolicy)."""
    return JOB_SELECTORS[name](rng)


# -- resource policies -------------------------------------------------------------------------


class ResourceSelector:
    """A resource policy: ranks processors for one job and takes free cores from them.

    `prefer_on` (node switch-off enabled): cores of running nodes first, then booting, then off.
    """

    name: ClassVar[str]
    static: ClassVar[bool] = False  # True when the ranking depends on nothing that changes

    def __init__(self, procs: list[ProcState], rng: random.Random, bw_cap: float | None,
                 prefer_on: bool = False) -> None:
        self.prefer_on = prefer_on
        self.procs = procs
        self.rng = rng
        self.bw_cap = bw_cap
        self.max_speed = max(p.speed for p in procs)

    def ranked(self) -> list[ProcState]:
        """Processors in preference order now (dynamic policies: before the job takes anything)."""
        ranked = self._rank()
        if self.prefer_on:
            ranked = sorted(ranked, key=power_rank)
        return ranked

    def _rank(self) -> list[ProcState]:
        return [p for p in self.procs if p.free]  # no preference: platform order

    def rank_pos(self) -> Callable[[ProcState], Any]:
        """A sort key giving `ranked()`'s order (static rankings only)."""
        raise TypeError(f"{self.name} has no static ranking")

    def allocate(self, job: Any, limits: dict[int, int] | None = None,
                 mem_limits: dict[int, float] | None = None,
                 ranked: list[ProcState] | None = None) -> Alloc | None:
        """Cores for `job` (list of (processor, count)) or None if it cannot start now.

        `limits`/`mem_limits` cap cores per processor and memory per node (EASY's reservation);
        `ranked` reuses a ranking computed for the current state (backfilling asks many times;
        only static rankings use it).
        """
        raise NotImplementedError


class _StaticRanking(ResourceSelector):
    """Processors ranked once by a fixed key; the allocator takes free cores in that order."""

    static = True
    order_key: ClassVar[Callable[[ProcState], Any]]

    def __init__(self, procs: list[ProcState], rng: random.Random, bw_cap: float | None,
                 prefer_on: bool = False) -> None:
        super().__init__(procs, rng, bw_cap, prefer_on)
        self._static = sorted(procs, key=self.order_key)
        self._pos: dict[ProcState, int] | None = None
        # one core per processor and no node memory limit: an uncapped allocation is the first free
        # processors in rank order, one core each (what `take_once` finds, one part at a time)
        self._counted = COUNTED_TAKE and all(p.ncores == 1 and p.node.mem_cap == math.inf for p in procs)

    def _rank(self) -> list[ProcState]:
        return self._static

    def rank_pos(self) -> Callable[[ProcState], Any]:
        """A sort key giving `ranked()`'s order (sorting a few processors by it is cheaper than
        walking the whole ranking)."""
        pos = self._pos
        if pos is None:
            pos = self._pos = {p: i for i, p in enumerate(self._static)}
        if self.prefer_on:
            return lambda p: (power_rank(p), pos[p])
        return pos.__getitem__

    def allocate(self, job: Any, limits: dict[int, int] | None = None,
                 mem_limits: dict[int, float] | None = None,
                 ranked: list[ProcState] | None = None) -> Alloc | None:
        if ranked is None:
            ranked = self.ranked()
        cap = self.bw_cap if job.bw > 0 else None
        if self._counted and limits is None and cap is None:
            return take_ones(ranked, job.size)
        return take(ranked, job, limits, mem_limits, cap)


class HighGflops(_StaticRanking):
    """Fastest processors first (peak x DVFS)."""

    name, order_key = "high_gflops", staticmethod(lambda p: (-p.speed, p.idx))


class LowPower(_StaticRanking):
    """Processors drawing the least busy-core power first."""

    name, order_key = "low_power", staticmethod(lambda p: (p.busy_w, p.idx))


class _Spreading(ResourceSelector):
    """A dynamic policy: one core at a time on the best processor given what the job has taken
    (`spreading.py`); `rank_key` ranks the processors before the job takes anything."""

    index_type: ClassVar[type[SpreadIndex]]
    rank_key: ClassVar[Callable[[ProcState], Any]]

    def __init__(self, procs: list[ProcState], rng: random.Random, bw_cap: float | None,
                 prefer_on: bool = False) -> None:
        super().__init__(procs, rng, bw_cap, prefer_on)
        self._index = self.index_type(procs, bw_cap, prefer_on)

    def _rank(self) -> list[ProcState]:
        procs = [p for p in self.procs if p.free]
        procs.sort(key=self.rank_key)
        return procs

    def allocate(self, job: Any, limits: dict[int, int] | None = None,
                 mem_limits: dict[int, float] | None = None,
                 ranked: list[ProcState] | None = None) -> Alloc | None:
        return self._index.allocate(job, limits, mem_limits)


class HighCores(_Spreading):
    """Most free cores first."""

    name, index_type, rank_key = "high_cores", CoreSpread, staticmethod(lambda p: (-len(p.free), p.idx))


class HighMem(_Spreading):
    """Most free node memory first."""

    name, index_type, rank_key = "high_mem", MemorySpread, staticmethod(lambda p: (-p.node.mem_free, p.idx))


class HighMemBw(_Spreading):
    """Most memory bandwidth left first."""

    name, index_type = "high_mem_bw", BandwidthSpread
    rank_key = staticmethod(lambda p: (-(p.bw_cap - p.bw_used), p.idx))


class RandomCores(ResourceSelector):
    """A uniformly random free core, then its processor's other free cores, and so on."""

    name = "random"

    def allocate(self, job: Any, limits: dict[int, int] | None = None,
                 mem_limits: dict[int, float] | None = None,
                 ranked: list[ProcState] | None = None) -> Alloc | None:
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


RESOURCE_SELECTORS: dict[str, type[ResourceSelector]] = {
    c.name: c for c in (RandomCores, HighGflops, HighCores, HighMem, HighMemBw, LowPower)}


def resource_selector(name: str, procs: list[ProcState], rng: random.Random, bw_cap: float | None,
                      prefer_on: bool = False) -> ResourceSelector:
    """The resource policy the user named (config.ResourcePolicy)."""
    return RESOURCE_SELECTORS[name](procs, rng, bw_cap, prefer_on)
