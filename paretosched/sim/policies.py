"""Job-selection and resource-selection policies of thesis table 3.2, as strategy functions.

Job policies pick the next job of the queue. Resource policies rank processors (keys are
evaluated once per job, as HDeepRM sorts its core pool once per decision) and the allocator
takes free cores in that order, honouring node memory (a hard limit) and, when asked, a
bandwidth cap. Ties always break on platform order, so every run is deterministic.
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable

from paretosched.sim.state import NodeState, ProcState

Alloc = list[tuple[ProcState, int]]


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

    def ranked(self) -> list[ProcState]:
        ranked = self._rank()
        if self.prefer_on:
            # with node switch-off, cores of running nodes first, then booting, then off ones
            ranked = sorted(ranked, key=_power_rank)
        return ranked

    def _rank(self) -> list[ProcState]:
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
        if ranked is None:
            ranked = self.ranked()
        return _take(ranked, job, limits, mem_limits, self.bw_cap if job.bw > 0 else None)

    def _allocate_random(self, job: Any, limits: dict[int, int] | None,
                         mem_limits: dict[int, float] | None) -> Alloc | None:
        # a random free core first, then its processor's other free cores: each processor's chance
        # to come first is proportional to its free cores
        pool = [p for p in self.procs for _ in range(len(p.free))]
        if len(pool) < job.size:
            return None
        self.rng.shuffle(pool)
        order = list(dict.fromkeys(pool))
        if self.prefer_on:
            order.sort(key=_power_rank)
        return _take(order, job, limits, mem_limits, self.bw_cap if job.bw > 0 else None)


_POWER_RANK = {NodeState.ON: 0, NodeState.BOOTING: 1, NodeState.OFF: 2}


def _power_rank(p: ProcState) -> int:
    return _POWER_RANK[p.node.power_state]


def _take(ranked: list[ProcState], job: Any, limits: dict[int, int] | None,
          mem_limits: dict[int, float] | None, cap: float | None) -> Alloc | None:
    """Greedy core taking in rank order; with a bandwidth cap, a second pass fills what the first could not."""
    if cap is None:
        return _take_once(ranked, job.size, job.mem, limits, mem_limits)
    need = job.size
    mem = job.mem
    taken: dict[ProcState, int] = {}
    node_mem: dict[Any, float] = {}
    for pass_cap in (cap, None):
        for p in ranked:
            have = taken.get(p, 0)
            k = len(p.free) - have
            if k <= 0:
                continue
            if limits is not None:
                lim = limits.get(p.idx)
                if lim is not None:
                    k = min(k, lim - have)
                    if k <= 0:
                        continue
            if pass_cap is not None:
                room = pass_cap * p.bw_cap - p.bw_used - have * job.bw
                k = min(k, int(math.floor(room / job.bw + 1e-9))) if room < math.inf else k
                if k <= 0:
                    continue
            if k > need:
                k = need
            if mem > 0 and p.node.mem_cap < math.inf:
                node = p.node
                free_mem = node_mem.get(node)
                if free_mem is None:
                    free_mem = node.mem_free
                    if mem_limits is not None and node.idx in mem_limits:
                        free_mem = min(free_mem, mem_limits[node.idx])
                k = min(k, int(math.floor(free_mem / mem + 1e-9)))
                if k <= 0:
                    continue
                node_mem[node] = free_mem - k * mem
            taken[p] = have + k
            need -= k
            if need == 0:
                return list(taken.items())
    return None


def _take_once(ranked: list[ProcState], need: int, mem: float, limits: dict[int, int] | None,
               mem_limits: dict[int, float] | None) -> Alloc | None:
    """The single-pass case of `_take` (no bandwidth cap): the hot path, so kept minimal."""
    out: Alloc = []
    node_mem: dict[Any, float] | None = {} if mem > 0 else None
    for p in ranked:
        k = len(p.free)
        if not k:
            continue
        if limits is not None:
            lim = limits.get(p.idx)
            if lim is not None and lim < k:
                if lim <= 0:
                    continue
                k = lim
        if k > need:
            k = need
        if node_mem is not None:
            node = p.node
            if node.mem_cap < math.inf:
                free_mem = node_mem.get(node)
                if free_mem is None:
                    free_mem = node.mem_free
                    if mem_limits is not None:
                        lm = mem_limits.get(node.idx)
                        if lm is not None and lm < free_mem:
                            free_mem = lm
                fit = int(math.floor(free_mem / mem + 1e-9))
                if fit < k:
                    if fit <= 0:
                        continue
                    k = fit
                node_mem[node] = free_mem - k * mem
        out.append((p, k))
        need -= k
        if need == 0:
            return out
    return None
