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
    print(f"re-check seeds: {rc['seeds']}; dominated baselines: {', '.join(rc.get('dominated_baselines', [])) or 'none'}")
    print(f"\n| eval | {e} (search) | {s} (search) | {e} (re-check) | {s} (re-check) |")
    print("|---:|---:|---:|---:|---:|")
    search = {row["eval_id"]: row for row in _front_rows(args.run)}
    for p in rc["front"]:
        sv = search.get(p["eval_id"], {})
        print(f"| {p['eval_id']} | {sv.get(e, float('nan')):.1f} | {sv.get(s, float('nan')):.2f} | "
              f"{p['objectives'][e]:.1f} | {p['objectives'][s]:.2f} |")
    print(f"\n| baseline | {e} (re-check) | {s} (re-check) |")
    print("|---|---:|---:|")
    for name, b in rc["baselines"].items():
        print(f"| {name} | {b['objectives'][e]:.1f} | {b['objectives'][s]:.2f} |")
    base = rc["baselines"].get(args.baseline)
    if base is None:
        raise SystemExit(f"no baseline named {args.baseline!r} in the re-check")
    be, bs = base["objectives"][e], base["objectives"][s]
    better = [p for p in rc["front"] if p["objectives"][e] <= be and p["objectives"][s] <= bs
              and (p["objectives"][e] < be or p["objectives"][s] < bs)]
    if not better:
        print(f"\nno front point dominates {args.baseline} on the re-check seeds")
        return
    best = min(better, key=lambda p: p["objectives"][e])
    saving = 100 * (1 - best["objectives"][e] / be)
    print(f"\nheadline: eval {best['eval_id']} uses {saving:.1f}% less energy than {args.baseline} "
          f"({best['objectives'][e]:.1f} vs {be:.1f}) at {s} {best['objectives'][s]:.2f} vs {bs:.2f}, "
          f"on re-check seeds {rc['seeds']}; {len(better)} of {len(rc['front'])} front points dominate it")


def _front_rows(run: str) -> list[dict]:
    """Search values of the front points (front.csv), keyed by eval id."""
    import csv

    with open(Path(run) / "front.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for r in rows:
        row = {"eval_id": int(r["eval_id"])}
        for k, v in r.items():
            try:
                row[k] = float(v)
            except (TypeError, ValueError):
                pass
        row["eval_id"] = int(r["eval_id"])
        out.append(row)
    return out


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
