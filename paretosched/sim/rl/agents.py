"""Agents (thesis 3.2.2): REINFORCE with a baseline, actor-critic, and a tabular epsilon-greedy agent.

Every agent has the same face: `act(obs, rng)` picks an action index (greedy when `rng` is None) and
returns its preferences over the actions (probabilities; greedy network agents return the logits:
their argmax is the softmax's, unless two logits are within ~1e-16 and the softmax rounds them
equal); `obs` is the observer's buffer, valid during the call only. `update(obs, actions, rewards, window)`
learns from one
episode on a training window and returns its loss; `arrays()`/`load_arrays()` are what a `.npz` file holds.

Returns are discounted (gamma) and then standardised by running statistics of past episodes on
the same window (`ReturnStats`): HDeepRM's `transform_rewards` standardised per episode, which
cancels single-step episodes like thesis 5.4; the running mean is REINFORCE's baseline.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from paretosched.sim.rl.nets import MLP, Adam, softmax


def discounted_returns(rewards: np.ndarray, gamma: float) -> np.ndarray:
    out = np.empty_like(rewards, dtype=float)
    acc = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


class ReturnStats:
    """Running baseline and scale of returns, per training window and per step of the episode.

    Windows differ in load (one window's energy can be 4x another's) and a return shrinks as its
    episode runs out, so a single scalar baseline leaves most of the variance in the advantage. Each
    window keeps a running mean return per step index (a time-indexed baseline; steps beyond the
    longest episode seen reuse its last value) and a running variance. Means are plain averages for
    the first visits, then exponential with weight `alpha`.
    """

    def __init__(self, alpha: float = 0.1) -> None:
        self.alpha = alpha
        self.mean: dict[int, np.ndarray] = {}
        self.var: dict[int, float] = {}
        self.visits: dict[int, int] = {}

    def standardise(self, g: np.ndarray, window: int = 0) -> np.ndarray:
        n = len(g)
        if window not in self.mean:  # first visit: its own statistics
            self.mean[window], self.var[window], self.visits[window] = g.copy(), float(g.var()), 0
        m = self.mean[window]
        if len(m) < n:
            m = self.mean[window] = np.concatenate([m, np.full(n - len(m), m[-1] if len(m) else 0.0)])
        base = m[:n].copy()
        dev2 = float(((g - base) ** 2).mean())
        if self.var[window] <= 1e-12:  # nothing but one value seen yet (a single-step first episode)
            self.var[window] = dev2
        out = (g - base) / math.sqrt(self.var[window]) if self.var[window] > 1e-12 else g - base
        self.visits[window] += 1
        a = max(self.alpha, 1.0 / self.visits[window])
        m[:n] += a * (g - base)
        self.var[window] += a * (dev2 - self.var[window])
        return out


class PolicyGradientAgent:
    """REINFORCE with a running baseline: loss = -mean(log pi(a|o) * A) - beta * mean(entropy)."""

    kind = "reinforce"

    def __init__(self, n_obs: int, n_actions: int, hidden_units: int, hidden_layers: int, lr: float,
                 gamma: float, entropy_bonus: float, rng: np.random.Generator) -> None:
        self.n_obs, self.n_actions = n_obs, n_actions
        self.gamma, self.beta = gamma, entropy_bonus
        self.actor = MLP([n_obs] + [hidden_units] * hidden_layers + [n_actions], rng)
        self.opt = Adam(self.actor.params, lr)
        self.stats = ReturnStats()

    def probs(self, obs: np.ndarray) -> np.ndarray:
        z = self.actor.predict(obs)
        e = np.exp(z - z.max())
        return e / e.sum()

    def act(self, obs: np.ndarray, rng: np.random.Generator | None) -> tuple[int, np.ndarray]:
        if rng is None:  # greedy: no softmax, an evaluation decides on the logits
            z = self.actor.predict(obs)
            return int(np.argmax(z)), z
        p = self.probs(obs)
        # inverse-CDF sampling: one uniform per decision, no per-call setup of rng.choice
        a = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
        return min(a, self.n_actions - 1), p

    def policy_loss_grads(self, obs: np.ndarray, actions: np.ndarray, adv: np.ndarray
                          ) -> tuple[float, list[np.ndarray]]:
        """Policy loss (thesis eq. 3.3, averaged, minus the entropy bonus) and its gradients."""
        z, cache = self.actor.forward(obs)
        p = softmax(z)
        n = len(actions)
        logp = np.log(p + 1e-12)
        rows = np.arange(n)
        ent = -(p * logp).sum(axis=1)
        loss = float(-(logp[rows, actions] * adv).mean() - self.beta * ent.mean())
        # d(-A log p_a)/dz = A (p - onehot); d(-beta H)/dz_i = beta p_i (log p_i + H)
        dz = p * adv[:, None]
        dz[rows, actions] -= adv
        dz += self.beta * p * (logp + ent[:, None])
        return loss, self.actor.backward(cache, dz / n)

    def update(self, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, window: int = 0) -> float:
        adv = self.stats.standardise(discounted_returns(rewards, self.gamma), window)
        loss, grads = self.policy_loss_grads(obs, actions, adv)
        self.opt.step(grads)
        return loss

    def arrays(self) -> dict[str, np.ndarray]:
        # the return statistics are not saved: a loaded agent is evaluated, or retrained afresh
        return {f"actor_{i}": p for i, p in enumerate(self.actor.params)}

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        _load_params(self.actor, "actor", arrays)


def huber(diff: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Huber loss (thesis eq. 3.4) and its derivative."""
    a = np.abs(diff)
    return np.where(a < 1.0, 0.5 * diff * diff, a - 0.5), np.clip(diff, -1.0, 1.0)


class ActorCriticAgent(PolicyGradientAgent):
    """Actor-critic: a separate critic network estimates the standardised return; A = G - V(o)."""

    kind = "actor_critic"

    def __init__(self, n_obs: int, n_actions: int, hidden_units: int, hidden_layers: int, lr: float,
                 gamma: float, entropy_bonus: float, rng: np.random.Generator) -> None:
        super().__init__(n_obs, n_actions, hidden_units, hidden_layers, lr, gamma, entropy_bonus, rng)
        self.critic = MLP([n_obs] + [hidden_units] * hidden_layers + [1], rng, out_scale=1.0)
        self.critic_opt = Adam(self.critic.params, lr)

    def value_loss_grads(self, obs: np.ndarray, targets: np.ndarray) -> tuple[float, list[np.ndarray]]:
        v, cache = self.critic.forward(obs)
        loss, dl = huber(v[:, 0] - targets)
        n = len(targets)
        return float(loss.mean()), self.critic.backward(cache, (dl / n)[:, None])

    def update(self, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, window: int = 0) -> float:
        g = self.stats.standardise(discounted_returns(rewards, self.gamma), window)
        v = self.critic.predict(obs)[:, 0]
        p_loss, p_grads = self.policy_loss_grads(obs, actions, g - v)  # advantage: critic held fixed
        v_loss, v_grads = self.value_loss_grads(obs, g)
        self.opt.step(p_grads)
        self.critic_opt.step(v_grads)
        return p_loss + v_loss

    def arrays(self) -> dict[str, np.ndarray]:
        out = super().arrays()
        out.update({f"critic_{i}": p for i, p in enumerate(self.critic.params)})
        return out

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_arrays(arrays)
        _load_params(self.critic, "critic", arrays)


def _load_params(net: MLP, prefix: str, arrays: dict[str, np.ndarray]) -> None:
    for i, p in enumerate(net.params):
        a = arrays.get(f"{prefix}_{i}")
        if a is None or a.shape != p.shape:
            raise ValueError(f"saved {prefix} layer {i} does not match the configured network")
        p[...] = a


class TabularAgent:
    """Epsilon-greedy over a table of states (queue-length x occupancy bins), after Kell et al.

    Q(s, a) is the mean of the last `history` discounted returns seen after taking a in s (0 = all).
    Exploration: eps = end + (start - end) x decay^episode; unvisited actions are tried first.
    """

    kind = "tabular"

    def __init__(self, n_actions: int, queue_bins: int, occupancy_bins: int, gamma: float,
                 eps_start: float, eps_end: float, eps_decay: float, history: int) -> None:
        self.n_actions = n_actions
        self.qbins, self.obins = queue_bins, occupancy_bins
        self.n_obs = 2
        self.gamma = gamma
        self.eps_start, self.eps_end, self.eps_decay = eps_start, eps_end, eps_decay
        self.epsilon = eps_start
        n_states = queue_bins * occupancy_bins
        self.q = np.zeros((n_states, n_actions))
        self.count = np.zeros((n_states, n_actions))
        self.hist: dict[tuple[int, int], deque[float]] = {}
        self.maxlen = history if history > 0 else None

    def state(self, obs: np.ndarray) -> int:
        """obs = (queue length, busy-core fraction) -> table row."""
        qb = min(self.qbins - 1, int(math.log2(1.0 + obs[0])))
        ob = min(self.obins - 1, int(obs[1] * self.obins))
        return qb * self.obins + ob

    def set_episode(self, episode: int) -> None:
        self.epsilon = self.eps_end + (self.eps_start - self.eps_end) * self.eps_decay ** episode

    def _greedy(self, s: int, explore: bool) -> int:
        seen = self.count[s] > 0
        if explore and not seen.all():
            return int(np.argmin(seen))  # the first action never tried in this state
        if not seen.any():
            seen_any = self.count.sum(axis=0) > 0  # unknown state: the best action on average
            if not seen_any.any():
                return 0
            means = np.where(seen_any, (self.q * self.count).sum(axis=0) / np.maximum(self.count.sum(axis=0), 1),
                             -np.inf)
            return int(np.argmax(means))
        return int(np.argmax(np.where(seen, self.q[s], -np.inf)))

    def act(self, obs: np.ndarray, rng: np.random.Generator | None) -> tuple[int, np.ndarray]:
        s = self.state(obs)
        explore = rng is not None
        best = self._greedy(s, explore)
        eps = self.epsilon if explore else 0.0
        p = np.full(self.n_actions, eps / self.n_actions)
        p[best] += 1.0 - eps
        if explore and rng.random() < eps:
            return int(rng.integers(self.n_actions)), p
        return best, p

    def update(self, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, window: int = 0) -> float:
        g = discounted_returns(rewards, self.gamma)
        err = 0.0
        for o, a, ret in zip(obs, actions, g):
            s = self.state(o)
            key = (s, int(a))
            h = self.hist.get(key)
            if h is None:
                h = self.hist[key] = deque(maxlen=self.maxlen)
            err += (ret - self.q[s, a]) ** 2 if self.count[s, a] else 0.0
            h.append(float(ret))
            self.q[s, a] = sum(h) / len(h)
            self.count[s, a] += 1
        return err / max(len(g), 1)  # mean squared error of Q before the update

    def arrays(self) -> dict[str, np.ndarray]:
        return {"q": self.q, "count": self.count}

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        if arrays["q"].shape != self.q.shape:
            raise ValueError("saved Q table does not match the configured bins and actions")
        self.q[...] = arrays["q"]
        self.count[...] = arrays["count"]
        # histories are not saved: each visited pair restarts from its mean as one sample
        self.hist = {(int(s), int(a)): deque([float(self.q[s, a])], maxlen=self.maxlen)
                     for s, a in zip(*np.nonzero(self.count))}


Agent = PolicyGradientAgent | ActorCriticAgent | TabularAgent


def build_agent(spec: Any, n_obs: int, n_actions: int, rng: np.random.Generator) -> Agent:
    """A fresh agent for an `RLScheduler` spec."""
    if spec.agent == "tabular":
        return TabularAgent(n_actions, spec.queue_bins, spec.occupancy_bins, spec.gamma, spec.epsilon_start,
                            spec.epsilon_end, spec.epsilon_decay, spec.reward_history)
    cls = ActorCriticAgent if spec.agent == "actor_critic" else PolicyGradientAgent
    return cls(n_obs, n_actions, spec.hidden_units, spec.hidden_layers, spec.learning_rate, spec.gamma,
               spec.entropy_bonus, rng)
