"""The RL environment on the twin (thesis 3.2.3-3.2.4): observations, actions, rewards.

`RLScheduler.decide` is the twin's decision hook: at each decision instant with a non-empty queue it
observes, lets the agent pick an action, and applies it: a policy pair runs until the job it selects
does not fit (then EASY if configured); the void action starts nothing. While training, it records
(observation, action, reward) steps for the agent's episode update.

Observations are fractions in [0, 1]. Requested quantities are scaled by trace limits (the 99th
percentile over the episode's jobs, as HDeepRM). `minimal`: 5 statistics (min, Q1, median, Q3, max)
of requested time, cores, memory and bandwidth over the queue + the queue-change ratio; `small`:
+ free-memory fraction per node and free-bandwidth fraction per processor; `normal`: + per core
speed, power and remaining-time fractions. Per-decision cost is numpy work on cached arrays, with
Python loops only over nodes/processors (small) or running jobs (normal), never over cores.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from paretosched.sim.policies import JobSelector, ResourceSelector, job_selector, resource_selector
from paretosched.sim.pairs import schedule_pair
from paretosched.sim.state import NodeState

_QUANTILES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
N_QUEUE_FEATURES = 4 * len(_QUANTILES) + 1


def observation_size(kind: str, agent: str, n_nodes: int, n_procs: int, n_cores: int) -> int:
    if agent == "tabular":
        return 2
    size = N_QUEUE_FEATURES
    if kind in ("small", "normal"):
        size += n_nodes + n_procs
    if kind == "normal":
        size += 3 * n_cores
    return size


def trace_limits(jobs: list[Any]) -> np.ndarray:
    """99th percentile of requested time, cores, memory and bandwidth per core (1 where all are 0)."""
    if not jobs:
        return np.ones(4)
    a = np.array([(j.req_time, j.size, j.mem, j.bw) for j in jobs], dtype=float)
    lim = np.percentile(a, 99, axis=0)
    return np.where(lim > 0, lim, 1.0)


def _quantile_weights(q: int) -> tuple[np.ndarray, ...]:
    """Rows and weights of numpy's linear quantiles (_QUANTILES) of `q` sorted values."""
    pos = _QUANTILES * (q - 1)
    lo = pos.astype(int)
    hi = np.minimum(lo + 1, q - 1)
    frac = (pos - lo)[:, None]
    return lo, hi, 1.0 - frac, frac


class Observer:
    """Builds observation vectors for one twin (per-platform constants cached at construction)."""

    def __init__(self, twin: Any, kind: str, sensitivity: float, tabular: bool) -> None:
        self.kind = kind
        self.tabular = tabular
        self.sensitivity = sensitivity
        jobs = twin.jobs
        feats = np.array([(j.req_time, j.size, j.mem, j.bw) for j in jobs], dtype=float).reshape(-1, 4)
        self.feats = np.clip(feats / trace_limits(jobs), 0.0, 1.0)  # row = job.seq
        self.prev_q = 0
        self._weights: dict[int, tuple[np.ndarray, ...]] = {}  # short queue length -> quantile rows, weights
        self.nodes = twin.nodes
        self.procs = twin.procs
        self.n_cores = twin.platform.n_cores
        self.inv_mem = np.array([1.0 / n.mem_cap if math.isfinite(n.mem_cap) and n.mem_cap > 0 else 0.0
                                 for n in self.nodes])
        self.finite_mem = self.inv_mem > 0
        self.bw_cap = np.array([p.bw_cap if math.isfinite(p.bw_cap) else 0.0 for p in self.procs])
        self.inv_bw = np.where(self.bw_cap > 0, 1.0 / np.where(self.bw_cap > 0, self.bw_cap, 1.0), 0.0)
        self.inv_mem_l, self.inv_bw_l = self.inv_mem.tolist(), self.inv_bw.tolist()  # fast scalar reads
        # `small`: free memory per node and bandwidth per processor, updated only for the processors
        # and nodes the twin marked changed since the last observation (`NodeState.watchers`)
        # one observation buffer, written in place: the queue statistics and change ratio, then
        # views for the per-node and per-processor fractions (and, `normal`, the per-core block)
        size = observation_size(kind, "mlp", len(self.nodes), len(self.procs), self.n_cores)
        self.buf = np.empty(size if not tabular else N_QUEUE_FEATURES)
        self.stats = self.buf[:N_QUEUE_FEATURES - 1]
        # a one-job queue's statistics are its features repeated (every quantile of one value);
        # the tabular agent sees only the queue length and occupancy
        self.feats5 = np.repeat(self.feats, len(_QUANTILES), axis=1) if not tabular else self.feats
        end = N_QUEUE_FEATURES
        if kind != "minimal" and not tabular:
            self.mem_frac = self.buf[end:end + len(self.nodes)]
            end += len(self.nodes)
            self.bw_frac = self.buf[end:end + len(self.procs)]
            end += len(self.procs)
        else:
            self.mem_frac, self.bw_frac = np.ones(len(self.nodes)), np.ones(len(self.procs))
        self.cores_part = self.buf[end:]
        self.dirty: dict[Any, None] = {}
        if kind != "minimal" and not tabular:
            for node in self.nodes:
                node.watchers.append(self.dirty)
        self._refresh_all()
        if kind == "normal":
            self.core_proc = np.repeat(np.arange(len(self.procs)), [p.ncores for p in self.procs])
            self.first_core = np.array([p.first_core for p in self.procs])
            self.busy_frac = np.array([p.busy_w / p.core_w if p.core_w > 0 else 0.0 for p in self.procs])
            self.p2_frac = np.array([p.p2_w / p.core_w if p.core_w > 0 else 0.0 for p in self.procs])
            self.p3_frac = np.array([p.p3_w / p.core_w if p.core_w > 0 else 0.0 for p in self.procs])

    def __call__(self, twin: Any) -> np.ndarray:
        queue = twin.queue
        q = len(queue)
        if self.tabular:
            return np.array([float(q), 1.0 - twin.free_total / self.n_cores])
        buf = self.buf
        if q == 1:  # the common case: every quantile of one value is that value (same bits)
            self.stats[:] = self.feats5[queue[0].seq]
        else:
            x = self.feats[[j.seq for j in queue]]
            w = self._weights.get(q)
            if w is None:
                w = _quantile_weights(q)
                if q <= 64:  # short queues are the common case; long ones cost their partition anyway
                    self._weights[q] = w
            lo, hi, w_lo, w_hi = w
            if q > 64:
                x = np.partition(x, np.union1d(lo, hi), axis=0)  # only the order statistics we read
            else:
                x.sort(axis=0)
            self.stats[:] = (x[lo] * w_lo + x[hi] * w_hi).ravel(order="F")  # numpy's linear quantiles, 5 x 4
        change = (q - self.prev_q) / max(self.prev_q, 1)
        self.prev_q = q
        buf[N_QUEUE_FEATURES - 1] = min(1.0, max(0.0, 0.5 + change / (2.0 * self.sensitivity)))
        if self.dirty:  # the fractions are views of `buf`
            self._refresh_changed()
        if self.kind == "normal":
            self._cores(twin)
        return buf

    def _refresh_all(self) -> None:
        with np.errstate(invalid="ignore"):  # inf x 0 on nodes without a memory limit, masked just below
            mem = np.array([n.mem_free for n in self.nodes]) * self.inv_mem
        self.mem_frac[:] = np.where(self.finite_mem, np.clip(mem, 0.0, 1.0), 1.0)
        bw = (self.bw_cap - np.array([p.bw_used for p in self.procs])) * self.inv_bw
        self.bw_frac[:] = np.where(self.bw_cap > 0, np.clip(bw, 0.0, 1.0), 1.0)

    def _refresh_changed(self) -> None:
        # gathered in lists and written with one fancy assignment each: numpy scalar writes and
        # min/max calls per processor cost more than the arithmetic
        inv_mem, inv_bw = self.inv_mem_l, self.inv_bw_l
        ni: list[int] = []
        nv: list[float] = []
        pi: list[int] = []
        pv: list[float] = []
        for x in self.dirty:  # processors (bandwidth) and nodes (memory) changed since last time
            if x.__class__ is NodeState:
                inv = inv_mem[x.idx]
                if inv > 0:
                    v = x.mem_free * inv
                    ni.append(x.idx)
                    nv.append(0.0 if v <= 0.0 else 1.0 if v > 1.0 else v)
            else:
                inv = inv_bw[x.idx]
                if inv > 0:
                    v = (x.bw_cap - x.bw_used) * inv
                    pi.append(x.idx)
                    pv.append(0.0 if v <= 0.0 else 1.0 if v > 1.0 else v)
        self.dirty.clear()
        if ni:
            self.mem_frac[ni] = nv
        if pi:
            self.bw_frac[pi] = pv

    def _cores(self, twin: Any) -> None:
        """Per core, into the buffer: speed fraction of peak, power fraction of full, remaining
        fraction of the request."""
        n = self.n_cores
        idx: list[int] = []
        speed: list[float] = []
        rem: list[float] = []
        now = twin.now
        for job in twin.running:
            r = max(0.0, 1.0 - (now - job.start) / job.req_time) if job.req_time > 0 else 0.0
            for g in job.groups:
                k = len(g.cores)
                idx.extend(g.cores)
                speed.extend([g.proc.speed * g.proc.factor / g.proc.gflops] * k)  # the core's own P-state, as HDeepRM
                rem.extend([r] * k)
        procs = self.procs
        busy = np.array([p.busy > 0 for p in procs])
        on = np.array([p.node.power_state == NodeState.ON for p in procs])
        idle_power = np.where(busy, self.p2_frac, self.p3_frac) * on
        power = idle_power[self.core_proc]
        s = np.zeros(n)
        rm = np.zeros(n)
        if idx:
            ii = np.array(idx)
            s[ii] = speed
            rm[ii] = rem
            power[ii] = self.busy_frac[self.core_proc[ii]]
        out = self.cores_part
        np.clip(s, 0.0, 1.0, out=out[:n])
        np.clip(power, 0.0, 1.0, out=out[n:2 * n])
        out[2 * n:] = rm


class Rewarder:
    """Reward rates of thesis 3.2.4, taken at an instant or integrated exactly between decisions.

    Integrals use cumulative sums over arrived and finished jobs, so a reward costs O(new events):
    active-job time A(t) = sum_done (end - submit) + sum_active (t - submit), and the same weighted by
    1 / requested time for slowdown. Interval energy is net of a work-proportional reference (see
    `j_per_gflop`): the same ranking of schedules (total work is fixed), much less variance. Scales
    (so rewards of one kind compare across windows): energy per full platform power, slowdown and
    completion per job, utilisation per core.
    """

    def __init__(self, twin: Any, kind: str, weight: float) -> None:
        self.kind, self.w = kind, weight
        self.jobs = twin.jobs
        self.n_jobs = max(len(self.jobs), 1)
        self.n_cores = twin.platform.n_cores
        self.p_max = max(sum(p.power_w for p in twin.platform.procs), 1e-9)
        last_submit = self.jobs[-1].submit if self.jobs else 0.0
        self.span = max(last_submit, 1.0)  # energy_slowdown: energy as a mean power fraction
        self.arrived = 0
        self.done = 0
        self.a_done = self.s_done = self.u_done = 0.0
        self.n_act = 0
        self.sub_act = self.inv_act = self.subinv_act = 0.0
        self.t_last = 0.0
        self.e_last = self.a_last = self.s_last = self.u_last = 0.0
        # J per GFLOP of the platform at full load: energy rewards subtract this x work done, a
        # control variate (total work is fixed by the jobs) that cancels the exogenous load
        self.j_per_gflop = sum(p.power_w for p in twin.platform.procs) / max(
            sum(p.gflops_per_core * p.cores for p in twin.platform.procs), 1e-9)
        self.w_done = 0.0

    def _advance(self, twin: Any) -> None:
        now = twin.now
        jobs = self.jobs
        while self.arrived < len(jobs) and jobs[self.arrived].submit <= now:
            j = jobs[self.arrived]
            inv = 1.0 / max(j.req_time, 1.0)
            self.n_act += 1
            self.sub_act += j.submit
            self.inv_act += inv
            self.subinv_act += j.submit * inv
            self.arrived += 1
        done = twin.done
        while self.done < len(done):
            j = done[self.done]
            inv = 1.0 / max(j.req_time, 1.0)
            self.n_act -= 1
            self.sub_act -= j.submit
            self.inv_act -= inv
            self.subinv_act -= j.submit * inv
            self.a_done += j.end - j.submit
            self.s_done += (j.end - j.submit) * inv
            self.u_done += (j.end - j.start) * j.size
            self.w_done += j.ops * j.size
            self.done += 1

    def _work(self, twin: Any, now: float) -> float:
        """GFLOP done so far by finished and running jobs."""
        w = self.w_done
        for j in twin.running:
            for g in j.groups:
                if g.rem > 0:
                    w += len(g.cores) * (j.ops - max(g.rem - g.speed * (now - g.t_last), 0.0))
                else:
                    w += len(g.cores) * j.ops
        return w

    def job_credit(self, jobs: list[Any]) -> float:
        """The reward of an action that started `jobs`, once they have ended (job timing).

        The per-job terms of the interval integrals: summed over all actions they give the same
        totals (energy: the jobs' attributed energy, net of the work reference), but each action is
        credited only with what it started, which is far less noisy than what happened after it.
        """
        k = self.kind
        r = 0.0
        for j in jobs:
            turn = j.end - j.submit
            if k in ("energy", "energy_slowdown"):
                e = -(j.energy - self.j_per_gflop * j.ops * j.size) / self.p_max
                if k == "energy":
                    r += e
                else:
                    r += self.w * e / self.span - (1.0 - self.w) * turn / max(j.req_time, 1.0) / self.n_jobs
            elif k == "slowdown":
                r -= turn / max(j.req_time, 1.0) / self.n_jobs
            elif k == "completion":
                r -= turn / self.n_jobs
            elif k == "utilisation":
                r += (j.end - j.start) * j.size / self.n_cores
        return r

    def instant(self, twin: Any) -> float:
        """The reward rate right after an action (the thesis's rewards)."""
        self._advance(twin)
        k = self.kind
        if k == "energy":
            return -twin.power / self.p_max
        if k == "makespan":
            return sum(p.busy * p.speed * p.factor for p in twin.procs)  # GFLOP/s in use
        if k == "utilisation":
            return float(self.n_cores - twin.free_total)
        if k == "completion":
            return -float(self.n_act)
        if k == "slowdown":
            return -self.inv_act
        return -(self.w * twin.power / self.p_max + (1.0 - self.w) * self.inv_act * self.span / self.n_jobs)

    def interval(self, twin: Any) -> float:
        """The reward rate integrated since the previous call (or the start)."""
        self._advance(twin)
        now = twin.now
        k = self.kind
        if k == "makespan":
            r = -(now - self.t_last)
        elif k in ("energy", "energy_slowdown"):
            e = twin.energy + twin.power * (now - twin.t_energy) - self.j_per_gflop * self._work(twin, now)
            de, self.e_last = (e - self.e_last) / self.p_max, e
            if k == "energy":
                r = -de
            else:
                s = self.s_done + now * self.inv_act - self.subinv_act
                ds, self.s_last = (s - self.s_last) / self.n_jobs, s
                r = -(self.w * de / self.span + (1.0 - self.w) * ds)
        elif k == "slowdown":
            s = self.s_done + now * self.inv_act - self.subinv_act
            r, self.s_last = -(s - self.s_last) / self.n_jobs, s
        elif k == "completion":
            a = self.a_done + now * self.n_act - self.sub_act
            r, self.a_last = -(a - self.a_last) / self.n_jobs, a
        else:  # utilisation: busy core-seconds of finished and running jobs
            u = self.u_done + sum((now - j.start) * j.size for j in twin.running)
            r, self.u_last = (u - self.u_last) / self.n_cores, u
        self.t_last = now
        return r


class RLScheduler:
    """The twin's decision hook for an RL agent; records the episode when `training`."""

    def __init__(self, twin: Any, spec: Any, agent: Any, rng: random.Random,
                 sample_rng: np.random.Generator | None) -> None:
        self.agent = agent
        self.sample_rng = sample_rng  # None: greedy evaluation
        self.training = sample_rng is not None
        self.easy = spec.backfilling == "easy"
        self.names = spec.action_names()
        selectors: dict[str, Any] = {}
        self.pairs: list[tuple[JobSelector, ResourceSelector] | None] = []
        for name in self.names:
            if name == "void":
                self.pairs.append(None)
                continue
            jp, rp = name.split("-", 1)
            jkey, rkey = "job:" + jp, "res:" + rp  # both kinds have a `random`
            if jkey not in selectors:
                selectors[jkey] = job_selector(jp, rng)
            if rkey not in selectors:
                selectors[rkey] = resource_selector(rp, twin.procs, rng, spec.bw_cap, prefer_on=twin.switch_off)
            self.pairs.append((selectors[jkey], selectors[rkey]))
        self.observe = Observer(twin, spec.observation, spec.queue_sensitivity, spec.agent == "tabular")
        self.rewarder = Rewarder(twin, spec.reward, spec.reward_weight) if self.training else None
        self.timing = spec.reward_timing
        if self.timing == "job" and spec.reward == "makespan":
            self.timing = "interval"  # the makespan is no sum over jobs: credit it by interval
        self.instant = self.timing == "instant"
        self.started: list[list[Any]] = []  # job timing: the jobs each step started
        self.obs: list[np.ndarray] = []
        self.actions: list[int] = []
        self.rewards: list[float] = []
        self.prob_sum = np.zeros(len(self.names))
        self.counts = [0] * len(self.names)  # a list: a numpy scalar increment costs more

    def decide(self, twin: Any) -> None:
        obs = self.observe(twin)
        a, p = self.agent.act(obs, self.sample_rng)
        if self.pairs[a] is None and twin.free_total == self.observe.n_cores:
            # void on an idle platform could wait forever (nothing left to trigger a decision):
            # take the most probable real action instead, and learn from that one
            a = int(np.argmax(np.where([q is not None for q in self.pairs], p, -np.inf)))
        self.counts[a] += 1
        pair = self.pairs[a]
        if not self.training:
            if pair is not None:
                schedule_pair(twin, pair[0], pair[1], self.easy)
            return
        if self.actions and self.timing == "interval":
            self.rewards.append(self.rewarder.interval(twin))  # the previous action's interval
        self.obs.append(obs.copy())  # the observer reuses its buffer
        self.actions.append(a)
        self.prob_sum += p
        before = list(twin.queue) if self.timing == "job" else None
        if pair is not None:
            schedule_pair(twin, pair[0], pair[1], self.easy)
        if before is not None:
            self.started.append([j for j in before if j.nodes])  # `start` gave them nodes
        elif self.instant:
            self.rewards.append(self.rewarder.instant(twin))

    def finish(self, twin: Any) -> None:
        """Close the episode: the last interval runs until the last job ends; jobs have their outcome."""
        if not self.training or not self.actions:
            return
        if self.timing == "interval":
            self.rewards.append(self.rewarder.interval(twin))
        elif self.timing == "job":
            self.rewards = [self.rewarder.job_credit(js) for js in self.started]
