"""RL agents: analytic gradients against finite differences, tabular bookkeeping, save/load."""

from __future__ import annotations

import numpy as np
import pytest

from paretosched.sim.rl.agents import ActorCriticAgent, PolicyGradientAgent, TabularAgent, discounted_returns
from paretosched.sim.rl.nets import MLP


def _fd_check(loss_fn, params, grads, rng, n_probe=25, eps=1e-6):
    """Central differences on random coordinates of every parameter array."""
    for p, g in zip(params, grads):
        for _ in range(n_probe):
            idx = tuple(rng.integers(s) for s in p.shape)
            old = p[idx]
            p[idx] = old + eps
            up = loss_fn()
            p[idx] = old - eps
            down = loss_fn()
            p[idx] = old
            num = (up - down) / (2 * eps)
            assert g[idx] == pytest.approx(num, rel=1e-4, abs=1e-7), (idx, g[idx], num)


def _batch(rng, n=12, n_obs=7, n_actions=5):
    return rng.random((n, n_obs)), rng.integers(n_actions, size=n), rng.standard_normal(n)


@pytest.mark.parametrize("layers", [0, 1, 3])
def test_mlp_backward_matches_finite_differences(layers):
    rng = np.random.default_rng(1)
    net = MLP([6] + [9] * layers + [4], rng, out_scale=1.0)
    x = rng.standard_normal((8, 6))
    w = rng.standard_normal((8, 4))

    def loss():
        return float((net.forward(x)[0] * w).sum())

    _, cache = net.forward(x)
    _fd_check(loss, net.params, net.backward(cache, w), rng)


@pytest.mark.parametrize("beta", [0.0, 0.3])
def test_reinforce_policy_gradient(beta):
    rng = np.random.default_rng(2)
    agent = PolicyGradientAgent(7, 5, 10, 3, 0.01, 0.9, beta, rng)
    for p in agent.actor.params:  # a non-trivial policy, not the near-uniform init
        p += rng.standard_normal(p.shape) * 0.5
    obs, actions, adv = _batch(rng)
    _, grads = agent.policy_loss_grads(obs, actions, adv)
    _fd_check(lambda: agent.policy_loss_grads(obs, actions, adv)[0], agent.actor.params, grads, rng)


def test_actor_critic_gradients():
    rng = np.random.default_rng(3)
    agent = ActorCriticAgent(7, 5, 8, 2, 0.01, 0.9, 0.1, rng)
    for p in agent.actor.params + agent.critic.params:
        p += rng.standard_normal(p.shape) * 0.5
    obs, actions, adv = _batch(rng)
    _, grads = agent.policy_loss_grads(obs, actions, adv)
    _fd_check(lambda: agent.policy_loss_grads(obs, actions, adv)[0], agent.actor.params, grads, rng)
    # targets both within and beyond the Huber knee
    targets = agent.critic.predict(obs)[:, 0] + np.linspace(-3, 3, len(obs))
    _, vgrads = agent.value_loss_grads(obs, targets)
    _fd_check(lambda: agent.value_loss_grads(obs, targets)[0], agent.critic.params, vgrads, rng)


def test_policy_update_moves_towards_rewarded_action():
    rng = np.random.default_rng(4)
    agent = PolicyGradientAgent(3, 4, 8, 1, 0.05, 0.0, 0.0, rng)
    obs = np.tile([0.2, 0.5, 0.9], (1, 1))
    for _ in range(60):
        a, _ = agent.act(obs[0], rng)
        agent.update(obs, np.array([a]), np.array([1.0 if a == 2 else 0.0]))
    assert agent.probs(obs[0])[2] > 0.9


def test_greedy_act_is_the_most_probable_action():
    rng = np.random.default_rng(4)
    agent = PolicyGradientAgent(30, 9, 16, 2, 0.01, 0.9, 0.0, rng)
    for p in agent.actor.params:  # a trained-looking network: preferences far from uniform
        p += rng.standard_normal(p.shape)
    for obs in rng.random((200, 30)):
        a, z = agent.act(obs, None)
        probs = agent.probs(obs)
        assert a == int(np.argmax(probs)) and probs[a] == probs.max()
        assert np.allclose(np.exp(z - z.max()) / np.exp(z - z.max()).sum(), probs)


def test_discounted_returns():
    assert discounted_returns(np.array([1.0, 2.0, 4.0]), 0.5).tolist() == [1 + 0.5 * 2 + 0.25 * 4, 2 + 0.5 * 4, 4.0]


def test_tabular_history_window_and_epsilon():
    agent = TabularAgent(3, queue_bins=2, occupancy_bins=2, gamma=0.0, eps_start=1.0, eps_end=0.1,
                         eps_decay=0.5, history=2)
    obs = np.array([[0.0, 0.0]] * 3)
    agent.update(obs, np.array([1, 1, 1]), np.array([1.0, 2.0, 6.0]))
    assert agent.q[0, 1] == pytest.approx(4.0)  # mean of the last 2 returns only
    assert agent.count[0, 1] == 3
    agent.set_episode(2)
    assert agent.epsilon == pytest.approx(0.1 + 0.9 * 0.25)
    a, p = agent.act(np.array([0.0, 0.0]), None)
    assert a == 1 and p[1] == 1.0  # greedy: the only visited action
    assert agent.state(np.array([100.0, 0.99])) == 3  # last queue bin, last occupancy bin
