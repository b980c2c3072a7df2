"""The dynamic resource policies (`high_cores`, `high_mem`, `high_mem_bw`): spreading a job core by core.

Each core of a job goes to the processor with the best value given what the job has taken so
far (free cores, node memory or bandwidth left), as HDeepRM re-sorts its core pool after each
pick; ties break on power state (with switch-off) and then platform order. `SpreadIndex` keeps
the candidates in a persistent heap re-keyed only where the twin marked a change, so a k-core
job costs O(k log P) rather than a re-ranking of every processor per core.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator
from typing import Any

from paretosched.sim.engine.state import NodeState, ProcState
from paretosched.sim.placement.taking import Alloc, power_rank, take_once

_HEAP_SLACK, _HEAP_MIN = 3, 64  # the heap is rebuilt beyond slack x units + min entries


class SpreadIndex:
    """A dynamic policy's candidate index over `procs` and its per-core allocation (the base of
    `CoreSpread`, `BandwidthSpread`: processors as units, and `MemorySpread`: nodes as units)."""

    def __init__(self, procs: list[ProcState], bw_cap: float | None, prefer_on: bool) -> None:
        self.procs = procs
        self.bw_cap = bw_cap
        self.prefer_on = prefer_on
        # A persistent heap of (rank, key, idx, stamp, unit) over units with free cores, keyed as
        # when nothing of the job is taken yet. Entries are re-pushed only for the processors the
        # twin marked changed since the last call (`NodeState.watchers`); stale ones carry an old
        # stamp and are dropped when they surface. A job of k cores costs O(k log P), not a pass
        # over every processor: that pass was most of the cost of runs on these policies.
        self._nodes = list({p.node: None for p in procs})
        self._units: list[Any] = self._unit_list()
        self.heap: list[tuple[Any, ...]] = []
        self._stamp = [0] * (max((u.idx for u in self._units), default=-1) + 1)
        self._dirty: dict[ProcState | NodeState, None] = {}
        for node in self._nodes:
            node.watchers.append(self._dirty)
        self._dirty.update(dict.fromkeys(procs))

    def _unit_list(self) -> list[Any]:
        return self.procs

    def _changed(self, dirty: dict[Any, None]) -> dict[Any, None]:
        """The units whose entries the marked processors and nodes moved (one each: no duplicates)."""
        # units are processors: a node's memory moves none of these keys
        return {x: None for x in dirty if x.__class__ is ProcState}

    def _entries(self, units: Iterable[Any]) -> list[tuple[Any, ...]]:
        """Fresh index entries of those of `units` with a free core."""
        return [self._entry(u) for u in units if u.free]

    def _entry(self, unit: Any) -> tuple[Any, ...]:
        """The index entry of `unit` now: (rank, -value as if the job had taken nothing, idx, stamp, unit)."""
        raise NotImplementedError

    @staticmethod
    def value(p: ProcState, have: int, bw: float) -> float:
        """The policy's value of `p` for a job's next core (bandwidth `bw` a core), `have` of its cores taken."""
        raise NotImplementedError

    def _sync(self) -> list[tuple[Any, ...]]:
        """The index, brought up to date with the processors (and nodes) changed since the last call."""
        dirty, heap, stamp = self._dirty, self.heap, self._stamp
        if dirty:
            changed = self._changed(dirty)
            dirty.clear()
            for u in changed:
                stamp[u.idx] += 1
            # bound the heap: once it would hold about three entries per unit (most of them
            # stale), build it afresh from the state instead
            rebuild = len(heap) + len(changed) > _HEAP_SLACK * len(stamp) + _HEAP_MIN
            entries = self._entries(self._units if rebuild else changed)
            if rebuild:
                heapq.heapify(entries)
                heap = self.heap = entries
            else:
                for e in entries:
                    heapq.heappush(heap, e)
        return heap

    def _passes(self, bw: float, index: list[tuple[Any, ...]],
                borrowed: list[tuple[Any, ...]]) -> Iterator[float | None]:
        """The bandwidth caps a walk tries in turn: the cap, then none if the job did not fit
        under it. Each pass starts afresh: what the previous one popped goes back to `index`."""
        for cap in (self.bw_cap, None) if self.bw_cap is not None and bw > 0 else (None,):
            for e in borrowed:
                heapq.heappush(index, e)
            borrowed.clear()
            yield cap

    def _give_back(self, index: list[tuple[Any, ...]], borrowed: list[tuple[Any, ...]], touched: Any) -> None:
        """Return the index entries a call popped: untouched units' still hold, touched ones are
        re-keyed at the next call (whether or not the job starts)."""
        dirty = self._dirty
        for e in borrowed:
            if e[4] in touched:
                dirty[e[4]] = None
            else:
                heapq.heappush(index, e)

    def allocate(self, job: Any, limits: dict[int, int] | None,
                 mem_limits: dict[int, float] | None) -> Alloc | None:
        """Cores for `job`, one at a time on the best processor given what it has taken, or None.

        Whether it fits is checked here; the walk is the subclass's (`_walk`).
        """
        if limits is not None or mem_limits is not None or job.mem > 0:
            # Whether the job fits is decided by `take_once` (node memory in whole cores per node,
            # as every policy counts it), in one pass that stops as soon as the job fits. Without
            # caps or memory the question is only cores, which the caller checked (free_total),
            # and the per-core walk below then always succeeds.
            if take_once(self.procs, job.size, job.mem, limits, mem_limits) is None:
                return None
        return self._walk(job, limits, mem_limits)

    def _walk(self, job: Any, limits: dict[int, int] | None,
              mem_limits: dict[int, float] | None) -> Alloc | None:
        """Processors as units: each core to the best (rank, -value, idx) given what is taken."""
        bw, mem = job.bw, job.mem
        taken: dict[ProcState, int] = {}
        node_mem: dict[Any, float] = {}
        value = self.value
        prefer_on = self.prefer_on
        need = job.size
        index = self._sync()
        stamp = self._stamp
        borrowed: list[tuple[Any, ...]] = []
        for cap in self._passes(bw, index, borrowed):
            # Candidates come from two heaps: `index` (untouched processors, keyed as if nothing
            # were taken: an upper bound of their value, since values only fall while the job
            # takes cores) and `local` (processors re-keyed during this call). Room is checked at
            # pop; an entry whose value fell since it was keyed goes back to `local` with its value
            # now, so each pick is the exact best (rank, -value, idx), as a full re-sort would give.
            if taken:  # an uncapped pass after a capped one re-keys every candidate by what was taken
                local = [(power_rank(p) if prefer_on else 0, -value(p, taken.get(p, 0), bw), p.idx, 0, p)
                         for p in self.procs if p.free]
                heapq.heapify(local)
                src = []
            else:
                local, src = [], index
            while need:
                e = _pop_best(src, local, stamp, borrowed)
                if e is None:
                    break
                rank, neg, idx, _, p = e
                # A processor is pushed back after each core it gives whether or not it has room
                # left (a free core not yet taken, within EASY's cap, node memory and the bandwidth
                # cap); if not, it is dropped here.
                have = taken.get(p, 0)
                if _full(p, have, limits, cap, bw):
                    continue
                node = p.node
                mem_bound = mem > 0 and node.mem_cap < math.inf
                if mem_bound and _mem_left(node, node_mem, mem_limits) < mem - 1e-9:
                    continue
                current = -value(p, have, bw)
                if current != neg:  # its key fell since it was pushed
                    heapq.heappush(local, (rank, current, idx, 0, p))
                    continue
                taken[p] = have + 1
                if mem_bound:
                    node_mem[node] = _mem_left(node, node_mem, mem_limits) - mem
                need -= 1
                if have + 1 < len(p.free):
                    heapq.heappush(local, (rank, -value(p, have + 1, bw), idx, 0, p))
            if not need:
                break
        self._give_back(index, borrowed, taken)
        return None if need else list(taken.items())


class CoreSpread(SpreadIndex):
    """`high_cores`: the processor with the most free cores left."""

    def _entry(self, p: ProcState) -> tuple[Any, ...]:
        return (power_rank(p) if self.prefer_on else 0, -len(p.free), p.idx, self._stamp[p.idx], p)

    @staticmethod
    def value(p: ProcState, have: int, bw: float) -> float:
        return len(p.free) - have


class BandwidthSpread(SpreadIndex):
    """`high_mem_bw`: the processor with the most memory bandwidth left."""

    def _entry(self, p: ProcState) -> tuple[Any, ...]:
        return (power_rank(p) if self.prefer_on else 0, p.bw_used - p.bw_cap, p.idx, self._stamp[p.idx], p)

    @staticmethod
    def value(p: ProcState, have: int, bw: float) -> float:
        return p.bw_cap - p.bw_used - have * bw


class MemorySpread(SpreadIndex):
    """`high_mem`: the node with the most free memory left.

    Its value is the node's memory, shared by the node's processors, so its units are nodes (in
    the index a node ranks as its first processor with a free core, during a call as its first
    with room for the job) and a core taken does not leave every sibling processor's entry stale.
    """

    def __init__(self, procs: list[ProcState], bw_cap: float | None, prefer_on: bool) -> None:
        mine = set(procs)
        self._node_procs = {n: sorted((p for p in n.procs if p in mine), key=lambda p: p.idx)
                            for n in {p.node: None for p in procs}}
        super().__init__(procs, bw_cap, prefer_on)

    def _unit_list(self) -> list[Any]:
        return self._nodes

    def _changed(self, dirty: dict[Any, None]) -> dict[Any, None]:
        # units are nodes: a processor's change moves its node's entry
        return {(x.node if x.__class__ is ProcState else x): None for x in dirty}

    def _entries(self, units: Iterable[Any]) -> list[tuple[Any, ...]]:
        # a node has a free core while it has fewer busy cores than cores (`busy` and the
        # processors' free lists move together in the twin)
        return [self._entry(u) for u in units if u.busy < u.ncores]

    def _entry(self, node: Any) -> tuple[Any, ...]:
        first = next(q for q in self._node_procs[node] if q.free)
        return (power_rank(first) if self.prefer_on else 0, -node.mem_free, first.idx, self._stamp[node.idx], node)

    def _walk(self, job: Any, limits: dict[int, int] | None,
              mem_limits: dict[int, float] | None) -> Alloc | None:
        """The per-core walk over nodes: the same picks as re-ranking every processor per core.

        Every processor of a node has the node's value and rank, so the best processor is the
        best node's first processor (platform order) with room: one heap entry per node, keyed
        (rank, -memory left, that processor's index). Stored keys are lower bounds of the true
        ones (memory and room only shrink during a pass), so a popped entry whose key is still
        true is the exact best; otherwise it goes back with its key now.
        """
        bw, mem = job.bw, job.mem
        taken: dict[ProcState, int] = {}
        node_mem: dict[Any, float] = {}
        node_procs = self._node_procs
        prefer_on = self.prefer_on

        skip: dict[Any, int] = {}  # per node, processors known to have no room left in this pass

        def first_room(node: Any, cap: float | None) -> ProcState | None:
            procs = node_procs[node]
            for i in range(skip.get(node, 0), len(procs)):
                p = procs[i]
                if _full(p, taken.get(p, 0), limits, cap, bw):
                    continue
                skip[node] = i  # room only shrinks during a pass
                return p
            skip[node] = len(procs)
            return None

        need = job.size
        index = self._sync()
        stamp = self._stamp
        borrowed: list[tuple[Any, ...]] = []
        for cap in self._passes(bw, index, borrowed):
            skip.clear()  # the uncapped pass has room where the capped one had none
            if taken:
                local = []
                for node in self._nodes:
                    p = first_room(node, None)
                    if p is not None:
                        left = _mem_left(node, node_mem, mem_limits)
                        local.append((power_rank(p) if prefer_on else 0, -left, p.idx, 0, node))
                heapq.heapify(local)
                src = []
            else:
                local, src = [], index
            while need:
                e = _pop_best(src, local, stamp, borrowed)
                if e is None:
                    break
                rank, neg, idx, _, node = e
                left = _mem_left(node, node_mem, mem_limits)
                bound = mem > 0 and node.mem_cap < math.inf
                if bound and left < mem - 1e-9:
                    continue  # the node cannot hold another core of the job
                p = first_room(node, cap)
                if p is None:
                    continue
                if -left != neg or p.idx != idx:
                    heapq.heappush(local, (rank, -left, p.idx, 0, node))
                    continue
                while True:  # take from `node` for as long as it stays strictly the best
                    have = taken[p] = taken.get(p, 0) + 1
                    need -= 1
                    if bound:
                        left = node_mem[node] = left - mem
                        if left < mem - 1e-9:
                            break  # no memory for another core: not pushed back (a pop would drop it)
                    if not need:
                        break
                    if _full(p, have, limits, cap, bw):
                        p = first_room(node, cap)  # `p` is full: the node's next processor with room
                        if p is None:
                            break
                    key = (rank, -left, p.idx)
                    # stored keys are lower bounds: beating both tops beats every other candidate
                    if (local and local[0] < key) or (src and src[0] < key):
                        heapq.heappush(local, (*key, 0, node))
                        break
            if not need:
                break
        self._give_back(index, borrowed, {p.node for p in taken})
        return None if need else list(taken.items())


def _pop_best(src: list[tuple[Any, ...]], local: list[tuple[Any, ...]], stamp: list[int],
              borrowed: list[tuple[Any, ...]]) -> tuple[Any, ...] | None:
    """The smaller top of the index (`src`, stale entries dropped; what it gives is recorded in
    `borrowed`) and the call's own heap (`local`); None when both are empty."""
    while src and src[0][3] != stamp[src[0][4].idx]:
        heapq.heappop(src)  # stale: its unit changed since it was pushed
    if src and (not local or src[0] < local[0]):
        e = heapq.heappop(src)
        borrowed.append(e)
        return e
    return heapq.heappop(local) if local else None


def _full(p: ProcState, have: int, limits: dict[int, int] | None, cap: float | None, bw: float) -> bool:
    """No room on `p` for another core of the job, given `have` taken: no free core left, EASY's
    cap on `p` reached, or (in a capped pass) one more core would exceed the bandwidth cap."""
    return have >= len(p.free) or (limits is not None and have >= limits.get(p.idx, have + 1)) or \
        (cap is not None and p.bw_used + (have + 1) * bw > cap * p.bw_cap + 1e-9)


def _mem_left(node: Any, node_mem: dict[Any, float], mem_limits: dict[int, float] | None) -> float:
    """Memory `node` has left for the job: after what it took (`node_mem`), else free within EASY's cap."""
    left = node_mem.get(node)
    if left is None:
        left = node.mem_free
        if mem_limits is not None and node.idx in mem_limits:
            left = min(left, mem_limits[node.idx])
    return left
