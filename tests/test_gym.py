"""paretosched.gym: the twin behind Gymnasium's API (skipped only without the gym extra)."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import paretosched as ps  # noqa: E402
from paretosched.errors import UserError  # noqa: E402
from paretosched.gym import ENV_ID, SchedulingEnv  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"
WORKLOAD = {"path": "builtin:hpc2n-3k.swf.gz", "mode": "hdeeprm", "n_jobs": 100}
PAIRS = ["first-high_gflops", "shortest-low_power", "smallest-high_mem_bw"]


def rl_config(**scheduler: Any) -> dict[str, Any]:
    return {"platform": "gaia-mini", "workload": WORKLOAD,
            "scheduler": {"kind": "rl", "actions": PAIRS, **scheduler}}


def episode(env: SchedulingEnv, seed: int, policy: Any) -> tuple[list[float], list[np.ndarray], dict[str, Any]]:
    obs, info = env.reset(seed=seed)
    rewards, observations, done = [], [obs], False
    while not done:
        obs, r, terminated, truncated, info = env.step(policy(obs, info))
        rewards.append(r)
        observations.append(obs)
        done = terminated or truncated
    return rewards, observations, info


@pytest.mark.parametrize("observation", ["minimal", "small", "normal"])
def test_check_env_passes(observation: str) -> None:
    env = SchedulingEnv(rl_config(observation=observation, void_action=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning of the checker is a failure too
        check_env(env, skip_render_check=True)
    assert env.action_space.n == 4 and env.actions == [*PAIRS, "void"]


def test_registered_with_gymnasium() -> None:
    env = gymnasium.make(ENV_ID, config=rl_config(), max_steps=3)
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space and isinstance(env.unwrapped, SchedulingEnv)
    assert [env.step(0)[3] for _ in range(3)] == [False, False, True]


def test_a_fixed_pair_replays_the_classic_scheduler_bit_for_bit() -> None:
    # random policies, EASY and node switch-off: every twin mechanism a decision can touch
    levers = {"backfilling": "easy", "power_off_idle_s": 300, "freq": 0.8}
    env = SchedulingEnv(rl_config(**{**levers, "actions": ["random-random"]}))
    rewards, _, info = episode(env, 3, lambda obs, info: 0)
    classic = {"platform": "gaia-mini", "workload": WORKLOAD,
               "scheduler": {"kind": "classic", "job_policy": "random", "resource_policy": "random", **levers}}
    sim = ps.simulate(classic, seeds=[info["run_seed"]])
    assert info["metrics"] == sim.metrics
    assert sim.metrics["n_boots"] > 0 and len(rewards) > 100


def test_episodes_are_reproducible_and_in_the_observation_space() -> None:
    env = SchedulingEnv(rl_config(observation="normal", reward="energy_slowdown"))

    def cycle(obs: np.ndarray, info: dict[str, Any]) -> int:
        return int(info["queue"]) % 3

    r1, o1, i1 = episode(env, 5, cycle)
    r2, o2, i2 = episode(env, 5, cycle)
    r3, _, i3 = episode(env, 6, cycle)
    assert r1 == r2 and all(np.array_equal(a, b) for a, b in zip(o1, o2)) and i1["metrics"] == i2["metrics"]
    assert i3["run_seed"] != i1["run_seed"] and i3["metrics"] != i1["metrics"]
    assert all(o in env.observation_space for o in o1)
    assert all(np.isfinite(r) for r in r1) and i1["metrics"]["n_jobs"] == 100


def test_void_on_an_idle_platform_applies_the_first_pair() -> None:
    env = SchedulingEnv(rl_config(actions=["first-high_gflops"], void_action=True))
    obs, info = env.reset(seed=0)
    assert info["queue"] > 0 and info["action_mask"].tolist() == [1, 0]  # nothing runs yet
    _, _, _, _, info = env.step(1)
    assert info["action"] == 0


def test_instant_rewards_and_truncation() -> None:
    env = SchedulingEnv(rl_config(reward="utilisation", reward_timing="instant"), max_steps=5)
    obs, info = env.reset(seed=1)
    steps = [env.step(0) for _ in range(5)]
    assert [s[3] for s in steps] == [False] * 4 + [True] and not any(s[2] for s in steps)
    assert all(s[1] >= 0 for s in steps) and steps[0][1] > 0  # busy cores right after a start
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(0)


def test_errors() -> None:
    with pytest.raises(UserError, match="needs an rl scheduler section"):
        SchedulingEnv({"platform": "gaia-mini", "workload": WORKLOAD})
    with pytest.raises(UserError, match="max_steps: must be >= 1"):
        SchedulingEnv(rl_config(), max_steps=0)
    env = SchedulingEnv(rl_config())
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 3: expected an integer in 0..2"):
        env.step(3)


def test_docs_reinforce_loop_runs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    first = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    gym_blocks = re.findall(r"```python\n(.*?)```", text.split("## A Gymnasium environment")[1], flags=re.S)
    assert len(gym_blocks) == 1
    ns: dict[str, Any] = {}
    exec(compile(first.split("sim = ")[0], str(DOCS), "exec"), ns)  # noqa: S102 - the `config` it defines
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(gym_blocks[0], str(DOCS), "exec"), ns)  # noqa: S102 - our own documentation
    theta = ns["theta"]
    assert np.all(np.isfinite(theta)) and np.abs(theta).sum() > 0
    assert np.linalg.norm(theta) <= 3 * 0.5 + 1e-9  # three clipped steps
    lines = out.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == ["0", "1", "2"]
    assert ns["info"]["metrics"]["n_jobs"] == 100
