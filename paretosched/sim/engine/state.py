"""Mutable per-run state of nodes, processors and running job parts (hot path: slots only)."""

from __future__ import annotations

from typing import Any

from paretosched.errors import UserError
from paretosched.sim.readers.platform import Platform


class Group:
    """The part of a running job on one processor: its cores share one speed."""

    __slots__ = ("job", "proc", "cores", "rem", "speed", "t_last", "end")

    def __init__(self, job: Any, proc: ProcState, cores: list[int], rem: float, speed: float, now: float,
                 end: float) -> None:
        self.job = job
        self.proc = proc
        self.cores = cores
        self.rem = rem          # operations left per core (GFLOP)
        self.speed = speed      # GFLOP/s per core now
        self.t_last = now
        self.end = end          # now + rem / speed if rem > 0 else now (the caller's: parts of a job share it)


class NodeState:
    __slots__ = ("idx", "procs", "mem_cap", "mem_free", "busy", "ncores", "power_state",
                 "boot_s", "boot_j", "off_w", "idle_version", "ready_at", "cluster", "watchers")

    ON, OFF, BOOTING = 0, 1, 2

    def __init__(self, idx: int, mem_mb: float, boot_s: float, boot_j: float, off_w: float, cluster: str) -> None:
        self.idx = idx
        self.procs: list[ProcState] = []
        self.mem_cap = mem_mb
        self.mem_free = mem_mb
        self.busy = 0            # cores running or reserved for a booting job
        self.ncores = 0
        self.power_state = NodeState.ON
        self.boot_s = boot_s
        self.boot_j = boot_j
        self.off_w = off_w
        self.idle_version = 0
        self.ready_at = 0.0
        self.cluster = cluster
        # dirty-sets of whoever keeps per-node/processor state incrementally (dynamic resource
        # selectors, RL observations): whoever changes a processor's free cores, bandwidth or power
        # state marks the processor in each, and whoever changes the node's free memory, the node
        self.watchers: list[dict[Any, None]] = []


class ProcState:
    __slots__ = ("idx", "node", "ptype", "ncores", "first_core", "free", "gflops", "speed",
                 "core_w", "busy_w", "bw_cap", "bw_used", "factor", "busy", "groups", "power",
                 "p2_w", "p3_w", "watts", "over_since", "t_acc")

    def __init__(self, idx: int, node: NodeState, ptype: str, ncores: int, first_core: int,
                 gflops: float, freq: float, core_w: float, busy_w: float, bw_cap: float,
                 p2: float, p3: float) -> None:
        self.idx = idx
        self.node = node
        self.ptype = ptype
        self.ncores = ncores
        self.first_core = first_core
        # popped from the end: lowest core number first, so Gantt charts read naturally
        self.free = list(range(first_core + ncores - 1, first_core - 1, -1))
        self.gflops = gflops            # nominal peak per core
        self.speed = gflops * freq      # peak per core at the configured frequency
        self.core_w = core_w            # nominal full power per core
        self.busy_w = busy_w            # power of a busy core at the configured frequency
        self.bw_cap = bw_cap
        self.bw_used = 0.0
        self.factor = 1.0               # interference speed factor (P0 = 1)
        self.busy = 0
        self.groups: dict[Group, None] = {}
        self.p2_w = p2 * core_w
        self.p3_w = p3 * core_w
        # the processor's power with b busy cores, at watts[b]: p3 per core when idle, else busy_w per
        # busy core and p2 per idle one (each the same expression, so the same float, as computing it
        # at every start and end: a table at most as long as the platform has cores)
        self.watts = [ncores * self.p3_w] + [b * busy_w + (ncores - b) * self.p2_w for b in range(1, ncores + 1)]
        self.power = self.watts[0]
        self.over_since = -1.0
        self.t_acc = 0.0


def dvfs_power_fraction(freq: float, static: float, table: list[tuple[float, float]] | None) -> float:
    """Fraction of full power drawn by a busy core at frequency factor `freq`."""
    if table:
        pts = sorted(table)
        if freq <= pts[0][0]:
            return pts[0][1]
        for (f0, w0), (f1, w1) in zip(pts, pts[1:]):
            if f0 <= freq <= f1:
                return w0 + (w1 - w0) * (freq - f0) / (f1 - f0) if f1 > f0 else w1
        return pts[-1][1]
    return static + (1.0 - static) * freq ** 3


def build_state(platform: Platform, p2: float, p3: float, static: float, freq: float,
                freq_by_type: dict[str, float]) -> tuple[list[NodeState], list[ProcState]]:
    """Fresh nodes and processors for one run (all on, all idle)."""
    spec = platform.spec
    nodes = [NodeState(i, n.memory_mb, n.boot_s, n.boot_j, n.off_w, n.cluster)
             for i, n in enumerate(platform.nodes)]
    procs: list[ProcState] = []
    for name in freq_by_type:
        if name not in spec.processor_types:
            raise UserError(f"scheduler.freq_by_type.{name}: no processor type {name!r} in platform {spec.name}")
        if freq_by_type[name] < spec.processor_types[name].f_min:
            raise UserError(f"scheduler.freq_by_type.{name}: {freq_by_type[name]} is below the type's lowest "
                            f"frequency factor f_min = {spec.processor_types[name].f_min}")
    for i, p in enumerate(platform.procs):
        pt = spec.processor_types[p.ptype]
        # a global factor below a type's lowest P-state runs that type at its lowest P-state
        f = freq_by_type.get(p.ptype, max(freq, pt.f_min))
        core_w = p.power_w / p.cores
        busy_w = core_w * dvfs_power_fraction(f, static, pt.dvfs_table)
        node = nodes[p.node]
        ps = ProcState(i, node, p.ptype, p.cores, p.first_core, p.gflops_per_core, f, core_w, busy_w,
                       p.mem_bw_gbs, p2, p3)
        node.procs.append(ps)
        node.ncores += p.cores
        procs.append(ps)
    return nodes, procs

