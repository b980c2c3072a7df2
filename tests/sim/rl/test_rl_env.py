"""RL environment and runs: observations, rewards (thesis 5.4 values), config, reproducibility, weights."""

from __future__ import annotations

import numpy as np
import pytest

from paretosched.config import config_from_dict
from paretosched.errors import UserError
from paretosched.sim.rl.env import N_QUEUE_FEATURES, observation_size
from paretosched.sim.rl.training import save_agent, train
from paretosched.sim.run import prepare, simulate

TWO_JOBS = [{"run_s": 5, "bw_gbs": 24}, {"run_s": 5, "bw_gbs": 24}]
THESIS_ACTIONS = ["shortest-high_gflops", "shortest-high_mem_bw", "shortest-low_power",
                  "first-high_gflops", "first-high_mem_bw"]


def thesis_5_4(**over):
    sched = {"kind": "rl", "agent": "reinforce", "actions": THESIS_ACTIONS, "observation": "minimal",
             "queue_sensitivity": 0.05, "reward": "makespan", "reward_timing": "instant", "hidden_units": 16,
             "hidden_layers": 3, "learning_rate": 0.005, "gamma": 0.99, "entropy_bonus": 0.0, "episodes": 350}
    sched.update(over)
    return config_from_dict({"platform": "two-socket", "workload": {"jobs": TWO_JOBS}, "scheduler": sched})


HPC2N = {"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "first_job": 2500, "n_jobs": 500}}


def test_kind_rl_alone_is_valid_with_36_actions():
    cfg = config_from_dict({**HPC2N, "scheduler": {"kind": "rl"}})
    assert len(cfg.scheduler.action_names()) == 36
    assert cfg.scheduler.action_names()[0] == "random-random"


def test_action_flags_make_the_product():
    flags = {f"allow_job_{j}": j in ("first", "smallest") for j in ("random", "first", "shortest", "smallest",
                                                                   "low_mem", "low_mem_bw")}
    cfg = config_from_dict({**HPC2N, "scheduler": {"kind": "rl", **flags, "allow_res_random": False,
                                                    "void_action": True}})
    names = cfg.scheduler.action_names()
    assert len(names) == 2 * 5 + 1 and names[-1] == "void" and "first-random" not in names


@pytest.mark.parametrize("bad, msg", [
    ({"actions": ["first-fastest"]}, "unknown action"),
    ({"actions": ["first-random"], "allow_job_first": False}, "either"),
    ({f"allow_job_{j}": False for j in ("random", "first", "shortest", "smallest", "low_mem", "low_mem_bw")},
     "at least one job policy"),
    ({"hidden_units": 0}, "hidden_units"),
    ({"agent": "dqn"}, "agent"),
])
def test_invalid_rl_configs_name_the_problem(bad, msg):
    with pytest.raises(UserError, match=msg):
        config_from_dict({**HPC2N, "scheduler": {"kind": "rl", **bad}})


def test_thesis_5_4_rewards_are_the_used_gflops():
    """Instant makespan rewards: 6 (slow consolidated, P1), 6.6 (fast, P1), 8.4 (spread) GFLOP/s."""
    res = simulate(thesis_5_4(episodes=60), seed=0)
    assert sorted(set(np.round(res.training["curves"]["reward"], 9))) == [6.0, 6.6, 8.4]
    assert res.training["curves"]["steps"] == [1] * 60  # one decision per episode


@pytest.mark.parametrize("levers", [{}, {"power_off_idle_s": 20.0, "boot_s": 30.0}])  # + booting nodes
def test_observation_sizes_and_range(levers):
    cfg = config_from_dict({**HPC2N, "scheduler": {"kind": "rl", "observation": "normal", **levers}})
    prep = prepare(cfg)
    p = prep.platform
    assert observation_size("minimal", "reinforce", 1, 1, 1) == N_QUEUE_FEATURES == 21
    assert observation_size("normal", "reinforce", len(p.nodes), len(p.procs), p.n_cores) == \
        21 + len(p.nodes) + len(p.procs) + 3 * p.n_cores
    seen = []

    class Probe:  # records what the agent sees at each decision, then acts like first-high_gflops
        n_actions = 36

        def act(self, obs, rng):
            seen.append(obs.copy())  # the observer reuses its buffer
            # the incrementally kept node/processor fractions equal a full recomputation
            ob = sched.observe
            mem, bw = ob.mem_frac.copy(), ob.bw_frac.copy()
            ob._refresh_all()
            assert np.array_equal(mem, ob.mem_frac) and np.array_equal(bw, ob.bw_frac)
            return 7 if len(seen) % 3 else 11, np.full(36, 1 / 36)

    from paretosched.sim.engine.twin import Twin, make_rng
    from paretosched.sim.readers.platform import fits_factory
    from paretosched.sim.readers.workload import build_jobs
    from paretosched.sim.rl.env import RLScheduler

    jobs, _ = build_jobs(prep.raw, "trace", p.ref_speed, np.random.default_rng(0), fits_factory(p))
    jobs = jobs[:120]
    twin = Twin(p, jobs, cfg.model, cfg.scheduler)
    sched = RLScheduler(twin, cfg.scheduler, Probe(), make_rng(np.random.SeedSequence(0)), None)
    twin.decide = sched.decide
    twin.run()
    assert twin.boots > 0 or not levers  # the switch-off case did boot nodes under the observer
    obs = np.array(seen)
    assert obs.shape[1] == observation_size("normal", "reinforce", len(p.nodes), len(p.procs), p.n_cores)
    assert obs.min() >= 0.0 and obs.max() <= 1.0
    # the 5 queue statistics of each quantity are ordered: min <= Q1 <= median <= Q3 <= max
    stats = obs[:, :20].reshape(len(obs), 4, 5)
    assert np.all(np.diff(stats, axis=2) >= -1e-12)
    # some cores were busy at some decision, and busy cores show their speed fraction
    cores = obs[:, 21 + len(p.nodes) + len(p.procs):].reshape(len(obs), 3, p.n_cores)
    assert cores[:, 0].max() > 0.5 and cores[:, 2].max() > 0.0


def test_same_seed_same_curves_and_metrics():
    cfg = config_from_dict({**HPC2N, "scheduler": {
        "kind": "rl", "agent": "actor_critic", "actions": ["first-random", "smallest-high_mem", "first-low_power"],
        "reward": "energy_slowdown", "episodes": 3, "train_window_jobs": 120, "train_window_count": 2}})
    prep = prepare(cfg)
    a, b = simulate(cfg, seed=5, prepared=prep), simulate(cfg, seed=5, prepared=prep)
    assert a.training == b.training and a.metrics == b.metrics
    c = simulate(cfg, seed=6, prepared=prep)
    assert c.training["curves"]["loss"] != a.training["curves"]["loss"]


def test_derived_training_windows_are_before_the_evaluation_window():
    from paretosched.sim.rl.training import training_windows

    cfg = config_from_dict({**HPC2N, "scheduler": {"kind": "rl", "train_window_jobs": 300,
                                                    "train_window_count": 3}})
    raws = training_windows(cfg, prepare(cfg).raw)
    ends = [r.line_no[-1] for r in raws]
    assert [len(r) for r in raws] == [300, 300, 300]
    assert ends == sorted(ends) and ends[-1] < prepare(cfg).raw.line_no[0]


def test_derived_windows_after_the_evaluation_skip_those_past_the_trace_end():
    from paretosched.sim.rl.training import training_windows

    # no room before job 0: the windows come after the evaluation window; the bundled trace
    # (3,000 jobs) holds two of 1,000 after it, the third would start past its end
    cfg = config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz",
                            "mode": "hdeeprm", "n_jobs": 1000}, "scheduler": {"kind": "rl", "train_window_count": 3}})
    raws = training_windows(cfg, prepare(cfg).raw)
    assert [len(r) for r in raws] == [1000, 1000]
    assert raws[0].line_no[0] > prepare(cfg).raw.line_no[-1]


def test_saved_weights_reproduce_the_evaluation(tmp_path):
    sched = {"kind": "rl", "agent": "reinforce", "actions": ["first-high_gflops", "smallest-high_mem"],
             "observation": "small", "episodes": 2, "train_window_jobs": 120, "train_window_count": 1}
    cfg = config_from_dict({**HPC2N, "scheduler": sched})
    prep = prepare(cfg)
    trained = simulate(cfg, seed=3, prepared=prep)
    agent, _ = train(cfg, prep, np.random.SeedSequence(3).spawn(2)[1])
    path = save_agent(tmp_path / "w.npz", cfg, agent)
    loaded = simulate(config_from_dict({**HPC2N, "scheduler": {**sched, "weights": str(path)}}), seed=3)
    assert loaded.metrics == trained.metrics and loaded.training["curves"] is None
    with pytest.raises(UserError, match="actions"):
        simulate(config_from_dict({**HPC2N, "scheduler": {**sched, "actions": ["first-random", "smallest-high_mem"],
                                                           "weights": str(path)}}), seed=3)


@pytest.mark.parametrize("agent", ["reinforce", "tabular"])
@pytest.mark.parametrize("reward", ["slowdown", "completion", "utilisation", "makespan", "energy"])
@pytest.mark.parametrize("timing", ["job", "interval", "instant"])
def test_every_reward_trains_and_completes_all_jobs(agent, reward, timing):
    cfg = config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "first_job": 200,
                                                                  "n_jobs": 60},
                            "scheduler": {"kind": "rl", "agent": agent, "reward": reward, "reward_timing": timing,
                                          "episodes": 2, "void_action": True, "train_window_count": 1}})
    res = simulate(cfg, seed=1)
    curves = res.training["curves"]
    assert res.metrics["n_jobs"] == 60
    assert all(np.isfinite(curves["reward"])) and all(np.isfinite(curves["loss"]))
    assert all(abs(sum(p) - 1) < 1e-9 for p in curves["preferences"])
    assert sum(res.training["eval_action_counts"].values()) == res.decisions


def test_train_command_writes_weights_curves_and_charts(tmp_path, capsys):
    import json

    import yaml

    from paretosched.cli import main

    cfg = tmp_path / "rl.yaml"
    cfg.write_text(yaml.safe_dump({"platform": "two-socket", "workload": {"jobs": TWO_JOBS}, "scheduler": {
        "kind": "rl", "actions": THESIS_ACTIONS, "observation": "minimal", "reward": "makespan",
        "reward_timing": "instant", "episodes": 30}}))
    assert main(["train", str(cfg), "--out", str(tmp_path / "out" / "w.npz"), "--quiet", "--seed", "2"]) == 0
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == {"w.npz", "w.curves.csv", "w.curves.json", "w.training.html",
                                              "plotly.min.js"}  # the chart page loads the shared plotly.js
    curves = json.loads((out / "w.curves.json").read_text())
    assert len(curves["loss"]) == 30 and curves["actions"] == THESIS_ACTIONS
    assert (out / "w.curves.csv").read_text().count("\n") == 31
    # the saved agent is what `simulate` trains in-line with the same seed
    inline = simulate(thesis_5_4(episodes=30, hidden_units=32, hidden_layers=2, learning_rate=0.005,
                                 entropy_bonus=0.01, queue_sensitivity=0.05), seed=2)
    assert inline.training["curves"]["loss"] == curves["loss"]
    assert "greedy evaluation" in capsys.readouterr().out
    assert main(["train", str(tmp_path / "missing.yaml")]) == 2
