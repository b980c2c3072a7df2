"""Kell et al. II/VI on the twin (b): NSGA-II over the whole genome vs an 11 x 11 grid over two of its
genes (McGough et al.'s sweep), with the same budget of 121 evaluations, compared by hypervolume
against one reference point.

    python scripts/paper/grid_vs_nsga.py runs/gaia-rl-quick \
        --x scheduler.learning_rate --y scheduler.reward_weight --set scheduler.episodes=3 \
        --png docs/figures/studies/grid-vs-nsga.png

The NSGA-II side is the run directory (its study must spend 121 evaluations). The grid takes the
run's base config (every other gene at the base's value, plus the `--set` overrides), puts 11
values of each axis gene across the study's range (log-spaced for log genes), and is simulated on
the run's seeds (cached under runs/.cache/paper-grid). Hypervolume: one reference point for both,
the worst value of each objective over the union of the two fronts plus 10% of its range
(paretosched's rule applied to the fronts, so that a single diverged genome with a huge slowdown
does not stretch the box); both fronts are also re-measured on the run's re-check seeds and their
hypervolumes recomputed against the same point. Coverage C(A, B) = share of B's front points
weakly dominated by a point of A's front (Zitzler).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import yaml
from common import evaluate, front_mask, recheck_objectives, run_inputs, save_figure, with_values

from paretosched.analysis.rundata import load_run
from paretosched.search.pareto import hypervolume, reference_from


def axis(gene, n: int) -> list:
    if gene.type == "float":
        v = np.geomspace(gene.low, gene.high, n) if gene.log else np.linspace(gene.low, gene.high, n)
        return [float(round(x, 10)) for x in v]
    if gene.type == "int":
        v = np.geomspace(gene.low, gene.high, n) if gene.log else np.linspace(gene.low, gene.high, n)
        return sorted({int(round(x)) for x in v})
    return list(gene.values or [False, True])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--x", required=True)
    ap.add_argument("--y", required=True)
    ap.add_argument("--n", type=int, default=11)
    ap.add_argument("--set", action="append", default=[], help="PATH=VALUE (YAML value) for every grid point")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--png")
    args = ap.parse_args()

    run = load_run(args.run)
    base, seeds, fresh = run_inputs(args.run)
    fixed = {k: yaml.safe_load(v) for k, v in (s.split("=", 1) for s in args.set)}
    xs, ys = axis(run.genes[args.x], args.n), axis(run.genes[args.y], args.n)
    points = [(x, y) for x in xs for y in ys]
    cfgs = [with_values(base, {**fixed, args.x: x, args.y: y}) for x, y in points]
    cache = Path(args.run).resolve().parent / ".cache" / "paper-grid"
    res = evaluate(cfgs, seeds, args.workers, cache)
    okg = [i for i, r in enumerate(res) if r is not None]
    G = np.array([[res[i]["energy_kwh"], res[i]["mean_bsld"]] for i in okg])

    ok = run.search_ok()
    N = ok[["energy_kwh", "mean_bsld"]].to_numpy(float)
    told = run.summary.n_told
    gm, nm = front_mask(G), front_mask(N)
    ref = reference_from(np.vstack([G[gm], N[nm]]))
    hv_g, hv_n = hypervolume(G[gm], ref), hypervolume(N[nm], ref)
    box = float(np.prod(ref - np.vstack([G, N]).min(0)))

    def cover(A: np.ndarray, B: np.ndarray) -> float:
        return float(np.mean([np.any(np.all(A <= b, axis=1)) for b in B]))
    print(f"grid: {len(points)} points ({len(xs)} x {len(ys)}) over {args.x} x {args.y}, fixed {fixed}; "
          f"{len(okg)} ok; seeds {seeds}")
    print(f"NSGA-II: {told} genomes told ({len(ok)} distinct ok evaluations) over {len(run.genes)} genes")
    print(f"reference point (energy_kwh, mean_bsld) = ({ref[0]:.2f}, {ref[1]:.2f})")
    print("| set | evaluations | front size | min energy_kwh | min mean_bsld | hypervolume | HV / box |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, F, m, hv, n in (("11 x 11 grid", G, gm, hv_g, len(points)), ("NSGA-II", N, nm, hv_n, told)):
        print(f"| {name} | {n} | {int(m.sum())} | {F[:, 0].min():.1f} | {F[:, 1].min():.2f} | {hv:.4g} "
              f"| {hv / box:.3f} |")
    print(f"coverage: C(NSGA-II, grid) = {cover(N[nm], G[gm]):.2f}, C(grid, NSGA-II) = {cover(G[gm], N[nm]):.2f}")

    gfront = [cfgs[okg[i]] for i in np.flatnonzero(gm)]
    if fresh:
        gr = evaluate(gfront, fresh, args.workers, cache)
        GR = np.array([[r["energy_kwh"], r["mean_bsld"]] for r in gr if r is not None])
        nids = ok.index[nm]
        nr = [recheck_objectives(run, i) for i in nids]
        NR = np.array([[r["energy_kwh"], r["mean_bsld"]] for r in nr if r is not None])
        print(f"re-measured on the fresh seeds {fresh} (same reference point):")
        print("| set | front points | hypervolume | HV / box |")
        print("|---|---:|---:|---:|")
        for name, F in (("11 x 11 grid front", GR), ("NSGA-II front", NR)):
            hv = hypervolume(F, ref) if len(F) else 0.0
            print(f"| {name} | {len(F)} | {hv:.4g} | {hv / box:.3f} |")
    best = okg[int(np.argmin(G[:, 0]))]
    print(f"grid min-energy point: {args.x}={points[best][0]}, {args.y}={points[best][1]}")

    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.4), dpi=90)
        ax.scatter(G[:, 1], G[:, 0], s=12, color="tab:blue", alpha=0.5, label=f"11 x 11 grid ({len(G)})")
        ax.scatter(N[:, 1], N[:, 0], s=12, color="tab:red", alpha=0.5, label=f"NSGA-II ({len(N)} distinct)")
        for F, m, c in ((G, gm, "tab:blue"), (N, nm, "tab:red")):
            f = F[m][np.argsort(F[m][:, 1])]
            ax.step(f[:, 1], f[:, 0], where="post", color=c, lw=1.5)
        ax.scatter([ref[1]], [ref[0]], marker="x", color="black", s=60, label="HV reference")
        ax.set_xscale("log")
        ax.set_xlim(right=max(ref[1] * 3, float(np.percentile(np.concatenate([G[:, 1], N[:, 1]]), 90))))
        ax.set(xlabel="mean bounded slowdown (log)", ylabel="energy (kWh)",
               title=f"same budget: grid over {args.x.split('.')[-1]} x {args.y.split('.')[-1]} vs NSGA-II")
        ax.legend(fontsize=8)
        save_figure(fig, args.png)


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
