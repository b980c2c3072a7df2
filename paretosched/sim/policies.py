"""Job-selection and resource-selection policies of thesis table 3.2, as strategy functions.

Job policies pick the next job of the queue. Resource policies choose cores, honouring node
memory (a hard limit) and, when asked, a bandwidth cap:
- static keys (`high_gflops`: peak x DVFS; `low_power`: busy-core power) rank processors once
  and the allocator takes free cores in that order (consolidation);
- dynamic keys (`high_cores`, `high_mem`, `high_mem_bw`) are re-evaluated after every core taken,
  counting what the job itself has taken so far, as HDeepRM's `get_resources` re-sorts its core
  pool after each pick: a multi-core job spreads over the processors (or nodes) with the most
  free cores, memory or bandwidth;
- `random` takes a random free core, then its processor's other free cores.
Ties always break on platform order, so every run is deterministic.
"""

from __future__ import annotations

import heapq
import math
import random
from typing import Any, Callable

from paretosched.sim.state import NodeState, ProcState

Alloc = list[tuple[ProcState, int]]

_DYNAMIC = ("high_cores", "high_mem", "high_mem_bw")
_HEAP_SLACK, _HEAP_MIN = 3, 64  # a dynamic policy's heap is rebuilt beyond slack x processors + min


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
        # dynamic policies: a persistent heap of (rank, key, idx, stamp, proc) over processors with
        # free cores, keyed as when nothing of the job is taken yet. Entries are re-pushed only for
        # the processors the twin marked changed since the last call (and, for high_mem, those of
        # nodes whose memory moved); stale ones carry an old stamp and are dropped when they surface.
        # A job of k cores costs O(k log P), not a pass over every processor: that pass was most of
        # the cost of runs on these policies (RL agents favour them).
        self._heap: list[tuple[Any, ...]] = []
        self._stamp = [0] * (max((p.idx for p in procs), default=-1) + 1)
        self._dirty: dict[ProcState | NodeState, None] = {}
        if name in _DYNAMIC:
            for node in {p.node: None for p in procs}:
                node.watchers.append(self._dirty)
            self._dirty.update(dict.fromkeys(procs))

    @property
    def static(self) -> bool:
        """True when the ranking depends on nothing that changes (high_gflops, low_power)."""
        return self._static is not None

    def ranked(self) -> list[ProcState]:
        ranked = self._rank()
        if self.prefer_on:
            # with node switch-off, cores of running nodes first, then booting, then off ones
            ranked = sorted(ranked, key=_power_rank)
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
        return _take(ranked, job, limits, mem_limits, self.bw_cap if job.bw > 0 else None)

    def _entry(self, p: ProcState) -> tuple[Any, ...]:
        """The index entry of `p` now (its key as if the job had taken nothing)."""
        name = self.name
        if name == "high_mem_bw":
            key: float = p.bw_used - p.bw_cap
        elif name == "high_cores":
            key = -len(p.free)
        else:
            key = -p.node.mem_free
        return (_power_rank(p) if self.prefer_on else 0, key, p.idx, self._stamp[p.idx], p)

    def _sync(self) -> list[tuple[Any, ...]]:
        """The index, brought up to date with the processors (and nodes) changed since the last call."""
        dirty, heap, stamp = self._dirty, self._heap, self._stamp
        if dirty:
            by_node = self.name == "high_mem"  # the only key that a node's memory change moves
            changed: dict[ProcState, None] = {}  # one valid entry per processor: no duplicates
            for x in dirty:
                if x.__class__ is ProcState:
                    changed[x] = None
                elif by_node:
                    changed.update(dict.fromkeys(x.procs))
            dirty.clear()
            for p in changed:
                stamp[p.idx] += 1
            # bound the heap: once it would hold about three entries per processor (most of them
            # stale), build it afresh from the processors' state instead
            if len(heap) + len(changed) > _HEAP_SLACK * len(stamp) + _HEAP_MIN:
                heap = self._heap = [self._entry(p) for p in self.procs if p.free]
                heapq.heapify(heap)
            else:
                for p in changed:
                    if p.free:
                        heapq.heappush(heap, self._entry(p))
        return heap

    def _allocate_per_core(self, job: Any, limits: dict[int, int] | None,
                           mem_limits: dict[int, float] | None) -> Alloc | None:
        """Dynamic policies: pick one core at a time on the best processor given what is taken."""
        if limits is not None or mem_limits is not None or job.mem > 0:
            # Whether the job fits is decided by `_take_once` (node memory in whole cores per node,
            # as every policy counts it), in one pass that stops as soon as the job fits. Without
            # caps or memory the question is only cores, which the caller checked (free_total),
            # and the per-core walk below then always succeeds.
            if _take_once(self.procs, job.size, job.mem, limits, mem_limits) is None:
                return None
        name, bw, mem = self.name, job.bw, job.mem
        taken: dict[ProcState, int] = {}
        node_mem: dict[Any, float] = {}

        def mem_left(node: Any) -> float:
            left = node_mem.get(node)
            if left is None:
                left = node.mem_free
                if mem_limits is not None and node.idx in mem_limits:
                    left = min(left, mem_limits[node.idx])
            return left

        def value(p: ProcState, have: int) -> float:
            """The policy's value of `p` for the job's next core, with `have` of its cores taken."""
            if name == "high_cores":
                return len(p.free) - have
            if name == "high_mem":
                return mem_left(p.node)
            return p.bw_cap - p.bw_used - have * bw

        prefer_on = self.prefer_on
        need = job.size
        index = self._sync()
        stamp = self._stamp
        borrowed: list[tuple[Any, ...]] = []
        caps = (self.bw_cap, None) if self.bw_cap is not None and bw > 0 else (None,)
        for cap in caps:
            # Candidates come from two heaps: `index` (untouched processors, keyed as if nothing
            # were taken: an upper bound of their value, since values only fall while the job
            # takes cores) and `local` (processors re-keyed during this call). Room is checked at
            # pop; an entry whose value fell since it was keyed goes back to `local` with its value
            # now, so each pick is the exact best (rank, -value, idx), as a full re-sort would give.
            for e in borrowed:  # the uncapped pass after a capped one starts afresh
                heapq.heappush(index, e)
            borrowed.clear()
            if taken:  # ... and re-keys every candidate by what the capped pass took
                local = [(_power_rank(p) if prefer_on else 0, -value(p, taken.get(p, 0)), p.idx, 0, p)
                         for p in self.procs if p.free]
                heapq.heapify(local)
                src = []
            else:
                local, src = [], index
            while need:
                while src and src[0][3] != stamp[src[0][2]]:
                    heapq.heappop(src)  # stale: its processor changed since it was pushed
                if src and (not local or src[0] < local[0]):
                    e = heapq.heappop(src)
                    borrowed.append(e)
                elif local:
                    e = heapq.heappop(local)
                else:
                    break
                rank, neg, idx, _, p = e
                # room (checked inline: this is the per-core hot path): a free core not yet taken,
                # within EASY's cap, node memory and the bandwidth cap. A processor is pushed back
                # after each core it gives whether or not it has room left; if not, it is dropped here.
                have = taken.get(p, 0)
                if have >= len(p.free) or (limits is not None and have >= limits.get(idx, have + 1)):
                    continue
                node = p.node
                mem_bound = mem > 0 and node.mem_cap < math.inf
                if mem_bound and mem_left(node) < mem - 1e-9:
                    continue
                if cap is not None and p.bw_used + (have + 1) * bw > cap * p.bw_cap + 1e-9:
                    continue
                current = -value(p, have)
                if current != neg:  # its key fell since it was pushed (a sibling took node memory)
                    heapq.heappush(local, (rank, current, idx, 0, p))
                    continue
                taken[p] = have + 1
                if mem_bound:
                    node_mem[node] = mem_left(node) - mem
                need -= 1
                if have + 1 < len(p.free):
                    heapq.heappush(local, (rank, -value(p, have + 1), idx, 0, p))
            if not need:
                break
        dirty = self._dirty
        for e in borrowed:
            if e[4] in taken:  # re-keyed at the next call, whether or not the job starts
                dirty[e[4]] = None
            else:
                heapq.heappush(index, e)  # untouched: still valid
        if need:
            return None
        return list(taken.items())

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
