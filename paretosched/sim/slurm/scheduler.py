"""The `slurm` scheduler kind: Slurm's multifactor priority, sched/backfill and node Weight order.

At each decision instant (a submission or a completion, as every scheduler of the twin):
1. Priority (priority/multifactor): each pending job gets
   PriorityWeightAge x age + PriorityWeightJobSize x size + PriorityWeightFairshare x fair-share
   (+ PriorityWeightPartition x the partition's factor, `partitions.py`), each factor in [0, 1],
   truncated to an integer as Slurm does; ties go to the earlier submission. With partitions, the
   queue is sorted by their PriorityTier first, and each job runs on its partition's nodes.
   - age = min(now - submit, PriorityMaxAge) / PriorityMaxAge;
   - size = (nodes / platform nodes + cores / platform cores) / 2, or 1 - that with PriorityFavorSmall
     (nodes: the fewest that hold the job's cores);
   - fair-share = 2^(-U/S) (Slurm's classic formula): U the user's share of all decayed usage
     (core-seconds, halved every PriorityDecayHalfLife), S = 1 / number of users (equal shares);
   - without slurmdbd (`slurmdbd: false`) the age and fair-share factors count for nothing.
2. The main scheduler starts jobs in priority order while the next one fits and stops at the first
   that does not (sched/builtin is only this). With sched/backfill, a backfill cycle (at most one
   per bf_interval) then walks up to bf_max_job_test jobs in priority order: each starts now if it
   fits without touching an earlier job's reservation, else gets a reservation at the earliest time
   within bf_window it fits (conservative backfilling over the profile of `plan.py`).
   Expected ends are what Slurm knows: a job's time limit (requested time) on its slowest core,
   counted, for a job waiting for its nodes to boot, from when the last is up (Slurm advances a
   configuring job's end time then; the twin knows the boot's length from the start).
3. Cores are taken node by node in Weight order (lowest first; `node_order` sets the Weights),
   nodes that are up before booting ones before powered-down ones, as Slurm avoids resuming nodes.
When the main scheduler and backfill run is `dispatch.py`; power saving is `power.py`; CpuFreqDef sets the
twin's DVFS factor (config.SlurmScheduler.freq).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from typing import Any

import numpy as np

from paretosched.errors import UserError
from paretosched.sim.backfill.easy import estimated_end
from paretosched.sim.engine.state import NodeState
from paretosched.sim.placement.taking import power_rank
from paretosched.sim.readers.slurm.platform_import import node_names
from paretosched.sim.readers.slurm.weights import node_weights
from paretosched.sim.slurm.dispatch import Dispatch
from paretosched.sim.slurm.partitions import Partitions
from paretosched.sim.slurm.plan import Profile, take, take_nodes
from paretosched.sim.slurm.power import PowerSaver


def _held_until(start: float, end: float) -> float:
    """The end of a reservation from `start`: at least just after it, so that a job with a time limit
    of 0 still holds its cores at `start` (an empty [t, t) left them free for the next job of the pass)."""
    return end if end > start else math.nextafter(start, math.inf)


class Priority:
    """priority/multifactor over the age, job size and fair-share factors."""

    def __init__(self, spec: Any, n_cores: int, jobs: list[Any], node_cores: list[int]) -> None:
        # without slurmdbd there are no associations (no fair-share factor) and priorities are set at
        # submission only (no recalculation thread), where a job's age is 0: both weights count for nothing
        self.w_age = spec.priority_weight_age if spec.slurmdbd else 0
        self.w_size = spec.priority_weight_job_size
        self.w_fs = spec.priority_weight_fairshare if spec.slurmdbd else 0
        self.w_part = spec.priority_weight_partition
        self.part_norm: dict[Any, float] = {}  # job -> its partition's factor (set by the scheduler)
        self.n_nodes = len(node_cores)
        self.per_node = max(node_cores)  # a job's node count: the fewest nodes that can hold its cores
        self.small = spec.priority_favor_small
        self.max_age = spec.priority_max_age_s
        self.half_life = spec.priority_decay_half_life_s
        self.n_cores = n_cores
        self.share = 1.0 / max(len({j.user for j in jobs}), 1)
        self.usage: dict[int, float] = defaultdict(float)
        self.t_usage = 0.0
        self.n_done = 0  # jobs of the twin's `done` list already charged to the end

    def charge(self, running: Any, done: list[Any], now: float) -> None:
        """Decay the usage to `now` and add the core-seconds jobs used since the last call: the
        running ones up to now, and those that ended since up to their end (they used it too)."""
        dt = now - self.t_usage
        if dt <= 0:
            return
        if self.half_life > 0:
            decay = 0.5 ** (dt / self.half_life)
            for u in self.usage:
                self.usage[u] *= decay
        for j in running:
            self.usage[j.user] += j.size * (now - max(j.start, self.t_usage))
        for j in done[self.n_done:]:
            if j.end > self.t_usage:
                self.usage[j.user] += j.size * (j.end - max(j.start, self.t_usage))
        self.n_done = len(done)
        self.t_usage = now

    def value(self, job: Any, now: float, total: float) -> int:
        age = min(max(now - job.submit, 0.0), self.max_age) / self.max_age
        # priority_multifactor.c `set_priority_factors`: (nodes / cluster nodes + CPUs / cluster CPUs) / 2,
        # or ((N - nodes) / N + (C - CPUs) / C) / 2 with PriorityFavorSmall
        nodes = min(-(-job.size // self.per_node), self.n_nodes)
        size = (nodes / self.n_nodes + job.size / self.n_cores) / 2
        if self.small:
            size = 1.0 - size
        prio = self.w_age * age + self.w_size * min(max(size, 0.0), 1.0)
        if self.part_norm:
            prio += self.w_part * self.part_norm[job]
        if self.w_fs:
            u = self.usage[job.user] / total if total > 0 else 0.0
            prio += self.w_fs * 2.0 ** (-u / self.share)
        return int(prio)

    def order(self, queue: list[Any], now: float, running: Any, done: list[Any],
              tier: dict[Any, int] | None = None) -> list[Any]:
        """The queue in Slurm's order: the partition's PriorityTier first (higher first, `tier`: job ->
        tier, when partitions differ in it), then priority, then submission."""
        if self.w_fs:
            self.charge(running, done, now)
        total = sum(self.usage.values())  # once per decision, not per queued job
        if tier is not None:
            return sorted(queue, key=lambda j: (-tier[j], -self.value(j, now, total), j.submit, j.seq))
        return sorted(queue, key=lambda j: (-self.value(j, now, total), j.submit, j.seq))


class SlurmScheduler:
    def __init__(self, twin: Any, spec: Any, rng: random.Random) -> None:
        self.spec = spec
        if spec.cpu_freq_def == "PowerSave":
            types = twin.platform.spec.processor_types
            unknown = [name for name, pt in types.items() if pt.f_min <= 0]
            if unknown:
                raise UserError(f"scheduler.cpu_freq_def: PowerSave runs each processor at its lowest P-state, "
                                f"but type {unknown[0]!r} of platform {twin.platform.spec.name} has no f_min")
        self.weights = node_weights(twin.platform, spec.node_order)
        self.static = sorted(twin.procs, key=lambda p: (self.weights[p.node.idx], p.node.idx, p.idx))
        self.static_idx = np.fromiter((p.idx for p in self.static), np.int64, len(self.static))
        preference = list(dict.fromkeys(p.node.idx for p in self.static))
        self.power = PowerSaver(twin, spec, preference, node_names(twin.platform.spec))
        self.priority = Priority(spec, twin.platform.n_cores, twin.jobs, [n.ncores for n in twin.nodes])
        self.backfill = spec.scheduler_type == "backfill"
        self.window = spec.bf_window_min * 60.0
        self.max_test = spec.bf_max_job_test
        self.interval = spec.bf_interval_s
        self.resolution = spec.bf_resolution_s
        self.origin = spec.clock_origin_s % spec.bf_resolution_s
        # select/linear: jobs are given whole nodes; select/cons_tres: cores (and memory) within nodes
        self.linear = spec.select_type == "linear"
        self.node_procs = [[p.idx for p in n.procs] for n in twin.nodes]
        self.proc_cores = [p.ncores for p in twin.procs]
        self.node_mem = [n.mem_cap for n in twin.nodes]
        self.next_backfill = 0.0
        self.wake_pending = False
        self.dispatch = Dispatch(spec, self.backfill)
        self.proc_node = np.array([p.node.idx for p in twin.procs], dtype=np.int64)
        self._bounds: dict[tuple[int, float, float, float, int], float] = {}  # per pass: see `decide`
        self._masked_bounds: dict[tuple[int, float, float, float, int], float] = {}  # see `_main`
        self._held: dict[Any, tuple[dict[int, int], dict[int, float]]] = {}  # running job -> cores, memory
        # jobs given cores on a booting node: not yet in twin.running, but their cores are taken
        self.booting: dict[Any, tuple[float, dict[int, int], dict[int, float]]] = {}
        # partitions (`partitions.py`): each job's node mask, and its tier when tiers differ
        self.parts, self.part_of = Partitions.of(spec.partitions, twin)
        self.tier_of: dict[Any, int] | None = None
        if self.parts is not None and len(set(self.parts.tiers)) > 1:
            self.tier_of = {j: self.parts.tiers[k] for j, k in self.part_of.items()}
        if self.parts is not None and spec.priority_weight_partition:
            self.priority.part_norm = {j: self.parts.norm[k] for j, k in self.part_of.items()}

    def decide(self, twin: Any) -> None:
        now = twin.now
        run_main, run_bf = True, False
        if self.dispatch.on:  # slurmctld's timing: the main scheduler and backfill on their own ticks
            run_main, run_bf = self.dispatch.due(twin, sum(1 for j in self.booting if j.start < 0))
            if not (run_main or run_bf):
                return
        order = self.priority.order(twin.queue, now, twin.running, twin.done, self.tier_of)
        prof = self._profile(twin, now)
        if self.power.on:  # power states change the order; otherwise it is the static one
            ranked = sorted(self.static, key=power_rank)
            ranked_idx = np.fromiter((p.idx for p in ranked), np.int64, len(ranked))
        else:
            ranked, ranked_idx = self.static, self.static_idx
        # Resources only shrink during a pass, so a job of the same shape as an earlier one (cores,
        # memory per core, time limit, work, partition) cannot start before that one could: queues of
        # identical jobs (arrays) cost one search
        self._bounds, self._masked_bounds = {}, {}
        # Slurm's main scheduler first: priority order, starting jobs; at one that does not fit, its
        # partition (and its nodes) take no more jobs in this pass (one partition: the pass stops).
        # Then (sched/backfill) the backfill pass over the rest, bf_max_job_test of them at most
        rest = order
        if run_main:
            rest = self._main(twin, prof, order, ranked, ranked_idx, now)
            if not rest or not (run_bf if self.dispatch.on else self._backfill_now(twin)):
                return  # all started; or sched/builtin, or the next backfill cycle is not due
        for job in rest[:self.max_test]:
            allow = None if self.parts is None else self.parts.masks[self.part_of[job]]
            placed = self._place(prof, job, ranked, ranked_idx, now, now + self.window, allow)
            if placed is not None:
                self._commit(twin, prof, job, placed, now)

    def _main(self, twin: Any, prof: Profile, order: list[Any], ranked: list[Any], ranked_idx: np.ndarray,
              now: float) -> list[Any]:
        """The main scheduler's pass (job_scheduler.c `_schedule`); returns the jobs it did not start."""
        rest: list[Any] = []
        failed: set[int] = set()
        masked: np.ndarray | None = None  # nodes of the partitions that failed
        n_parts = 1 if self.parts is None else len(self.parts.masks)
        for i, job in enumerate(order):
            k = 0 if self.parts is None else self.part_of[job]
            if k in failed:
                rest.append(job)
                continue
            allow = None
            if self.parts is not None:
                allow = self.parts.masks[k] if masked is None else self.parts.masks[k] & ~masked
            # bounds found under a mask hold for this pass only: backfill plans on unmasked nodes
            bounds = self._bounds if masked is None else self._masked_bounds
            placed = self._place(prof, job, ranked, ranked_idx, now, now, allow, bounds)
            if placed is None:
                rest.append(job)
                failed.add(k)
                if len(failed) == n_parts:
                    return rest + order[i + 1:]
                if self.parts is not None:  # (always: one partition returned above)
                    masked = self.parts.masks[k] if masked is None else self.parts.masks[k] | masked
                continue
            self._commit(twin, prof, job, placed, now)
        return rest

    def _commit(self, twin: Any, prof: Profile, job: Any, placed: tuple[float, dict[Any, int], float],
                now: float) -> None:
        """Start a job placed now, or hold its reservation in the profile."""
        t, alloc, d = placed
        cores = {p.idx: k for p, k in alloc.items()}
        mem = defaultdict(float)
        if job.mem > 0:
            for p, k in alloc.items():
                mem[p.node.idx] += k * job.mem
        if self.linear:  # the job holds its nodes' cores whole (select/linear), whatever it runs on
            cores = self._whole({p.node.idx for p in alloc})
        end = t + d
        if t == now:
            off = list({p.node: None for p in alloc if p.node.power_state == NodeState.OFF})
            if off:
                self.power.check_resume(off)  # ResumeRate is the twin's boot_hook: boots may wait
            twin.start(job, list(alloc.items()))
            if job.start < 0:  # waits for its nodes to boot: expected to end a time limit after they
                # are up, in this pass as in the next ones (`_profile`): now + d would let the rest of
                # the pass reserve its cores before it frees them
                end = max(p.node.ready_at for p in alloc) + d
                self.booting[job] = (end, cores, dict(mem))
        if t == now:  # started: its cores are taken (the select plugin's state), until its time limit
            prof.add(t, _held_until(t, end), cores, mem, -1)
        else:  # a backfill reservation holds whole nodes over its slot on the bf_resolution grid
            prof.block(*self._slot(t, d, now), sorted({p.node.idx for p in alloc}))

    def _backfill_now(self, twin: Any) -> bool:
        """Whether a backfill cycle runs now (at most one per bf_interval after the last); if one is due
        later, a decision is asked for then, as Slurm's backfill thread wakes up whatever happens
        meanwhile (the job that asks changed since the last cycle: Slurm's `_more_work`)."""
        if not self.backfill:
            return False
        now = twin.now
        if now >= self.next_backfill:
            # backfill.c `backfill_agent`: after a cycle the thread sleeps bf_interval, then polls every
            # second and runs a cycle at the first poll that finds work (a job or node changed since):
            # the next cycle is due bf_interval after this one, at the first decision from then on
            self.next_backfill = now + self.interval
            return True
        if not self.wake_pending:
            self.wake_pending = True
            ev = twin.env.timeout(self.next_backfill - now)
            ev.callbacks.append(lambda _ev: self._wake(twin))
        return False

    def _wake(self, twin: Any) -> None:
        self.wake_pending = False
        twin.request_decision()

    def _whole(self, nodes: Any) -> dict[int, int]:
        """All the cores of `nodes` (what a job holds under select/linear: a node is free or not by its
        cores; memory is counted as used, so a node's memory is whole again when it is free)."""
        return {i: self.proc_cores[i] for n in sorted(nodes) for i in self.node_procs[n]}

    def _profile(self, twin: Any, now: float) -> Profile:
        releases = []
        held, self._held = self._held, {}
        for job in twin.running:
            got = held.get(job)
            if got is None:  # a running job's cores do not change: counted once, when first seen running
                cores: dict[int, int] = defaultdict(int)
                mem: dict[int, float] = defaultdict(float)
                for g in job.groups:
                    cores[g.proc.idx] += len(g.cores)
                    mem[g.proc.node.idx] += len(g.cores) * job.mem
                got = (self._whole(mem) if self.linear else cores, mem)
            self._held[job] = got
            cores, mem = got
            # a job past its estimate still holds its cores now: it releases them just after now, never
            # in the row of what is free now (where they were given out twice: a start on busy cores)
            end = estimated_end(job, now)
            releases.append((end if end > now else math.nextafter(now, math.inf), cores, mem))
        for job in [j for j in self.booting if j.start >= 0]:
            del self.booting[job]
        releases += list(self.booting.values())
        if self.linear:  # a node with a job on it gives nothing until that job releases it whole
            free = np.array([len(p.free) if not p.node.busy else 0 for p in twin.procs])
        else:
            free = np.array([len(p.free) for p in twin.procs])
        prof = Profile(now, free, np.array([n.mem_free for n in twin.nodes]), self.proc_node, releases)
        if self.power.on:
            for node in twin.nodes:
                until = self.power.unusable_until(node.idx)
                if until > now:  # powering down: its (idle) cores cannot be given out before `until`
                    prof.add(now, until, {p.idx: len(p.free) for p in node.procs}, {}, -1)
        return prof

    def _take(self, ranked: list[Any], cores: np.ndarray, mem: np.ndarray, size: int, mpc: float,
              order: np.ndarray | None = None) -> dict[Any, int] | None:
        if self.linear:
            return take_nodes(ranked, cores, self.proc_cores, size, mpc, self.node_mem)
        return take(ranked, cores, mem, size, mpc, order)

    def _slot(self, t: float, d: float, now: float) -> tuple[float, float]:
        """The rows a backfill reservation of a job starting at `t` for `d` s holds: [floor(t),
        max(floor(t + d), floor(t) + bf_resolution)) on the bf_resolution grid (backfill.c,
        `_attempt_backfill` rounds start_time and end_reserve down; `_add_reservation` keeps at least
        one slot and never starts before the cycle)."""
        r, o = self.resolution, self.origin  # the grid is the wall clock's: o is the twin's 0 on it
        start = max(math.floor((t + o) / r) * r - o, now)
        return start, max(math.floor((t + d + o) / r) * r - o, start + r)

    def _free(self, prof: Profile, t: float, d: float, now: float,
              allow: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Cores and memory a job may take for [t, t + d): free throughout (running jobs' cores), on
        nodes no reservation holds in a row that begins by t + d (inclusive, backfill.c's
        `begin_time <= end_time`) or, for a later start, within its own rounded slot
        (`_test_resv_overlap`); only on the nodes `allow` marks, when given (the job's partition)."""
        cores, mem = prof.window(t, d)
        if allow is not None:
            cores = np.where(allow[self.proc_node], cores, 0)
            mem = np.where(allow, mem, 0.0)
        if prof.n_blocks:
            lo, hi = (t, t) if t <= now else self._slot(t, d, now)
            held = prof.blocked(lo, t + d, hi)
            if held.any():
                cores = np.where(held[self.proc_node], 0, cores)
                mem = np.where(held, 0.0, mem)
        return cores, mem

    def _place(self, prof: Profile, job: Any, ranked: list[Any], ranked_idx: np.ndarray, now: float,
               horizon: float, allow: np.ndarray | None = None,
               bounds: dict[tuple[int, float, float, float, int], float] | None = None,
               ) -> tuple[float, dict[Any, int], float] | None:
        """(start, cores per processor, expected run time) at the earliest fitting time up to `horizon`,
        on the nodes `allow` marks (all when None)."""
        d0, size, mpc = job.req_time, job.size, job.mem
        bounds = self._bounds if bounds is None else bounds
        shape = (size, mpc, d0, job.req_ops, self.part_of.get(job, -1))
        lower = bounds.get(shape, now)
        found = None
        if lower <= horizon:
            # what each row alone could give the job (node memory counted), for all rows at once: a
            # window [t, t + d0) fits only if every row it touches could; most candidates fail here
            usable = prof.usable_rows(mpc, allow)
            t_arr = prof.times()
            ends = np.searchsorted(t_arr, t_arr + d0, side="left")
            for k in np.flatnonzero(usable >= size):
                t = prof.t[k]
                if t < lower:
                    continue
                if t > horizon:
                    break
                if usable[k:max(ends[k], k + 1)].min() < size:
                    continue
                cores, mem = self._free(prof, t, d0, now, allow)
                if not prof.enough(cores, mem, size, mpc):
                    continue
                alloc = self._take(ranked, cores, mem, size, mpc, ranked_idx)
                if alloc is None:
                    continue
                d = job.req_ops / min(p.speed for p in alloc)  # the time limit on the slowest core given
                if d > d0:
                    cores, mem = self._free(prof, t, d, now, allow)
                    if self._take(list(alloc), cores, mem, size, mpc) is None:
                        continue
                found = (t, alloc, max(d, d0))
                break
        # found: no earlier start for this shape; not found: none up to this horizon
        bounds[shape] = found[0] if found else math.nextafter(horizon, math.inf)
        return found
