"""Cost of the `slurm` scheduler kind on a contended window, next to FCFS + EASY, measured side by side.

    python benchmarks/slurm_cost.py                      # this tree, best of 3 CPU seconds per case
    python benchmarks/slurm_cost.py --vs ../base         # and an exported copy of another commit, interleaved

Each case is one `simulate` (the trace parsed beforehand, as a study does) in a fresh process with
the tree on PYTHONPATH; the CPU seconds of the simulation alone are reported, the best of
--repeat, the trees alternating case by case so that this machine's drift hits both alike. The
window is the `classic` search-quality problem's (gaia, SDSC-BLUE job lines 10,000-10,999,
hdeeprm mode, seed 1) when ../shared/workloads has the trace, else the bundled SDSC-BLUE fragment's
lines 0-499. The cases are corners of the slurm quickstart's genome: Slurm's defaults; size
priority with a short backfill test list; fair-share and age with a slow backfill thread; power
saving with PowerSave and lowest-power-first nodes. Each case prints a digest of its schedule (job
starts, ends, cores), so `--vs` also shows whether two trees schedule alike.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from snapshot import shared_workloads  # benchmarks/ is on the path when run as a script

HERE = Path(__file__).resolve().parent
CASES = {
    "fcfs+easy (classic)": {"kind": "classic", "job_policy": "first", "resource_policy": "high_gflops", "backfilling": "easy"},
    "slurm defaults": {},
    "size priority, bf_max_job_test 10": {"priority_weight_job_size": 10000, "priority_favor_small": True, "bf_max_job_test": 10},
    "fair-share + age, bf_interval 120": {"priority_weight_fairshare": 10000, "priority_weight_age": 1000,
                                          "node_order": "efficiency_first", "bf_interval_s": 120},
    "power saving, PowerSave": {"suspend_time_s": 600, "suspend_rate": 5, "node_order": "lowest_power_first",
                                "cpu_freq_def": "PowerSave", "bf_max_job_test": 50},
}
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])  # this benchmarks/ folder, for snapshot.digest
from snapshot import digest
from paretosched.config import config_from_dict
from paretosched.sim.run import prepare, simulate
cfg = config_from_dict(json.loads(sys.argv[1]))
prep = prepare(cfg)
t = time.process_time()
res = simulate(cfg, prepared=prep, record_jobs=True)
cpu = time.process_time() - t
print(json.dumps({"cpu": cpu, "digest": digest(res), "mean_bsld": res.metrics["mean_bsld"]}))
"""


def window() -> dict:
    trace = shared_workloads() / "SDSC-BLUE-2000-4.2-cln.swf.gz"
    if trace.exists():
        return {"path": str(trace), "mode": "hdeeprm", "first_job": 10000, "n_jobs": 1000}
    return {"path": "builtin:sdsc-blue-20k.swf.gz", "mode": "hdeeprm", "first_job": 0, "n_jobs": 500}


def config(case: dict, wl: dict) -> dict:
    sched = case if case.get("kind") == "classic" else {"kind": "slurm", "resume_timeout_s": 300, **case}
    return {"platform": "gaia", "seed": 1, "workload": wl, "model": {"interference": "thesis"}, "scheduler": sched}


def run(tree: Path, cfg: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg), str(HERE)], env=env, cwd="/", capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vs", type=Path, help="another tree (an exported copy) to time beside this one")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", help="comma-separated case numbers (0 = fcfs+easy), default all")
    args = ap.parse_args()
    trees = [HERE.parent] + ([args.vs.resolve()] if args.vs else [])
    wl = window()
    names = list(CASES)
    pick = [names[int(i)] for i in args.cases.split(",")] if args.cases else names
    print(f"window: {wl['path']} lines {wl['first_job']}-{wl['first_job'] + wl['n_jobs'] - 1} on gaia; "
          f"CPU s of one simulate, best of {args.repeat}")
    for name in pick:
        best = [float("inf")] * len(trees)
        seen: list[dict] = [{}] * len(trees)
        for _ in range(args.repeat):
            for i, tree in enumerate(trees):
                r = run(tree, config(CASES[name], wl))
                best[i], seen[i] = min(best[i], r["cpu"]), r
        line = f"{name:36s} this {best[0]:7.2f} s  digest {seen[0]['digest']}  mean_bsld {seen[0]['mean_bsld']:.3f}"
        if args.vs:
            same = "same" if seen[0]["digest"] == seen[1]["digest"] else "DIFFERENT"
            line += f" | vs {best[1]:7.2f} s  ({best[1] / best[0]:.1f}x), schedule {same}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
