"""Kell et al. VI on the twin (c): which genes matter, read from `paretosched analyse RUN`.

    paretosched analyse runs/gaia-rl-quick
    python scripts/paper/drivers_table.py runs/gaia-rl-quick [--top 6]

Prints, per DBSCAN cluster of the front (RUN/analysis/clusters.csv): its size and objective
ranges, then per objective the Lasso's R^2 and its largest coefficients (RUN/analysis/lasso.csv:
objective units per unit of the gene on the paper's 1-100 scale; one-hot choices as `gene=value`),
and the genes whose coefficients are zero in every fit. Then, as Kell et al.'s figures 6-10 do with
violins, how each choice/bool gene's values are spread on the front vs over all search evaluations.
With `--all`, also one Lasso per objective over *every* successful search evaluation (paretosched's
own design matrix and LassoCV; mean_bsld as log10, since it spans orders of magnitude): a reading
that does not depend on a front of a handful of points.
`--analysis DIR` reads RUN/DIR instead (e.g. the output of `analyse --on population --out ...`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from common import run_front

from paretosched.analysis.rundata import load_run


def label(v: object) -> str:
    return "null" if v is None or (isinstance(v, float) and v != v) else str(v)


def short(feature: str) -> str:
    return feature.replace("scheduler.", "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--analysis", default="analysis", help="folder of the analyse output inside RUN")
    ap.add_argument("--all", action="store_true", help="also a Lasso over every search evaluation")
    args = ap.parse_args()
    a = Path(args.run) / args.analysis
    clusters = pd.read_csv(a / "clusters.csv")
    lasso = pd.read_csv(a / "lasso.csv")
    run = load_run(args.run)
    objs = run.objectives
    print(f"{run.study_name}: {len(clusters)} clustered points, clusters "
          + ", ".join(f"{c}: {n}" for c, n in clusters["cluster"].value_counts().sort_index().items()))
    for c, grp in clusters.groupby("cluster"):
        rng = "; ".join(f"{o} {grp[o].min():.3g}-{grp[o].max():.3g}" for o in objs)
        print(f"\ncluster {c} ({len(grp)} points): {rng}")
        for o in objs:
            fit = lasso[(lasso["cluster"] == c) & (lasso["objective"] == o)]
            if fit.empty:
                continue
            note = fit["note"].dropna()
            nz = fit[fit["coef"].fillna(0) != 0].copy()
            nz["abs"] = nz["coef"].abs()
            nz = nz.sort_values("abs", ascending=False).head(args.top)
            r2 = fit["r2_cv"].iloc[0]
            terms = ", ".join(f"{short(f)} {v:+.3g}" for f, v in zip(nz["feature"], nz["coef"]))
            print(f"  {o}: out-of-sample R^2 {r2:.2f}; " + (terms or "no non-zero coefficient")
                  + (f" ({note.iloc[0]})" if len(note) else ""))
    used = set(lasso.loc[lasso["coef"].fillna(0) != 0, "feature"].dropna())
    genes = list(run.genes)
    never = [g for g in genes if not any(f == g or f.startswith(g + "=") for f in used)]
    print("\ngenes with a zero coefficient in every fit: " + (", ".join(short(g) for g in never) or "none"))

    front = run_front(run)
    ok = run.search_ok()
    print("\nvalues of the choice/bool genes: share on the front vs over all search evaluations")
    for g, info in run.genes.items():
        if info.numeric:
            continue
        f = front[g].map(label).value_counts(normalize=True)
        o = ok[g].map(label).value_counts(normalize=True)
        vals = ", ".join(f"{v} {f.get(v, 0):.0%}/{o.get(v, 0):.0%}" for v in o.index)
        print(f"  {short(g)}: {vals}")
    print("numeric genes on the front (median, range) vs all evaluations (median):")
    for g, info in run.genes.items():
        if info.numeric:
            fv, ov = pd.to_numeric(front[g]), pd.to_numeric(ok[g])
            print(f"  {short(g)}: {fv.median():.3g} ({fv.min():.3g}-{fv.max():.3g}) vs {ov.median():.3g}")
    if args.all:
        import numpy as np

        from paretosched.analysis.drivers import design_matrix, fit_lasso

        X = design_matrix(ok, run.genes)
        print(f"\nLasso over all {len(ok)} successful search evaluations (coefficients per unit of the 1-100 scale):")
        for o in objs:
            y = ok[o].to_numpy(float)
            name = o
            if o == "mean_bsld":
                y, name = np.log10(y), "log10(mean_bsld)"
            fit = fit_lasso(X, y)
            coef = sorted(((f, v) for f, v in fit["coef"].items() if v != 0), key=lambda t: -abs(t[1]))
            zero = sorted({f.split("=")[0] for f in X.columns} - {f.split("=")[0] for f, _ in coef})
            print(f"  {name}: out-of-sample R^2 {fit['r2_cv']:.2f} ({fit['method']}); "
                  + ", ".join(f"{short(f)} {v:+.3g}" for f, v in coef[:args.top]))
            print(f"    zero: {', '.join(short(z) for z in zero) or 'none'}")


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
