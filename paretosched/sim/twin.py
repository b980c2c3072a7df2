"""The SimPy digital twin: jobs arrive, a scheduler places them on cores, cores change P-state.

Event-driven, with no periodic ticks: the only events are job arrivals (one per distinct
submit time), job completions, and one coalesced scheduling decision per instant in which
something happened. Per-event work is proportional to what changed (the processors a job
touches and the jobs sharing them), never to the number of jobs or cores.

Model (DESIGN.md, thesis 3.1.2): a busy core runs at its peak x DVFS factor x interference
factor (P0 = 1; P1 = `p1_speed` while its processor's summed bandwidth demand exceeds the
capacity, or capacity/demand under `proportional`); an idle core of a busy processor draws
`p2_power` of its full power, a core of an idle processor `p3_power`. A job ends when its
slowest core has done its operations; remaining work is recomputed whenever a speed changes.
Energy is the exact integral of the piecewise-constant total power.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import simpy

from paretosched.sim.platform import Platform
from paretosched.sim.state import Group, NodeState, ProcState, build_state


class Twin:
    """One simulation run. Build it, attach a scheduler with `decide(twin)`, call `run()`."""

    def __init__(self, platform: Platform, jobs: list[Any], model: Any, levers: Any,
                 record: bool = False) -> None:
        self.platform = platform
        self.jobs = jobs
        self.env = simpy.Environment()
        self.nodes, self.procs = build_state(platform, model.p2_power, model.p3_power, model.static_power,
                                             levers.freq, levers.freq_by_type)
        self.interference = model.interference
        self.p1_speed = model.p1_speed
        self.queue: list[Any] = []
        self.running: dict[Any, None] = {}
        self.done: list[Any] = []
        self.free_total = platform.n_cores
        self.power = sum(p.power for p in self.procs)
        self.idle_floor_w = self.power
        self.energy = 0.0
        self.t_energy = 0.0
        self.busy_core_s = 0.0
        self.record = record
        self.reservations: dict[int, float] = {}
        self.decide: Callable[[Twin], None] = lambda twin: None
        self._decision_pending = False
        self.decisions = 0

    # -- time and energy -------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.env.now

    def _accumulate(self) -> None:
        now = self.env.now
        dt = now - self.t_energy
        if dt > 0:
            self.energy += self.power * dt
            self.t_energy = now

    def _set_proc_power(self, p: ProcState) -> None:
        if p.busy:
            new = p.busy * p.busy_w + (p.ncores - p.busy) * p.p2_w
        else:
            new = p.ncores * p.p3_w
        self.power += new - p.power
        p.power = new

    def _factor(self, p: ProcState) -> float:
        used = p.bw_used
        if used <= p.bw_cap or self.interference == "none":
            return 1.0
        if self.interference == "thesis":
            return self.p1_speed
        return p.bw_cap / used

    def _refresh_speed(self, p: ProcState, skip: Group | None = None) -> None:
        """Re-time every job part on `p` after its interference factor may have changed."""
        f = self._factor(p)
        if f == p.factor:
            return
        p.factor = f
        now = self.env.now
        speed = p.speed * f
        for g in p.groups:
            if g is skip:
                continue
            if g.rem > 0:
                g.rem -= g.speed * (now - g.t_last)
                if g.rem <= 0:
                    g.rem = 0.0
                    g.end = now
                else:
                    g.end = now + g.rem / speed
            g.t_last = now
            g.speed = speed
            self._retime(g.job)

    def _retime(self, job: Any) -> None:
        end = max(g.end for g in job.groups)
        if end != job.end:
            job.end = end
            job.version += 1
            self._schedule_end(job)

    def _schedule_end(self, job: Any) -> None:
        version = job.version
        ev = self.env.timeout(max(job.end - self.env.now, 0.0))
        ev.callbacks.append(lambda _ev: self._on_end(job, version))

    # -- starting and ending jobs --------------------------------------------------------
    def start(self, job: Any, alloc: list[tuple[ProcState, int]]) -> None:
        """Run `job` now on `alloc` (list of (processor, cores)); the caller checked it fits."""
        self._accumulate()
        self.queue.remove(job)
        now = self.env.now
        job.start = now
        nodes: dict[int, None] = {}
        for p, k in alloc:
            p.busy += k
            p.bw_used += k * job.bw
            node = p.node
            node.busy += k
            node.mem_free -= k * job.mem
            nodes[node.idx] = None
            self.free_total -= k
            self._set_proc_power(p)
        for p, _ in alloc:
            self._refresh_speed(p)
        groups = []
        for p, k in alloc:
            cores = [p.free.pop() for _ in range(k)]
            g = Group(job, p, cores, job.ops, p.speed * p.factor, now)
            p.groups[g] = None
            groups.append(g)
        job.groups = groups
        job.nodes = tuple(nodes)
        job.end = max(g.end for g in groups)
        job.version += 1
        self.running[job] = None
        self._schedule_end(job)

    def _on_end(self, job: Any, version: int) -> None:
        if version != job.version or job not in self.running:
            return  # superseded by a re-timing
        self._accumulate()
        now = self.env.now
        job.end = now
        del self.running[job]
        self.busy_core_s += job.size * (now - job.start)
        touched = []
        for g in job.groups:
            p = g.proc
            k = len(g.cores)
            del p.groups[g]
            p.free.extend(g.cores)
            p.busy -= k
            p.bw_used = p.bw_used - k * job.bw if p.busy else 0.0  # no float residue on idle processors
            node = p.node
            node.busy -= k
            node.mem_free = node.mem_free + k * job.mem if node.busy else node.mem_cap
            self.free_total += k
            self._set_proc_power(p)
            touched.append(p)
        for p in touched:
            self._refresh_speed(p)
        self.done.append(job)
        self.request_decision()

    # -- decisions -------------------------------------------------------------------------
    def request_decision(self) -> None:
        """Ask for one scheduling decision at the current instant, after its other events."""
        if self._decision_pending:
            return
        self._decision_pending = True
        ev = self.env.event()
        ev.callbacks.append(self._decide)
        ev.succeed()

    def _decide(self, _ev: Any) -> None:
        self._decision_pending = False
        if self.queue:
            self.decisions += 1
            self.decide(self)

    def note_reservation(self, job: Any, shadow: float) -> None:
        """Remember the first reservation each head job got (for the EASY invariant)."""
        if self.record and job.id not in self.reservations:
            self.reservations[job.id] = shadow

    def _arrivals(self):
        env = self.env
        jobs = self.jobs
        queue = self.queue
        i, n = 0, len(jobs)
        while i < n:
            t = jobs[i].submit
            if t > env.now:
                yield env.timeout(t - env.now)
            while i < n and jobs[i].submit == t:
                queue.append(jobs[i])
                i += 1
            self.request_decision()

    def run(self) -> None:
        self.env.process(self._arrivals())
        self.env.run()
        self._accumulate()
        if self.queue or self.running:
            stuck = self.queue[0] if self.queue else next(iter(self.running))
            raise RuntimeError(f"simulation ended with job {stuck.id} never completed (scheduler stalled)")


def make_rng(seed_seq: Any) -> random.Random:
    """A fast stdlib RNG seeded from a numpy SeedSequence (policies draw a few numbers per decision)."""
    return random.Random(int(seed_seq.generate_state(2, dtype="uint64")[0]))


__all__ = ["Twin", "NodeState", "ProcState", "make_rng"]
