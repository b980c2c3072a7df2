"""The RL environment on the twin (thesis 3.2.3-3.2.4): actions and rewards, around the observer.

`RLScheduler.decide` is the twin's decision hook: at each decision instant with a non-empty queue it
observes (`sim.rl.observe.Observer`), lets the agent pick an action, and applies it: a policy pair
runs until the job it selects does not fit (then EASY if configured); the void action starts
nothing. While training, it records (observation, action, reward) steps for the agent's episode
update. `observation_size` and `N_QUEUE_FEATURES` are imported here too: the RL scheduler's surface.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from paretosched.sim.backfill.strategies import backfill_strategy, schedule_pair
from paretosched.sim.placement.policies import JobSelector, ResourceSelector, job_selector, resource_selector
from paretosched.sim.rl.observe import N_QUEUE_FEATURES, Observer, observation_size

__all__ = ["N_QUEUE_FEATURES", "Observer", "RLScheduler", "Rewarder", "observation_size"]


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
        self.fill = backfill_strategy(spec.backfilling)
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
                schedule_pair(twin, pair[0], pair[1], self.fill)
            return
        if self.actions and self.timing == "interval":
            self.rewards.append(self.rewarder.interval(twin))  # the previous action's interval
        self.obs.append(obs.copy())  # the observer reuses its buffer
        self.actions.append(a)
        self.prob_sum += p
        before = list(twin.queue) if self.timing == "job" else None
        if pair is not None:
            schedule_pair(twin, pair[0], pair[1], self.fill)
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
