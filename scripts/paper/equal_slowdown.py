"""Energy saved at equal slowdown by a run's front, against each of the run's baselines.

    python scripts/paper/equal_slowdown.py runs/gaia-classic

For a baseline R = (E_R, B_R) (same seeds as the search): E_front(B_R) = min { E_i : i on the front,
B_i <= B_R } (attained by a logged config), saved = E_R - E_front(B_R); the interpolated variant
joins the front's points by straight segments. The definition is the one of rl_vs_classic.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import baselines, energy_at, energy_interp, run_front

from paretosched.analysis.rundata import load_run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    args = ap.parse_args()
    run = load_run(args.run)
    front = run_front(run)
    fE, fB = front["energy_kwh"].to_numpy(float), front["mean_bsld"].to_numpy(float)

    def saved(e_r: float, e: float | None) -> str:
        return "-" if e is None else f"{e:.1f} ({e_r - e:+.1f} kWh, {100 * (e_r - e) / e_r:+.1f}%)"

    print(f"{run.study_name}: front of {len(front)} points, mean_bsld {fB.min():.2f}-{fB.max():.2f}")
    print("| baseline | E_R (kWh) | B_R | front E at B_R (saved) | interpolated (saved) |")
    print("|---|---:|---:|---|---|")
    for name, b in baselines(run).items():
        o = b.get("objectives")
        if not o:
            continue
        e, bs = o["energy_kwh"], o["mean_bsld"]
        print(f"| {name} | {e:.1f} | {bs:.2f} | {saved(e, energy_at(fE, fB, bs))} | "
              f"{saved(e, energy_interp(fE, fB, bs))} |")


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
