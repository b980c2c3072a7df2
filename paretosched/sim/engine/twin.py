"""The SimPy digital twin: jobs arrive, a scheduler places them on cores, cores change P-state.

Event-driven, with no periodic ticks: the only events are job arrivals (one per distinct
submit time), job completions, node idle timeouts and boots, one coalesced scheduling decision
per instant in which something happened, and decisions a scheduler asks for ahead (`wake_at`:
conservative backfilling's next reservation). Per-event work is proportional to what
changed (the processors a job touches and the jobs sharing them), never to the number of jobs
or cores.

Model (DESIGN.md, thesis 3.1.2): a busy core runs at its peak x DVFS factor x interference
factor (P0 = 1; P1 = `p1_speed` while its processor's summed bandwidth demand exceeds the
capacity, or capacity/demand under `proportional`); an idle core of a busy processor draws
`p2_power` of its full power, a core of an idle processor `p3_power`. All cores of a job advance
together at the pace of its slowest core at each instant (`progress: lockstep`: Batsim runs a job
as one SimGrid ptask_L07 action, whose rate is bounded by every host's speed over its share), so the
pace is recomputed whenever a speed on one of its processors changes; `independent` lets each
processor's part run at its own speed and ends the job with the last part.
Energy is the exact integral of the piecewise-constant total power.

Node power states (switch-off after an idle timeout, boots, the floor of nodes kept on) are
`nodepower.NodePower`'s, and the re-timing of jobs when an interference factor changes is
`pacing.Pacing`'s, and starting a job on its cores is `starting.Starting`'s: bases of the twin, so
the hot path calls them as its own methods.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import simpy

from paretosched.sim.engine.nodepower import NodePower
from paretosched.sim.engine.pacing import Pacing
from paretosched.sim.engine.starting import Starting
from paretosched.sim.engine.state import NodeState, ProcState, build_state
from paretosched.sim.engine.timeline import Timeline
from paretosched.sim.readers.platform import Platform


class Twin(Starting, NodePower, Pacing):
    """One simulation run. Build it, set `decide` to a scheduler's decision function, call `run()`."""

    def __init__(self, platform: Platform, jobs: list[Any], model: Any, levers: Any,
                 record: bool = False, timeline: bool = False) -> None:
        self.platform = platform
        self.jobs = jobs
        self.env = simpy.Environment()
        self.nodes, self.procs = build_state(platform, model.p2_power, model.p3_power, model.static_power,
                                             levers.freq, levers.freq_by_type)
        self.interference = model.interference
        self.p1_speed = model.p1_speed
        self.lockstep = model.progress == "lockstep"
        self.queue: list[Any] = []
        self.running: dict[Any, None] = {}
        self.done: list[Any] = []
        self.free_total = platform.n_cores
        self.power = sum(p.power for p in self.procs)
        self.energy = 0.0
        self.t_energy = 0.0
        self.record = record
        # energy not attributed to any job: idle processors, off and booting nodes (record mode)
        self.unattr_power = self.power if record else 0.0
        self.unattr_energy = 0.0
        self.reservations: dict[int, float] = {}
        # dirty-sets of whoever keeps running jobs ordered by their estimated end (backfilling):
        # a job is marked when it begins, when a group of it is re-timed, and when it ends
        self.job_watchers: list[dict[Any, None]] = []
        # what a scheduling mechanism keeps between its passes (EASY's end order, conservative's
        # groups), by name: it lives and dies with this twin (a module-level map keyed by the twin
        # kept every twin alive through its values' references back to it)
        self.sched_state: dict[str, Any] = {}
        self.decide: Callable[[Twin], None] = lambda twin: None
        self._decision_pending = False
        self._wake = -1.0  # the latest time a decision was asked for ahead (`wake_at`)
        self.decisions = 0
        self.timeline = Timeline(self) if timeline else None
        self._finished = self.env.event()
        self._init_node_power(levers)
        if record:
            for p in self.procs:
                p.t_acc = 0.0

    # -- time and energy -------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.env.now

    def _accumulate(self) -> None:
        now = self.env.now
        dt = now - self.t_energy
        if dt > 0:
            self.energy += self.power * dt
            if self.record:
                self.unattr_energy += self.unattr_power * dt
            if self.timeline is not None:
                self.timeline.segment(self.t_energy, now)
            self.t_energy = now

    def _attribute(self, p: ProcState) -> None:
        """Charge `p`'s energy since its last change to the jobs on it (record mode only)."""
        now = self.env.now
        dt = now - p.t_acc
        if dt > 0 and p.busy:
            idle_share = (p.ncores - p.busy) * p.p2_w * dt / len(p.groups)
            busy_w_dt = p.busy_w * dt
            for g in p.groups:
                g.job.energy += len(g.cores) * busy_w_dt + idle_share
        p.t_acc = now

    # -- ending jobs (starting them is `starting.Starting`'s) ----------------------------
    def _on_end(self, job: Any, version: int) -> None:
        if version != job.version or job not in self.running:
            return  # superseded by a re-timing
        self._accumulate()
        now = self.env.now
        job.end = now
        del self.running[job]
        for w in self.job_watchers:
            w[job] = None
        record = self.record
        tl = self.timeline
        off_after = self.off_after
        bw = job.bw
        mem = job.mem
        power = self.power
        free_total = self.free_total
        refresh = []
        # the power update inlined as in `_begin` (same arithmetic, same order): once per job part
        for g in job.groups:
            p = g.proc
            k = len(g.cores)
            if record:
                self._attribute(p)
            if tl is not None:
                tl.before(p)
            del p.groups[g]
            p.free.extend(g.cores)
            busy = p.busy = p.busy - k
            if bw:
                p.bw_used = p.bw_used - k * bw if busy else 0.0  # no float residue on idle processors
            elif not busy:
                p.bw_used = 0.0
            node = p.node
            nb = node.busy = node.busy - k
            if mem:
                node.mem_free = node.mem_free + k * mem if nb else node.mem_cap
            elif not nb:
                node.mem_free = node.mem_cap
            if node.watchers:
                for w in node.watchers:
                    w[p] = None
                    if mem or not nb:
                        w[node] = None
            free_total += k
            new = p.watts[busy]
            if record:
                self.unattr_power += (new if not busy else 0.0) - 0.0
            power += new - p.power
            p.power = new
            if tl is not None:
                self.power = power
                tl.after(p)
            if p.factor != 1.0:
                refresh.append(p)
            if not nb and off_after is not None:
                self.power = power
                self._arm_idle(node)
        self.power = power
        self.free_total = free_total
        for p in refresh:
            if p.factor != 1.0:
                self._refresh_speed(p)
        self.done.append(job)
        if len(self.done) == len(self.jobs):
            self._finished.succeed()
        else:
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

    def wake_at(self, t: float) -> None:
        """Ask for a decision at `t` even if nothing happens then (a kept reservation's start:
        conservative backfilling). A request no earlier than a pending one is already served."""
        now = self.env.now
        if t <= now or now < self._wake <= t:
            return
        self._wake = t
        ev = self.env.timeout(t - now)
        ev.callbacks.append(lambda _ev: self.request_decision())

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
            # always integrate here (not only with a timeline), so recording never changes a bit of energy
            self._accumulate()
            while i < n and jobs[i].submit == t:
                queue.append(jobs[i])
                i += 1
            self.request_decision()

    def run(self) -> None:
        """Simulate until the last job completes (the clock stops there, whatever timers remain).

        It is `begin`, the clock, `end`: paretosched.gym calls those two and steps the clock itself."""
        self.begin()
        if self.jobs:
            # Python's cyclic collector would scan every live job, part and event at each of its
            # passes (half the CPU of a FCFS run of 10,000 jobs); the loop leaves no cyclic garbage
            # of its own (jobs and their parts stay alive until the run ends), so it is paused
            with collector_paused():
                run_clock(self.env, self._finished)
        self.end()

    def begin(self) -> None:
        """Arm the idle timers and the arrivals."""
        if self.off_after is not None:
            for node in self.nodes:
                self._arm_idle(node)
        self.env.process(self._arrivals())

    def end(self) -> None:
        """Integrate energy up to now; a job left in the queue or running is an error."""
        self._accumulate()
        if self.queue or self.running or len(self.done) != len(self.jobs):
            stuck = self.queue[0] if self.queue else next(iter(self.running), None)
            raise RuntimeError(f"simulation ended with job {getattr(stuck, 'id', '?')} never completed "
                               "(scheduler stalled)")


class ClockStuck(RuntimeError):
    """The simulated clock stayed at one instant for `STUCK_EVENTS` events: something keeps waking
    itself with no delay. A bug, but one a study records as a failed evaluation, not a hang."""


# far above any real instant: review measured 1.25 events per job at one instant (20,000 jobs submitted
# together), so a real instant would need over 3 million jobs
STUCK_EVENTS = 1 << 22


def run_clock(env: simpy.Environment, until: simpy.Event) -> None:
    """`env.run(until=until)`, returning quietly if the events run out first (`Twin.end` reports
    it), and raising `ClockStuck` once the clock has not moved for `STUCK_EVENTS` events (it is
    checked every `STUCK_EVENTS` events, so a stuck clock is caught within twice that).

    Hand-written rather than SimPy's `run`, whose loop has no such guard: the same loop (step until
    `until` stops it) looks at the clock once per `STUCK_EVENTS` events, so a step costs no more than
    there (`step` is a local here; SimPy's loop looks it up on every event), and the event order, hence
    every number, is SimPy's."""
    if until.callbacks is None:
        return
    until.callbacks.append(simpy.core.StopSimulation.callback)
    step = env.step
    try:
        while True:
            since = env.now
            for _ in range(STUCK_EVENTS):
                step()
            if env.now == since:  # the clock never goes back: it stayed at `since` throughout
                raise ClockStuck(f"the simulated clock stayed at t={since:g} s for {STUCK_EVENTS:,} "
                                 "events: a scheduler or power rule keeps waking itself at one instant")
    except (simpy.core.StopSimulation, simpy.core.EmptySchedule):
        return


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector paused inside (restored after, if it was on): for stretches that
    allocate many long-lived objects and no cyclic garbage, which each of its passes would scan."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def make_rng(seed_seq: Any) -> random.Random:
    """A fast stdlib RNG seeded from a SeedSequence, sim/seeds.py's or numpy's (policies draw a few numbers
    per decision)."""
    return random.Random(int(seed_seq.generate_state(2, dtype="uint64")[0]))


__all__ = ["Twin", "NodeState", "ProcState", "collector_paused", "make_rng"]
