"""Energy levers on `gaia`: energy and bounded slowdown of lever settings vs. all levers off.

    python scripts/levers_table.py [--trace PATH] [--first-job 0] [--jobs 2000] [--mode trace]
    python scripts/levers_table.py --trace builtin:sdsc-blue-20k.swf.gz --jobs 3000   # contended, bundled

Prints the markdown table of docs/levers.md. Scheduler: FCFS + EASY on high_gflops throughout,
so only the levers change. `mean_bsld` charges each job against its reference run time (a lever
that slows jobs pays for it); `mean_bsld_observed` is the thesis's definition (observed run time),
`mean_stretch` the mean observed / reference run time.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "workloads" / "HPC2N-2002-2.2-cln.swf.gz"

SETTINGS: list[tuple[str, dict]] = [
    ("all levers off (thesis model)", {}),
    ("switch-off after 1 h idle", {"power_off_idle_s": 3600}),
    ("switch-off after 10 min idle", {"power_off_idle_s": 600}),
    ("switch-off after 1 min idle", {"power_off_idle_s": 60}),
    ("DVFS f = 0.8", {"freq": 0.8}),
    ("DVFS f = 0.6", {"freq": 0.6}),
    ("bandwidth cap 1.0", {"bw_cap": 1.0}),
    ("switch-off 10 min + DVFS 0.8", {"power_off_idle_s": 600, "freq": 0.8}),
    ("switch-off 10 min + low_power placement", {"power_off_idle_s": 600, "resource_policy": "low_power"}),
    ("switch-off 10 min + DVFS 0.6 + cap 1.0", {"power_off_idle_s": 600, "freq": 0.6, "bw_cap": 1.0}),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=str(DEFAULT_TRACE))
    ap.add_argument("--first-job", type=int, default=0, help="job lines to skip")
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--mode", default="trace", choices=["trace", "hdeeprm"])
    ap.add_argument("--platform", default="gaia")
    args = ap.parse_args()

    from paretosched.config import config_from_dict
    from paretosched.sim.run import prepare, simulate

    base = {"platform": args.platform, "workload": {"path": args.trace, "first_job": args.first_job,
                                                        "n_jobs": args.jobs, "mode": args.mode},
            "scheduler": {"job_policy": "first", "resource_policy": "high_gflops", "backfilling": "easy"}}
    prep = None
    rows = []
    for name, levers in SETTINGS:
        cfg = config_from_dict({**base, "scheduler": {**base["scheduler"], **levers}})
        prep = prep or prepare(cfg)
        m = simulate(cfg, prepared=prep).metrics
        rows.append((name, levers, m))
    e0, b0 = rows[0][2]["energy_kwh"], rows[0][2]["mean_bsld"]
    print(f"platform {args.platform}, job lines {args.first_job}..{args.first_job + args.jobs - 1} of "
          f"{Path(args.trace).name} ({args.mode} mode, {rows[0][2]['n_jobs']:.0f} jobs), FCFS + EASY")
    print()
    print("| setting | scheduler fields | energy_kwh | energy vs off | mean_bsld | mean_bsld_observed | mean_stretch "
          "| mean_wait_s | mean_turnaround_s | makespan_s | n_boots |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, levers, m in rows:
        fields = ", ".join(f"{k}: {v}" for k, v in levers.items()) or "-"
        print(f"| {name} | {fields} | {m['energy_kwh']:.1f} | {100 * (m['energy_kwh'] / e0 - 1):+.1f}% | "
              f"{m['mean_bsld']:.3f} | {m['mean_bsld_observed']:.3f} | {m['mean_stretch']:.3f} | "
              f"{m['mean_wait_s']:.0f} | {m['mean_turnaround_s']:.0f} | {m['makespan_s']:.0f} | {m['n_boots']:.0f} |")
    print()
    print(f"baseline mean_bsld {b0:.3f}")


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
