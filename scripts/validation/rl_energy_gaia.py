"""RL on full Gaia, objective energy: trained agent vs. its allowed pairs vs. a uniformly random choice.

    python scripts/validation/rl_energy_gaia.py [--trace PATH] [--first-job 20000] [--seeds 4]

Issue 4's acceptance on `gaia` with a 500-job evaluation window of a shared trace (the committed
test runs the same protocol on `gaia-mini` with the bundled fragment, so tests need no shared data).
Prints, per seed, the energy of the trained agent, of each allowed pair, and of a uniformly random
choice among them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

DEFAULT_TRACE = Path(__file__).resolve().parents[2].parent / "shared" / "workloads" / "SDSC-BLUE-2000-4.2-cln.swf.gz"
PAIRS = ["first-random", "first-high_mem", "first-low_power"]


class Uniform:
    """An 'agent' that picks each allowed pair with equal probability."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, obs, _rng):
        return int(self.rng.integers(len(PAIRS))), np.full(len(PAIRS), 1 / len(PAIRS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=str(DEFAULT_TRACE))
    ap.add_argument("--first-job", type=int, default=20000)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=16)
    args = ap.parse_args()

    from paretosched.config import config_from_dict
    from paretosched.sim import run as run_mod
    from paretosched.sim.rl.env import RLScheduler
    from paretosched.sim.run import prepare, simulate

    base = {"platform": "gaia", "workload": {"path": args.trace, "mode": "hdeeprm", "first_job": args.first_job,
                                             "n_jobs": 500}}
    sched = {"kind": "rl", "agent": "reinforce", "actions": PAIRS, "reward": "energy", "gamma": 0.0,
             "learning_rate": 0.02, "episodes": args.episodes, "train_window_jobs": 250, "train_window_count": 2}
    cfg = config_from_dict({**base, "scheduler": sched})
    untrained = config_from_dict({**base, "scheduler": {**sched, "episodes": 0}})
    prep = prepare(cfg)
    print(f"gaia, {Path(args.trace).name} job lines {args.first_job}..{args.first_job + 499} (hdeeprm), objective "
          f"energy, actions {PAIRS}, REINFORCE {args.episodes} episodes on two 250-job windows before it")
    print("| seed | trained kWh | " + " | ".join(f"{p} kWh" for p in PAIRS) + " | uniform choice kWh |")
    print("|---:|---:|" + "---:|" * len(PAIRS) + "---:|")
    trained_all, uniform_all, ok = [], [], True
    build = run_mod.build_scheduler
    for seed in range(args.seeds):
        e = simulate(cfg, seed=seed, prepared=prep).metrics["energy_kwh"]
        pairs = []
        for pair in PAIRS:
            job, res = pair.split("-", 1)
            pc = config_from_dict({**base, "scheduler": {"job_policy": job, "resource_policy": res}})
            pairs.append(simulate(pc, seed=seed, prepared=prep).metrics["energy_kwh"])
        sampler = Uniform(np.random.default_rng(100 + seed))
        run_mod.build_scheduler = lambda twin, spec, rng, agent=None: RLScheduler(twin, spec, sampler, rng, None)
        try:
            u = simulate(untrained, seed=seed, prepared=prep).metrics["energy_kwh"]
        finally:
            run_mod.build_scheduler = build
        ok &= e <= max(pairs) + 1e-9
        trained_all.append(e)
        uniform_all.append(u)
        print(f"| {seed} | {e:.1f} | " + " | ".join(f"{x:.1f}" for x in pairs) + f" | {u:.1f} |")
    print(f"\nmean trained {np.mean(trained_all):.1f} kWh vs mean uniform choice {np.mean(uniform_all):.1f} kWh; "
          f"no worse than the worst pair on every seed: {ok}")


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
