"""A small PNG of a run's front: every search evaluation, the front, baselines and the balanced pick.

    python scripts/paper/front_figure.py runs/gaia-classic docs/figures/studies/gaia-classic-front.png

Also prints the front (objectives and genes) as a markdown table, with the re-check columns when
the run has them. Uses matplotlib (installed with pymoo); the package itself does not need it.
"""

from __future__ import annotations

import argparse

import numpy as np
from common import baselines, recheck_objectives, run_front, save_figure

from paretosched.analysis.front import pick_balanced
from paretosched.analysis.rundata import load_run


def short(path: str) -> str:
    return path.split(".")[-1]


def fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.1f}" if abs(v) >= 100 else f"{v:.3g}"
    return "null" if v is None else str(v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("png")
    ap.add_argument("--title", default=None)
    ap.add_argument("--linear", action="store_true", help="linear slowdown axis (default: log)")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = load_run(args.run)
    ex, ey = run.objectives[:2]
    ok = run.search_ok()
    front = run_front(run)
    bal = pick_balanced(run, front)
    fig, ax = plt.subplots(figsize=(7, 4.4), dpi=90)
    sc = ax.scatter(ok[ey], ok[ex], c=ok["generation"], cmap="viridis", s=14, alpha=0.7, label="evaluations")
    fig.colorbar(sc, ax=ax, label="generation")
    f = front.sort_values(ey)
    ax.step(f[ey], f[ex], where="post", color="crimson", lw=1.2)
    ax.scatter(f[ey], f[ex], s=36, facecolors="none", edgecolors="crimson", label=f"front ({len(front)})")
    markers = iter("s^vDPX*")
    for name, b in baselines(run).items():
        o = b.get("objectives")
        if o:
            ax.scatter([o[ey]], [o[ex]], marker=next(markers), s=60, color="black", label=f"baseline {name}")
    r = run.rows[bal.eval_id].objectives
    ax.scatter([r[ey]], [r[ex]], marker="*", s=220, color="gold", edgecolors="black", zorder=5, label="balanced pick")
    if not args.linear:
        ax.set_xscale("log")
    ax.set_xlabel(ey + (" (log)" if not args.linear else ""))
    ax.set_ylabel(ex)
    ax.set_title(args.title or f"{run.study_name}: {len(ok)} evaluations", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    save_figure(fig, args.png)

    genes = list(run.genes)
    re = [f"recheck_{o}" for o in run.objectives]
    print("| eval | " + " | ".join([*run.objectives, *re, *map(short, genes)]) + " |")
    print("|" + "---:|" * (1 + 2 * len(run.objectives)) + "---|" * len(genes))
    for _, row in front.iterrows():
        eid = int(row["eval_id"])
        rc = recheck_objectives(run, eid) or {}
        vals = [fmt(float(row[o])) for o in run.objectives] + [fmt(rc.get(o)) for o in run.objectives]
        g = run.rows[eid].genome
        mark = " (balanced)" if eid == bal.eval_id else ""
        print(f"| {eid}{mark} | " + " | ".join(vals + [fmt(g.get(p)) for p in genes]) + " |")
    for name, b in baselines(run).items():
        o = b.get("objectives") or {}
        print(f"baseline {name}: " + ", ".join(f"{k} {fmt(v)}" for k, v in o.items())
              + f"; dominated by {len(b.get('dominated_by_on_search_seeds') or [])} front points")
    print(f"hypervolume {fmt(run.summary.hv)} vs reference {run.summary.reference_point}; "
          f"{run.summary.n_evaluations} distinct evaluations, stop: {run.summary.stop_reason}, "
          f"elapsed {fmt(run.summary.elapsed_s)} s")


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
