"""The README's headline from a finished run: what the front buys against a baseline, on fresh seeds only.

    python scripts/validation/headline.py runs/gaia-classic --baseline fcfs_easy

Reads `summary.json["recheck"]` (the front points and the baselines re-simulated on the same fresh
seeds) and prints, as markdown: the front (search value and re-check), the baselines on the
re-check seeds, and the front point with the largest energy saving among those whose re-check
dominates the baseline's re-check. Nothing here is recomputed from the search seeds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--baseline", default="fcfs_easy")
    ap.add_argument("--energy", default="energy_kwh")
    ap.add_argument("--slowdown", default="mean_bsld")
    args = ap.parse_args()
    summary = json.loads((Path(args.run) / "summary.json").read_text())
    rc = summary.get("recheck") or {}
    if "front" not in rc or "baselines" not in rc:
        raise SystemExit(f"{args.run}: summary.json has no re-check of the front and baselines")
    e, s = args.energy, args.slowdown
    dominated = ', '.join(rc.get('dominated_baselines', [])) or 'none'
    print(f"re-check seeds: {rc['seeds']}; dominated baselines: {dominated}")
    print(f"\n| eval | {e} (search) | {s} (search) | {e} (re-check) | {s} (re-check) |")
    print("|---:|---:|---:|---:|---:|")
    # the search values come from the re-check block itself ("search"): front.csv may list a
    # different front once a resampled point's mean moved
    for p in rc["front"]:
        sv, rv = p.get("search") or {}, p.get("objectives") or {}
        print(f"| {p['eval_id']} | {_fmt(sv.get(e), 1)} | {_fmt(sv.get(s), 2)} | "
              f"{_fmt(rv.get(e), 1)} | {_fmt(rv.get(s), 2)} |")
    print(f"\n| baseline | {e} (search) | {s} (search) | {e} (re-check) | {s} (re-check) |")
    print("|---|---:|---:|---:|---:|")
    for name, b in rc["baselines"].items():
        sv, rv = b.get("search") or {}, b.get("objectives") or {}
        print(f"| {name} | {_fmt(sv.get(e), 1)} | {_fmt(sv.get(s), 2)} | "
              f"{_fmt(rv.get(e), 1)} | {_fmt(rv.get(s), 2)} |")
    base = rc["baselines"].get(args.baseline)
    if base is None:
        raise SystemExit(f"no baseline named {args.baseline!r} in the re-check")
    if not base.get("objectives"):
        raise SystemExit(f"baseline {args.baseline!r} failed on the re-check seeds: no headline")
    be, bs = base["objectives"][e], base["objectives"][s]
    # a front point whose re-check failed has objectives None: it cannot dominate anything
    checked = [p for p in rc["front"] if p.get("objectives")]
    better = [p for p in checked if p["objectives"][e] <= be and p["objectives"][s] <= bs
              and (p["objectives"][e] < be or p["objectives"][s] < bs)]
    if not better:
        print(f"\nno front point dominates {args.baseline} on the re-check seeds")
        return
    best = min(better, key=lambda p: p["objectives"][e])
    saving = 100 * (1 - best["objectives"][e] / be)
    print(f"\nheadline: eval {best['eval_id']} uses {saving:.1f}% less energy than {args.baseline} "
          f"({best['objectives'][e]:.1f} vs {be:.1f}) at {s} {best['objectives'][s]:.2f} vs {bs:.2f}, "
          f"on re-check seeds {rc['seeds']}; {len(better)} of {len(rc['front'])} front points dominate it")


def _fmt(v: float | None, digits: int) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
