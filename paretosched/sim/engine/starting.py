"""Starting a job on the cores a scheduler chose: the twin's hot path, once per job part.

A job begins at once when every node it uses is on, else when the last of them has booted
(`start` then `_begin`); without switch-off no node is ever off, and `_start_now` does both in one
pass per part. Either way the updates happen in the same order, so the running sums of power and
bandwidth, every float, are the same. `Starting` is a base class of the Twin, as `NodePower` and
`Pacing` are, so these run as the twin's own methods.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from paretosched.sim.engine.state import Group, NodeState, ProcState
from paretosched.sim.engine.timeline import Timeline

ON = NodeState.ON
ONE_PASS = True  # `_start_now` where it applies (tests compare it with `start` then `_begin`)


class Starting:
    """Giving a job its cores and parts; needs the twin's env, state, switches and watchers."""

    env: Any
    queue: list[Any]
    running: dict[Any, None]
    free_total: int
    power: float
    record: bool
    unattr_power: float
    lockstep: bool
    off_after: float | None
    timeline: Timeline | None
    job_watchers: list[dict[Any, None]]
    _accumulate: Callable[[], None]
    _attribute: Callable[[ProcState], None]
    _boot: Callable[[NodeState], float]
    boot_waiters: dict[int, list[Callable[[NodeState], None]]]
    _refresh_speed: Callable[[ProcState], None]
    _schedule_end: Callable[[Any], None]

    def start(self, job: Any, alloc: list[tuple[ProcState, int]]) -> None:
        """Give `job` the cores of `alloc` (list of (processor, count)) now; the caller checked it fits.

        The job runs at once, or when the last of its nodes that is off has booted.
        """
        if self.off_after is None and self.timeline is None and ONE_PASS:
            # without switch-off every node stays on (nodepower: only the idle timers, armed only
            # with `power_off_idle_s`, switch nodes off), so the job begins now: one pass per part
            self._start_now(job, alloc)
            return
        self._accumulate()
        self.queue.remove(job)
        taken = []
        ready = self.env.now
        booting = False
        mem = job.mem
        nodes = {}
        for p, k in alloc:
            free = p.free
            if k == 1:  # the most frequent case on single-core processors: no slices
                cores = [free.pop()]
            else:
                cores = free[:-k - 1:-1]  # the lowest free core numbers, ascending (the list is kept descending)
                del free[-k:]
            taken.append((p, cores))
            node = p.node
            nodes[node.idx] = None
            node.busy += k
            if mem:
                node.mem_free -= k * mem
            if node.watchers:
                for w in node.watchers:
                    w[p] = None
                    if mem:
                        w[node] = None
            if node.power_state != ON:
                ready = max(ready, self._boot(node))
                booting = True
            else:
                node.idle_version += 1  # cancels a pending switch-off
        self.free_total -= job.size
        job.nodes = tuple(nodes)
        if booting:
            # even a zero-length boot: the node's boot-complete event (scheduled first) must run before the job
            ev = self.env.timeout(ready - self.env.now)
            ev.callbacks.append(lambda _ev: self._begin_if_up(job, taken))
        else:
            self._begin(job, taken)

    def _begin_if_up(self, job: Any, taken: list[tuple[ProcState, list[int]]]) -> None:
        """Begin a job whose nodes were booting, unless one is still down: a boot's end is summed when
        the boot began (another job's, or one `boot_hook` deferred, whose end event is scheduled after
        this one), and `now + (ready - now)` can round an ulp below it; a job begun on a booting node
        would have its processor's power reset to idle by the boot's completion."""
        down = [p.node for p, _ in taken if p.node.power_state != ON]
        if down:
            self._begin_when_up(job, taken, down)
        else:
            self._begin(job, taken)

    def _begin_when_up(self, job: Any, taken: list[tuple[ProcState, list[int]]], down: list[NodeState]) -> None:
        """Begin `job` from the boot-complete event of the last of its `down` nodes."""
        waiting = {node.idx for node in down}

        def up(node: NodeState) -> None:
            waiting.discard(node.idx)
            if not waiting:
                self._begin(job, taken)

        for idx in waiting:
            self.boot_waiters.setdefault(idx, []).append(up)

    def _begin(self, job: Any, taken: list[tuple[ProcState, list[int]]]) -> None:
        self._accumulate()
        now = self.env.now
        job.start = now
        record = self.record
        tl = self.timeline
        bw = job.bw
        power = self.power
        slow = []  # processors whose interference factor may change: re-timed once all are counted
        pace = None
        # one pass per processor, the power update inlined (a busy processor draws busy_w per busy
        # core and p2 per idle one, an idle one p3 per core; the running sums are updated in the
        # order they always were, so every float is bit-identical): this runs once per job part
        for p, cores in taken:
            if record:
                self._attribute(p)
            if tl is not None:
                tl.before(p)
            k = len(cores)
            was_idle = not p.busy
            busy = p.busy = p.busy + k
            if bw:
                p.bw_used += k * bw
            for w in p.node.watchers:  # bandwidth moves here: for a booting node, later than `start`
                w[p] = None
            new = p.watts[busy]
            if record:
                self.unattr_power -= p.power if was_idle else 0.0
            power += new - p.power
            p.power = new
            if tl is not None:
                self.power = power
                tl.after(p)
            if p.bw_used > p.bw_cap or p.factor != 1.0:
                slow.append(p)
            speed = p.speed * p.factor
            if pace is None or speed < pace:
                pace = speed
        self.power = power
        self._place(job, taken, slow, pace, now)

    def _start_now(self, job: Any, alloc: list[tuple[ProcState, int]]) -> None:
        """`start` and `_begin` in one pass per part, for a job whose nodes are all on and no timeline:
        the same updates in the same order (the marks, the power sums: every float bit-identical)."""
        self._accumulate()
        self.queue.remove(job)
        now = self.env.now
        job.start = now
        record = self.record
        mem = job.mem
        bw = job.bw
        ops = job.ops
        power = self.power
        nodes = {}
        groups = []
        slow = []
        pace = math.inf
        new_group = Group.__new__
        for p, k in alloc:
            free = p.free
            if k == 1:
                cores = [free.pop()]
            else:
                cores = free[:-k - 1:-1]
                del free[-k:]
            node = p.node
            nodes[node.idx] = None
            node.busy += k
            if mem:
                node.mem_free -= k * mem
            if node.watchers:  # (`_begin` marks the processor again: a no-op when nothing ran between)
                for w in node.watchers:
                    w[p] = None
                    if mem:
                        w[node] = None
            # no pending switch-off to cancel (node.idle_version): there is no switch-off
            if record:
                self._attribute(p)  # before the part joins p.groups (a processor is in `alloc` once)
                self.unattr_power -= 0.0 if p.busy else p.power
            busy = p.busy = p.busy + k
            if bw:
                p.bw_used += k * bw
            new = p.watts[busy]
            power += new - p.power
            p.power = new
            if p.bw_used > p.bw_cap or p.factor != 1.0:
                slow.append(p)
            speed = p.speed * p.factor
            if speed < pace:
                pace = speed
            # `Group(job, p, cores, ops, speed, now, now)` without the call of its __init__ (Python
            # 3.11 spends ~175 ns calling a class's __init__, ~110 ns this way): once per part
            g = new_group(Group)
            g.job = job
            g.proc = p
            g.cores = cores
            g.rem = ops
            g.speed = speed  # speed and end set below
            g.t_last = now
            g.end = now
            p.groups[g] = None
            groups.append(g)
        self.free_total -= job.size
        job.nodes = tuple(nodes)
        self.power = power
        if slow:
            # re-timed as in `_place`, where the job's parts are not on their processors yet
            for g in groups:
                del g.proc.groups[g]
            for p in slow:
                self._refresh_speed(p)
            pace = min(p.speed * p.factor for p, _ in alloc)
            for g in groups:  # back at the end of each processor's parts, where `_place` puts them
                g.proc.groups[g] = None
        end = now
        if self.lockstep:
            g_end = now + ops / pace if ops > 0 else now  # every part ends together
            for g in groups:
                g.speed = pace
                g.end = g_end
            if g_end > end:
                end = g_end
        else:
            for g in groups:
                speed = g.speed = g.proc.speed * g.proc.factor
                g.end = now + ops / speed if ops > 0 else now
                if g.end > end:
                    end = g.end
        self._launched(job, groups, end)

    def _place(self, job: Any, taken: list[tuple[ProcState, list[int]]], slow: list[ProcState],
               pace: float | None, now: float) -> None:
        """Re-time the processors whose factor may change, give the job its parts and its end event."""
        ops = job.ops
        groups = []
        end = now
        if slow:
            for p in slow:
                self._refresh_speed(p)
            pace = min(p.speed * p.factor for p, _ in taken)
        if self.lockstep:
            if taken:  # every part ends together
                g_end = now + ops / pace if ops > 0 else now
                for p, cores in taken:
                    g = Group(job, p, cores, ops, pace, now, g_end)
                    p.groups[g] = None
                    groups.append(g)
                if g_end > end:
                    end = g_end
        else:
            for p, cores in taken:
                speed = p.speed * p.factor
                g = Group(job, p, cores, ops, speed, now, now + ops / speed if ops > 0 else now)
                p.groups[g] = None
                groups.append(g)
                if g.end > end:
                    end = g.end
        self._launched(job, groups, end)

    def _launched(self, job: Any, groups: list[Group], end: float) -> None:
        """`job` runs in `groups` until `end`: count it running, tell the watchers, plan its end."""
        job.groups = groups
        job.end = end
        job.version += 1
        self.running[job] = None
        for w in self.job_watchers:
            w[job] = None
        self._schedule_end(job)
