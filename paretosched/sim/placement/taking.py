"""Taking cores in a ranked order: the greedy of every static policy, and the fit checks.

`take_once` walks processors in rank order, taking free cores within EASY's caps and node
memory (whole cores per node) until the job has them all; `take` adds a bandwidth-capped first
pass. `power_rank` orders nodes on, booting, off (used when switch-off is enabled).
"""

from __future__ import annotations

import math
from itertools import compress, islice
from operator import attrgetter
from typing import Any

from paretosched.sim.engine.state import NodeState, ProcState

Alloc = list[tuple[ProcState, int]]

_free = attrgetter("free")
_POWER_RANK = {NodeState.ON: 0, NodeState.BOOTING: 1, NodeState.OFF: 2}


def power_rank(p: ProcState) -> int:
    return _POWER_RANK[p.node.power_state]


def take(ranked: list[ProcState], job: Any, limits: dict[int, int] | None,
          mem_limits: dict[int, float] | None, cap: float | None) -> Alloc | None:
    """Greedy core taking in rank order; with a bandwidth cap, a second pass fills what the first could not."""
    if cap is None:
        return take_once(ranked, job.size, job.mem, limits, mem_limits)
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


def take_ones(ranked: list[ProcState], size: int) -> Alloc | None:
    """One core on each of the first `size` processors with a free core, in rank order: what
    `take_once` finds on one-core processors without memory limits, at C speed; None if too few."""
    alloc = [(p, 1) for p in islice(compress(ranked, map(_free, ranked)), size)]
    return alloc if len(alloc) == size else None


def take_once(ranked: list[ProcState], need: int, mem: float, limits: dict[int, int] | None,
               mem_limits: dict[int, float] | None) -> Alloc | None:
    """The single-pass case of `take` (no bandwidth cap): the hot path, so kept minimal."""
    out: Alloc = []
    node_mem: dict[Any, float] | None = {} if mem > 0 else None
    # processors without a free core are skipped at C speed (on a busy machine, most of the ranking)
    for p in compress(ranked, map(_free, ranked)):
        k = len(p.free)
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
