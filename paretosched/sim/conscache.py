"""What conservative backfilling's passes on processor groups share within a twin (`conservative.py`
explains the model): the plan, the processor groups of the ranking, the running jobs' releases and
each group's free cores now, kept from the twin's marks.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from paretosched.sim.conscarry import whole
from paretosched.sim.conskeep import Releases
from paretosched.sim.consplan import Plan
from paretosched.sim.conssearch import CORES
from paretosched.sim.state import ProcState

if TYPE_CHECKING:
    from paretosched.sim.consprofile import Profile
    from paretosched.sim.twin import Twin


class Cache:
    """What a twin's passes share: the plan, processor groups per ranking, each job's cores per group."""

    verify = False  # tests: check every job skipped as stuck and the kept free counts, the slow way
    carry = True  # tests: off builds every profile that is not used again whole

    def __init__(self) -> None:
        self.plan = Plan()
        self._ranked: list[Any] | None = None
        self._groups: tuple[list[int], list[list[Any]]] = ([], [])
        self.group_speed: list[float] = []              # each group's speed and node
        self.group_node: list[Any] = []
        self.keys: list[tuple[float, int]] = []         # each group's (speed, node or -1)
        self._parts: dict[Any, list[tuple[int, int, int, float]]] = {}
        self._free: Any = None  # `free_by_group`'s counts, per processor, and marks
        self._last: list[int] = []
        self._dirty: dict[Any, None] | None = None
        self._mem: Any = None  # each node's free memory, kept from the same marks
        self._releases: Releases | None = None  # made on first use, anew with the groups
        self.kept: Profile | None = None  # the last decision's profile, while nothing changed since
        self._twin: Any = None

    def groups(self, ranked: list[Any]) -> tuple[list[int], list[list[Any]]]:
        """(group of each processor, each group's processors in rank order)."""
        if ranked is not self._ranked and (self._ranked is None or ranked != self._ranked):
            key_group: dict[tuple[float, int], int] = {}
            group_of = [0] * len(ranked)
            members: list[list[Any]] = []
            for p in ranked:
                key = (p.speed, p.node.idx if p.node.mem_cap < math.inf else -1)
                g = key_group.get(key)
                if g is None:
                    g = key_group[key] = len(members)
                    members.append([])
                group_of[p.idx] = g
                members[g].append(p)
            old_keys = self.keys  # (the numbering every kept reservation's groups are in)
            self._ranked, self._groups = list(ranked), (group_of, members)
            self.group_speed = [m[0].speed for m in members]
            self.group_node = [m[0].node for m in members]
            self.keys = list(key_group)
            # a reservation's groups are renumbered by their keys (speed, node)
            res = self.plan.res
            for job, r in res.items():
                if len(r) == 7:  # (`count_pass` keeps plain counts)
                    gs = np.fromiter((key_group[old_keys[g]] for g in r[2].tolist()), np.int64, len(r[2]))
                    dense = np.zeros(len(members), dtype=CORES)
                    dense[gs] = r[3]
                    res[job] = (r[0], r[1], gs, *r[3:6], dense)
            self._parts.clear()
            self.plan.stuck.clear()
            self.kept = None
            self._free = None
            self._drop_releases()
        return self._groups

    def releases(self, twin: Twin, est: dict[Any, float]) -> Releases | None:
        """The running jobs' cores per group by estimated end, kept (None if one holds memory)."""
        rel = self._releases
        if rel is None:
            group_of, members = self._groups
            rel = self._releases = Releases(twin, group_of, len(members))
            self._twin = twin
        rel.sync(twin, est)
        return rel if not rel.with_mem else None

    def made(self, twin: Twin, prof: Profile) -> None:
        """`prof` was made now: the releases' log starts anew, and it may be carried forward only
        if every busy core is a filed running job's (none is held by a job still booting)."""
        rel = self._releases
        if rel is not None:
            rel.log.clear()
            prof.whole = whole(twin, rel)

    def _drop_releases(self) -> None:
        if self._releases is not None:
            self._releases.close(self._twin)
            self._releases = None

    def flat(self, job: Any, group_of: list[int]) -> tuple[list[int], list[int], list[int], list[float]]:
        """A running job's parts: (groups, cores, nodes, memory), the last two of the parts that
        hold memory."""
        parts = self._parts.get(job)
        if parts is None:
            if len(self._parts) > 4096:
                self._parts.clear()
            mem = [(g.proc.node.idx, len(g.cores) * job.mem) for g in job.groups]
            mem = [(n, m) for n, m in mem if m > 0]
            parts = self._parts[job] = ([group_of[g.proc.idx] for g in job.groups], [len(g.cores) for g in job.groups],
                                        [n for n, _ in mem], [m for _, m in mem])
        return parts

    def quiet(self) -> bool:
        """Whether the twin marked no processor or node since `free_by_group` last read the marks."""
        return self._dirty is not None and not self._dirty

    def free_by_group(self, twin: Twin) -> Any:
        """Each group's free cores now (an array: read, not changed), kept from the processors the
        twin marks as changed."""
        free, last, dirty = self._free, self._last, self._dirty
        group_of = self._groups[0]
        if dirty is None:
            dirty = self._dirty = {}
            for node in twin.nodes:
                node.watchers.append(dirty)
            last = self._last = [len(p.free) for p in twin.procs]
        if free is None:
            counts = [0] * len(self._groups[1])
            for p in twin.procs:
                n = last[p.idx] = len(p.free)
                counts[group_of[p.idx]] += n
            free = self._free = np.array(counts, dtype=CORES)
        mem = self._mem
        change: dict[int, int] = {}
        for x in dirty:
            if x.__class__ is ProcState:
                n = len(x.free)
                if n != last[x.idx]:
                    g = group_of[x.idx]
                    change[g] = change.get(g, 0) + n - last[x.idx]
                    last[x.idx] = n
            elif mem is not None:  # a node: the twin marks one whenever its free memory changes
                mem[x.idx] = x.mem_free
        dirty.clear()
        if change:  # (kept as an array: a profile's first row is copied from it, not converted)
            free[list(change)] += list(change.values())
        return free

    def mem_by_node(self, twin: Twin) -> Any:
        """Each node's free memory now (a copy), kept from the twin's node marks: call after
        `free_by_group`, which reads the marks."""
        if self._mem is None:
            self._mem = np.array([n.mem_free for n in twin.nodes], dtype=float)
        return self._mem.copy()
