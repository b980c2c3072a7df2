"""A Gymnasium environment over the twin's RL scheduler (thesis 3.2), for researchers who bring
their own agents: `SchedulingEnv(config)` (needs the `gym` extra: pip install 'paretosched[gym]').

An episode is one simulation of the config's workload window. A step is one decision of the
twin (thesis 3.2.1: a job arrived or completed and the queue is not empty):
- observation: what the twin's own RL scheduler sees (`sim.rl.env.Observer`, the config's
  `scheduler.observation`: minimal | small | normal), fractions in [0, 1] as float32;
- action: an index into the config's action set, `scheduler.action_names()` (policy pairs,
  then `void` when enabled), applied as `RLScheduler.decide` applies it: the pair starts jobs
  until the one it selects does not fit (then EASY when `scheduler.backfilling: easy`);
- reward: the config's `scheduler.reward` (and `reward_weight`) integrated from this decision
  to the next (`Rewarder.interval`), or with `reward_timing: instant` the rate right after the
  action. `reward_timing: job` credits an action when the jobs it started end, which a step
  cannot wait for, so it is read as `interval`;
- `info`: `time_s`, `queue`, the `action` applied and an `action_mask` (void is masked on an
  idle platform, where nothing might ever trigger another decision; chosen there, the first
  pair is applied instead, as the twin's own scheduler also refuses it); at the end, `metrics`
  (the twin's metrics).

`reset(seed=s)` seeds `np_random`, from which each episode draws its run seed (`info["run_seed"]`):
the jobs and random policies then follow from it exactly as `simulate(config, seed=run_seed)`.

How an episode pauses: `Twin.run` is `Twin.begin`, the SimPy clock, `Twin.end`. The env calls
`begin`, then steps the SimPy environment one event at a time and stops as soon as the twin asked
for a decision. Nothing else has happened since, so applying the action then is exactly what the
decision callback would have done (a test replays a classic scheduler bit for bit this way).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
except ImportError:  # the one line a user needs instead of a traceback into our import
    raise ImportError("paretosched.gym needs gymnasium: pip install 'paretosched[gym]'") from None

from paretosched.config import SimConfig
from paretosched.errors import UserError
from paretosched.sim.engine.metrics import compute_metrics
from paretosched.sim.backfill.strategies import schedule_pair
from paretosched.sim.readers.platform import fits_factory
from paretosched.sim.rl.env import Rewarder, RLScheduler, observation_size
from paretosched.sim.run import prepare
from paretosched.sim.engine.twin import Twin, make_rng
from paretosched.sim.readers.workload import build_jobs

__all__ = ["ENV_ID", "SchedulingEnv"]

ENV_ID = "paretosched/Scheduling-v0"  # gymnasium.make(ENV_ID, config=...) once this module is imported


class SchedulingEnv(gymnasium.Env):
    """The twin as a Gymnasium environment; `config` is an RL scheduler config (dict, file or SimConfig)."""

    metadata = {"render_modes": []}

    def __init__(self, config: SimConfig | dict[str, Any] | str | Path, max_steps: int | None = None) -> None:
        from paretosched.api import as_config  # here: the API module loads pandas, which the env never uses

        cfg = as_config(config)
        if cfg.scheduler.kind != "rl":
            raise UserError("scheduler.kind: the environment needs an rl scheduler section (its actions, "
                            f"observation and reward), got {cfg.scheduler.kind!r}")
        if max_steps is not None and max_steps < 1:
            raise UserError(f"max_steps: must be >= 1 (got {max_steps})")
        # the agent kind only shapes the twin's own observation (tabular sees 2 numbers); an agent
        # of the user's gets the vector
        spec = cfg.scheduler if cfg.scheduler.agent != "tabular" else cfg.scheduler.model_copy(update={"agent": "reinforce"})
        self.config, self.scheduler, self.max_steps = cfg, spec, max_steps
        self.prepared = prepare(cfg)
        self._fits = fits_factory(self.prepared.platform)
        self.actions: list[str] = spec.action_names()
        plat = self.prepared.platform
        n_obs = observation_size(spec.observation, spec.agent, len(plat.nodes), len(plat.procs), plat.n_cores)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self.action_space = spaces.Discrete(len(self.actions))
        self._timing = "instant" if spec.reward_timing == "instant" else "interval"
        self._twin: Twin | None = None
        self._done = True
        self._decision = False  # set by the twin's decision hook while the clock is stepped

    # -- Gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        run_seed = int(self.np_random.integers(2**31 - 1))
        # the seed derivation of sim.run.simulate, so an episode is `simulate(config, seed=run_seed)`'s
        ss_workload, ss_sched = np.random.SeedSequence(run_seed).spawn(2)
        if self.config.workload.seed is not None:
            ss_workload = np.random.SeedSequence(self.config.workload.seed)
        plat = self.prepared.platform
        jobs, _ = build_jobs(self.prepared.raw, self.config.workload.mode, plat.ref_speed,
                             np.random.default_rng(ss_workload), self._fits)
        twin = Twin(plat, jobs, self.config.model, self.scheduler)
        # the twin's RL scheduler builds the action set's selectors and the observer; it is never
        # asked to decide (the agent outside does)
        self._sched = RLScheduler(twin, self.scheduler, None, make_rng(ss_sched), None)
        self._rewarder = Rewarder(twin, self.scheduler.reward, self.scheduler.reward_weight)
        twin.decide = self._on_decision
        self._twin, self._steps, self._run_seed = twin, 0, run_seed
        twin.begin()
        self._advance()
        if self._done:
            raise UserError("workload: the episode ended before its first decision (no job to schedule)")
        self._rewarder.interval(twin)  # rewards start at the first decision
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._twin is None or self._done:
            raise gymnasium.error.ResetNeeded("call reset() before step(): the episode has ended")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r}: expected an integer in 0..{self.action_space.n - 1}")
        twin, a = self._twin, int(action)
        if self._sched.pairs[a] is None and self._idle():
            a = next(i for i, p in enumerate(self._sched.pairs) if p is not None)
        pair = self._sched.pairs[a]
        if pair is not None:
            schedule_pair(twin, pair[0], pair[1], self._sched.fill)
        reward = self._rewarder.instant(twin) if self._timing == "instant" else 0.0
        self._steps += 1
        self._advance()
        if self._timing == "interval":
            reward = self._rewarder.interval(twin)
        truncated = not self._done and self.max_steps is not None and self._steps >= self.max_steps
        info = self._info(action=a)
        if self._done:
            twin.end()  # raises if a job never completed
            info["metrics"] = compute_metrics(twin.done, twin.energy, twin.platform.n_cores, twin.boots,
                                              twin.boot_energy)
        obs = self._observation() if not self._done else np.zeros(self.observation_space.shape, np.float32)
        if truncated:
            self._done = True
        return obs, float(reward), bool(self._done and not truncated), truncated, info

    # -- the paused twin -------------------------------------------------------------------
    def _on_decision(self, twin: Twin) -> None:
        self._decision = True

    def _advance(self) -> None:
        """Step the SimPy clock to the twin's next decision, or to the end of the episode."""
        twin = self._twin
        env = twin.env
        self._decision = False
        while not self._decision and len(twin.done) < len(twin.jobs):
            if env.peek() == float("inf"):  # nothing left to happen, yet jobs wait: end() says which
                twin.end()
            env.step()
        self._done = not self._decision

    def _idle(self) -> bool:
        return self._twin.free_total == self._twin.platform.n_cores

    def _observation(self) -> np.ndarray:
        return self._sched.observe(self._twin).astype(np.float32)  # a copy: the observer reuses its buffer

    def _info(self, action: int | None = None) -> dict[str, Any]:
        mask = np.ones(len(self.actions), dtype=np.int8)
        if self._idle():
            mask[[i for i, p in enumerate(self._sched.pairs) if p is None]] = 0
        info: dict[str, Any] = {"time_s": float(self._twin.now), "queue": len(self._twin.queue),
                                "run_seed": self._run_seed, "action_mask": mask}
        if action is not None:
            info["action"] = action
        return info


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point=SchedulingEnv)
