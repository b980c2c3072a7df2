"""Node power states of the twin: switch-off after an idle timeout, boots, the floor of nodes on.

Off unless `power_off_idle_s` is set: a node idle for that long switches off and draws `off_w`;
a job given cores on an off node waits while it boots (`boot_s`, `boot_j` drawn evenly over the
boot). Its cores are reserved at once, so nothing else can take them, and the job starts when
its last node is up. `min_nodes_on` nodes are never switched off. A layer with a rate on boots
(sim/slurm/power.py: ResumeRate) sets `boot_hook`: a boot it defers leaves the node off, its cores already
given, until the instant the hook named.

`NodePower` is a base class of the Twin rather than an object it holds: its methods run on the
twin's own power and energy sums at every job start and end, and a mixin keeps those calls
exactly what they were (no extra hop on the hot path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paretosched.sim.engine.state import NodeState, ProcState

ON, OFF, BOOTING = NodeState.ON, NodeState.OFF, NodeState.BOOTING


class NodePower:
    """Node switch-off and boots; needs the twin's env, nodes, power sums, timeline and `_accumulate`."""

    env: Any
    nodes: list[NodeState]
    timeline: Any
    record: bool
    power: float
    energy: float
    unattr_power: float
    unattr_energy: float
    _accumulate: Callable[[], None]

    def _init_node_power(self, levers: Any) -> None:
        self.boot_energy = 0.0
        self.boots = 0
        self.off_after = levers.power_off_idle_s
        self.min_nodes_on = levers.min_nodes_on
        self.nodes_on = len(self.nodes)
        self.deferred: set[int] = set()  # nodes whose boot `boot_hook` put off: off, cores given out
        # node -> what to call when it is up (jobs with a deferred boot begin from there, `Starting`)
        self.boot_waiters: dict[int, list[Callable[[NodeState], None]]] = {}
        for node in self.nodes:
            if levers.boot_s is not None:
                node.boot_s = levers.boot_s
            if levers.boot_j is not None:
                node.boot_j = levers.boot_j
            if levers.off_w is not None:
                node.off_w = levers.off_w

    @property
    def switch_off(self) -> bool:
        return self.off_after is not None

    # when set, a node's idle timer calls idle_hook(node, version) instead of switch_off_idle: a layer
    # with its own power rules (sim/slurm/power.py: rates, excluded nodes) decides, then calls switch_off_idle
    idle_hook: Callable[[NodeState, int], None] | None = None

    def _arm_idle(self, node: NodeState) -> None:
        node.idle_version += 1
        version = node.idle_version
        ev = self.env.timeout(self.off_after)
        ev.callbacks.append(lambda _ev: (self.idle_hook or self.switch_off_idle)(node, version))

    def switch_off_idle(self, node: NodeState, version: int) -> None:
        """Switch an idle node off when its idle timer `version` is still current (and the floor allows)."""
        if version != node.idle_version or node.busy or node.power_state != ON:
            return
        if self.nodes_on <= self.min_nodes_on:
            return  # keep the floor of nodes on
        self._accumulate()
        self._set_state(node, OFF, proc_w=lambda p: 0.0)
        self._node_power(node.off_w)
        self.nodes_on -= 1

    def _set_state(self, node: NodeState, state: Any, proc_w: Callable[[ProcState], float] | None = None) -> None:
        """Move `node` to `state` (its processors' power to `proc_w(p)` when given); the timeline
        sees each processor before and after, and the allocator's indexes are told."""
        tl = self.timeline
        if tl is not None:
            for p in node.procs:
                tl.before(p)
        if proc_w is not None:
            for p in node.procs:
                self._node_proc_power(p, proc_w(p))
        node.power_state = state
        _mark_procs(node)
        if tl is not None:
            for p in node.procs:
                tl.after(p)

    def _node_proc_power(self, p: ProcState, new: float) -> None:
        self._node_power(new - p.power)  # a node being switched is idle: all of it unattributed
        p.power = new

    def _node_power(self, watts: float) -> None:
        self.power += watts
        if self.record:
            self.unattr_power += watts

    # when set, a boot first asks boot_hook(node) for the instant it may begin: a later instant defers
    # it (the node stays off until then); the hook counts the boot against its rate
    boot_hook: Callable[[NodeState], float] | None = None

    def _boot(self, node: NodeState) -> float:
        """Start booting an off node (if not already booting or deferred); returns when it will be up."""
        if node.power_state == BOOTING or node.idx in self.deferred:
            return node.ready_at
        if self.boot_hook is not None:
            t = self.boot_hook(node)
            if t > self.env.now:
                now = self.env.now
                self.deferred.add(node.idx)
                ev = self.env.timeout(t - now)
                ev.callbacks.append(lambda _ev: self._boot_deferred(node))
                node.ready_at = (now + (t - now)) + node.boot_s  # the clock then, as `_boot_now` sums it
                return node.ready_at
        return self._boot_now(node)

    def _boot_deferred(self, node: NodeState) -> None:
        self.deferred.discard(node.idx)
        self._boot_now(node)

    def _boot_now(self, node: NodeState) -> float:
        self._accumulate()
        self._set_state(node, BOOTING)
        self.nodes_on += 1
        self.boots += 1
        self._node_power(-node.off_w)
        node.ready_at = self.env.now + node.boot_s
        self.boot_energy += node.boot_j
        if node.boot_s > 0:
            self._node_power(node.boot_j / node.boot_s)
        else:
            self.energy += node.boot_j  # an instantaneous boot still costs its energy, once
            if self.record:
                self.unattr_energy += node.boot_j
        ev = self.env.timeout(node.boot_s)
        ev.callbacks.append(lambda _ev: self._booted(node))
        return node.ready_at

    def _booted(self, node: NodeState) -> None:
        self._accumulate()
        if node.boot_s > 0:
            self._node_power(-node.boot_j / node.boot_s)
        self._set_state(node, ON, proc_w=lambda p: p.ncores * p.p3_w)
        if not node.busy:
            self._arm_idle(node)
        if self.boot_waiters:
            for up in self.boot_waiters.pop(node.idx, ()):
                up(node)


def _mark_procs(node: NodeState) -> None:
    """Tell the node's watchers that each of its processors changed (a power-state change)."""
    for w in node.watchers:
        for p in node.procs:
            w[p] = None
