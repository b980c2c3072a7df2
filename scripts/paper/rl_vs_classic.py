"""Kell et al. VI on the twin (a): the NSGA-II front of the RL genome vs the RL scheduler with default
hyperparameters vs the best classic pair: energy saved at equal slowdown.

    python scripts/paper/rl_vs_classic.py runs/gaia-rl-quick --classic-run runs/paper-mini-classic \
        --png docs/figures/studies/rl-vs-classic.png

Inputs: an RL run directory whose study has a baseline `rl_default` (RL scheduler, every
hyperparameter at its default, no levers). The 72 classic pairs (6 job x 6 resource policies, EASY
off/on, no levers) are simulated here on the run's platform and window, on the run's seeds and on
its re-check seeds (cached under runs/.cache/paper-pairs).

Energy saved at equal slowdown, against a reference R = (E_R, B_R) measured on the same seeds:
  E_front(B_R) = min { E_i : i on the RL front, B_i <= B_R }   (a logged configuration attains it)
  saved = E_R - E_front(B_R)   (and in % of E_R); "-" when no front point is as good as B_R.
The interpolated variant joins the front's points by straight segments (numpy.interp) instead.
On fresh seeds: the front points and R are re-measured on the re-check seeds, then the same rule.
The best classic pair is Kell's balanced point of the pairs' own front (smallest sum of min-max
scaled objectives over the non-dominated pairs).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from common import (
    baselines,
    energy_at,
    energy_interp,
    evaluate,
    front_mask,
    recheck_objectives,
    run_front,
    run_inputs,
    save_figure,
)

from paretosched.analysis.rundata import load_run
from paretosched.config import JOB_POLICIES, RESOURCE_POLICIES


def classic(base: dict, j: str, r: str, bf: str) -> dict:
    cfg = {k: v for k, v in base.items() if k != "scheduler"}
    cfg["scheduler"] = {"kind": "classic", "job_policy": j, "resource_policy": r, "backfilling": bf}
    return cfg


def balanced(E: np.ndarray, B: np.ndarray) -> int:
    F = np.column_stack([E, B])
    idx = np.flatnonzero(front_mask(F))
    f = F[idx]
    span = np.where(f.max(0) > f.min(0), f.max(0) - f.min(0), 1.0)
    return int(idx[np.argmin(((f - f.min(0)) / span).sum(1))])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rl_run")
    ap.add_argument("--classic-run", help="an NSGA-II run of classic pairs + levers on the same window")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--png")
    args = ap.parse_args()

    run = load_run(args.rl_run)
    base, seeds, fresh = run_inputs(args.rl_run)
    cache = Path(args.rl_run).resolve().parent / ".cache" / "paper-pairs"
    names = [f"{j}-{r}-{bf}" for bf in ("none", "easy") for j in JOB_POLICIES for r in RESOURCE_POLICIES]
    cfgs = [classic(base, *n.split("-")) for n in names]
    pairs = evaluate(cfgs, seeds, args.workers, cache)
    pairs_fresh = evaluate(cfgs, fresh, args.workers, cache) if fresh else [None] * len(cfgs)
    E = np.array([p["energy_kwh"] for p in pairs])
    B = np.array([p["mean_bsld"] for p in pairs])
    k = balanced(E, B)
    print(f"classic pairs on {len(seeds)} search seed(s): {int(front_mask(np.column_stack([E, B])).sum())} "
          f"non-dominated of {len(names)}; energy {E.min():.1f}-{E.max():.1f} kWh, "
          f"mean_bsld {B.min():.2f}-{B.max():.2f}")

    rl_default = baselines(run)["rl_default"]
    rl_cfg = run.rows[rl_default["eval_id"]].config
    rl_fresh = evaluate([rl_cfg], fresh, args.workers, cache)[0] if fresh else None
    refs = {"rl_default (RL, default hyperparameters)": (rl_default["objectives"], rl_fresh),
            f"best classic pair: {names[k]} (balanced)": (pairs[k], pairs_fresh[k])}
    fcfs = names.index("first-high_gflops-easy")
    refs["FCFS + EASY (first-high_gflops-easy)"] = (pairs[fcfs], pairs_fresh[fcfs])
    low_b = int(np.argmin(B))
    refs[f"lowest-slowdown pair: {names[low_b]}"] = (pairs[low_b], pairs_fresh[low_b])

    front = run_front(run)
    fE, fB = front["energy_kwh"].to_numpy(float), front["mean_bsld"].to_numpy(float)
    rc = [recheck_objectives(run, i) for i in front["eval_id"]]
    has_rc = fresh and all(r is not None for r in rc)
    rE = np.array([r["energy_kwh"] for r in rc]) if has_rc else None
    rB = np.array([r["mean_bsld"] for r in rc]) if has_rc else None
    others = {}
    if args.classic_run:
        crun = load_run(args.classic_run)
        cf = run_front(crun)
        others["classic+levers front"] = (cf["energy_kwh"].to_numpy(float), cf["mean_bsld"].to_numpy(float))

    def saved(ref_e: float, e: float | None) -> str:
        return "-" if e is None else f"{e:.1f} ({ref_e - e:+.1f} kWh saved, {100 * (ref_e - e) / ref_e:+.1f}%)"

    print(f"\nRL front: {len(front)} points on search seeds {seeds}; re-check seeds {fresh}")
    head = "| reference | E_R (kWh) | B_R | RL front E at B_R | interpolated"
    head += " | classic+levers front E at B_R |" if others else " |"
    print(head)
    print("|---|---:|---:|---|---|" + ("---|" if others else ""))
    for name, (o, _) in refs.items():
        line = (f"| {name} | {o['energy_kwh']:.1f} | {o['mean_bsld']:.2f} | "
                f"{saved(o['energy_kwh'], energy_at(fE, fB, o['mean_bsld']))} | "
                f"{saved(o['energy_kwh'], energy_interp(fE, fB, o['mean_bsld']))} |")
        for oe, ob in others.values():
            line += f" {saved(o['energy_kwh'], energy_at(oe, ob, o['mean_bsld']))} |"
        print(line)
    if has_rc:
        print(f"\non the {len(fresh)} fresh re-check seeds (front points and references re-measured):")
        print("| reference | E_R (kWh) | B_R | RL front E at B_R (re-checked) |")
        print("|---|---:|---:|---|")
        for name, (_, o) in refs.items():
            if o is not None:
                print(f"| {name} | {o['energy_kwh']:.1f} | {o['mean_bsld']:.2f} | "
                      f"{saved(o['energy_kwh'], energy_at(rE, rB, o['mean_bsld']))} |")

    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ok = run.search_ok()
        fig, ax = plt.subplots(figsize=(7, 4.4), dpi=90)
        ax.scatter(ok["mean_bsld"], ok["energy_kwh"], s=10, color="0.75", label="RL genomes (search)")
        o = np.argsort(fB)
        ax.step(fB[o], fE[o], where="post", color="crimson")
        ax.scatter(fB, fE, s=30, facecolors="none", edgecolors="crimson", label="RL front")
        if has_rc:
            ax.scatter(rB, rE, s=18, marker="x", color="crimson", alpha=0.6, label="RL front re-checked")
        ax.scatter(B, E, s=16, marker="s", color="tab:blue", alpha=0.6, label="72 classic pairs")
        for oe, ob in others.values():
            oo = np.argsort(ob)
            ax.step(ob[oo], oe[oo], where="post", color="tab:green", label="classic+levers front")
        for (name, (r, _)), m in zip(refs.items(), "*PDv"):
            ax.scatter([r["mean_bsld"]], [r["energy_kwh"]], marker=m, s=120, color="black", zorder=5,
                       label=name.split(":")[0].split(" (")[0])
        ax.set_xscale("log")
        ax.set(xlabel="mean bounded slowdown (log)", ylabel="energy (kWh)",
               title=f"{run.study_name}: RL front vs default RL vs classic pairs")
        ax.legend(fontsize=7)
        save_figure(fig, args.png)


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
