"""RL scheduler overhead: jobs/s of greedy RL evaluation relative to a classic scheduler, same window.

    python benchmarks/rl_overhead.py [--trace builtin:hpc2n-3k.swf.gz] [--platform gaia] [--jobs 3000]

The RL scheduler observes (`small`: queue statistics + per-node memory + per-processor bandwidth),
runs a 64-unit network and applies the chosen pair at every decision; training is excluded
(`episodes: 0`: the greedy cost does not depend on the weights). Target: ratio >= 0.3.
"""

from __future__ import annotations

import argparse
import time


def _best(cfg, prep, repeat: int) -> tuple[float, object]:
    from paretosched.sim.run import simulate

    best, res = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = simulate(cfg, prepared=prep)
        best = min(best, time.perf_counter() - t0)
    return best, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="builtin:hpc2n-3k.swf.gz")
    ap.add_argument("--platform", default="gaia")
    ap.add_argument("--jobs", type=int, default=3000)
    ap.add_argument("--observation", default="small", choices=["minimal", "small", "normal"])
    ap.add_argument("--hidden-units", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from paretosched.config import config_from_dict
    from paretosched.sim.run import prepare

    base = {"platform": args.platform, "workload": {"path": args.trace, "n_jobs": args.jobs}}
    classic = config_from_dict({**base, "scheduler": {"job_policy": "first", "resource_policy": "high_gflops"}})
    rl = config_from_dict({**base, "scheduler": {"kind": "rl", "episodes": 0, "observation": args.observation,
                                                 "hidden_units": args.hidden_units, "hidden_layers": 2}})
    prep = prepare(classic)
    t_c, res_c = _best(classic, prep, args.repeat)
    t_r, res_r = _best(rl, prep, args.repeat)
    n = len(prep.raw)
    d = res_r.decisions
    print(f"{args.platform}, {n} jobs of {args.trace}")
    print(f"classic first-high_gflops: {t_c:.3f} s, {n / t_c:,.0f} jobs/s, {res_c.decisions} decisions")
    print(f"rl ({args.observation}, {args.hidden_units} units x 2, 36 actions, greedy): {t_r:.3f} s, "
          f"{n / t_r:,.0f} jobs/s, {d} decisions ({(t_r - t_c) / max(d, 1) * 1e6:.0f} us extra per decision)")
    print(f"ratio rl/classic jobs/s: {t_c / t_r:.2f} (target >= 0.3)")
    # the pairs the agent applies cost what they cost in a classic run too: compare with its favourite
    counts = res_r.training["eval_action_counts"]
    fav = max(counts, key=counts.get)
    job, res = fav.split("-", 1)
    same = config_from_dict({**base, "scheduler": {"job_policy": job, "resource_policy": res}})
    t_f, _ = _best(same, prep, args.repeat)
    print(f"classic {fav} (the agent's most used pair, {counts[fav]} of {d} decisions): {t_f:.3f} s; "
          f"ratio rl/that: {t_f / t_r:.2f}")

if __name__ == "__main__":
    main()
