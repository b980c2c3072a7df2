"""RL scheduler overhead: jobs/s of greedy RL evaluation relative to a classic scheduler, same window.

    python benchmarks/rl_overhead.py [--trace ../shared/workloads/HPC2N-2002-2.2-cln.swf.gz] [--jobs 10000]
                                     [--platform gaia] [--seeds 0 1 2 3 4] [--episodes 5]

Default window: the first 10,000 jobs of the shared HPC2N trace (as the twin's throughput
benchmark), or the bundled 3,000-job fragment when the shared traces are not there. On the
fragment the classic run takes ~0.1 s, so fixed costs and timer noise weigh more: pass
`--trace builtin:hpc2n-3k.swf.gz --jobs 3000` to see it (docs/performance.md has both).

The RL scheduler observes (`small`: queue statistics + per-node memory + per-processor bandwidth),
runs a 2 x 64-unit network and applies the chosen pair at every decision. What is timed is the
greedy evaluation, as every study genome ends: the agent is first trained for --episodes episodes
on the same window (default reward; training is not timed), its weights saved, and the run with
those weights timed. The agent's pairs matter to the cost (a spreading policy such as
`high_mem_bw` makes a group per processor and a heap step per core), so each seed (another
initialisation and training) is reported, and the same for the untrained agent, whose arbitrary
initial preferences are the worst case. Per seed:

- ratio: RL jobs/s over classic `first-high_gflops` jobs/s, the two timed alternately (best of
  --repeat each) so that a drift of the machine's speed hits both. Target: median >= 0.3 (trained).
- vs. its pairs: RL jobs/s over the jobs/s the agent's pairs give as classic schedulers, weighted
  by how often it used each (sum of n_a/N x classic time of pair a): the decision overhead alone.
  Each pair is timed once (best of --repeat) when first met, not next to the RL run, so this
  figure and the next still carry the machine's drift; read them to +-30%.
- us per decision: (RL time - that pair-mix time) / decisions.

Times are process CPU times (best of --repeat), so a busy machine disturbs them less than wall time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def _best(cfg, prep, repeat: int) -> tuple[float, object]:
    from paretosched.sim.run import simulate

    best, res = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        res = simulate(cfg, prepared=prep)
        best = min(best, time.process_time() - t0)
    return best, res


def _interleaved(classic, rl, prep, repeat: int) -> tuple[float, float, object]:
    """Best CPU times of the classic and the RL run, measured alternately; and the RL result."""
    from paretosched.sim.run import simulate

    best = {"classic": float("inf"), "rl": float("inf")}
    res = None
    for k in range(repeat):
        # alternate which goes first, so whatever one run leaves behind (heap, caches) is shared
        for name in (("classic", "rl") if k % 2 == 0 else ("rl", "classic")):
            t0 = time.process_time()
            out = simulate(classic if name == "classic" else rl, prepared=prep)
            best[name] = min(best[name], time.process_time() - t0)
            if name == "rl":
                res = out
    return best["classic"], best["rl"], res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[2] / "shared" / "workloads" / "HPC2N-2002-2.2-cln.swf.gz"
    ap.add_argument("--trace", default=str(shared) if shared.exists() else "builtin:hpc2n-3k.swf.gz")
    ap.add_argument("--platform", default="gaia")
    ap.add_argument("--jobs", type=int, default=10000 if shared.exists() else 3000)
    ap.add_argument("--observation", default="small", choices=["minimal", "small", "normal"])
    ap.add_argument("--hidden-units", type=int, default=64)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--episodes", type=int, default=5, help="training episodes before the timed run (0: untrained only)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from paretosched.config import TrainWindow, config_from_dict
    from paretosched.sim.rl.training import save_agent, train
    from paretosched.sim.run import prepare

    base = {"platform": args.platform, "workload": {"path": args.trace, "n_jobs": args.jobs}}

    def classic(pair: str, seed: int):
        job, res = pair.split("-", 1)
        return config_from_dict({**base, "seed": seed, "scheduler": {"job_policy": job, "resource_policy": res}})

    prep = prepare(classic("first-high_gflops", 0))
    n = len(prep.raw)
    t_c, res_c = _best(classic("first-high_gflops", 0), prep, args.repeat)
    print(f"{args.platform}, {n} jobs of {args.trace}; CPU seconds, best of {args.repeat}")
    print(f"classic first-high_gflops: {t_c:.3f} s, {n / t_c:,.0f} jobs/s, {res_c.decisions} decisions "
          "(for reference: each ratio uses the classic run timed next to its RL run)")
    pair_time: dict[tuple[str, int], float] = {}

    def measure(label: str, episodes: int, tmp: str) -> list[float]:
        ratios, mix_ratios = [], []
        print(f"rl, {label}: {args.observation} observation, {args.hidden_units} units x 2, 36 actions, greedy")
        for seed in args.seeds:
            rl = config_from_dict({**base, "seed": seed, "scheduler": {
                "kind": "rl", "episodes": 0, "observation": args.observation,
                "hidden_units": args.hidden_units, "hidden_layers": 2}})
            if episodes:
                spec = rl.scheduler.model_copy(update={
                    "episodes": episodes, "train_windows": [TrainWindow(first_job=0, n_jobs=args.jobs)]})
                trainee = rl.model_copy(update={"scheduler": spec})
                agent, _ = train(trainee, prep, np.random.SeedSequence(seed).spawn(2)[1])
                path = Path(tmp) / f"agent-{seed}.npz"
                save_agent(path, trainee, agent)
                rl = rl.model_copy(update={"scheduler": rl.scheduler.model_copy(update={"weights": str(path)})})
            # classic and RL timed in turn, best of --repeat each: this machine's speed drifts by
            # up to 1.8x within minutes, and a ratio of two runs minutes apart measured the drift
            t_c, t_r, res_r = _interleaved(classic("first-high_gflops", 0), rl, prep, args.repeat)
            counts = {a: c for a, c in res_r.training["eval_action_counts"].items() if c}
            d = sum(counts.values())
            mix = 0.0
            for pair, c in counts.items():
                if pair == "void":
                    continue
                key = (pair, seed if "random" in pair else 0)  # only `random` draws from the seed
                if key not in pair_time:
                    pair_time[key] = _best(classic(*key), prep, args.repeat)[0]
                mix += c / d * pair_time[key]
            fav = max(counts, key=counts.get)
            ratios.append(t_c / t_r)
            mix_ratios.append(mix / t_r)
            print(f"  seed {seed}: {t_r:.3f} s, {n / t_r:,.0f} jobs/s, {d} decisions; classic {t_c:.3f} s; ratio {t_c / t_r:.2f}; "
                  f"vs. its pairs {mix / t_r:.2f} ({(t_r - mix) / max(d, 1) * 1e6:.0f} us per decision); "
                  f"most used {fav} ({counts[fav]} of {d}, alone "
                  f"{pair_time.get((fav, seed if 'random' in fav else 0), float('nan')):.3f} s)")
        print(f"  median ratio rl/classic jobs/s: {statistics.median(ratios):.2f}; "
              f"median vs. its pairs: {statistics.median(mix_ratios):.2f}")
        return ratios

    with tempfile.TemporaryDirectory() as tmp:
        trained = measure(f"trained {args.episodes} episodes", args.episodes, tmp) if args.episodes else []
        measure("untrained", 0, tmp)
    if trained:
        print(f"median ratio of the trained agents: {statistics.median(trained):.2f} (target >= 0.3)")


if __name__ == "__main__":
    main()
