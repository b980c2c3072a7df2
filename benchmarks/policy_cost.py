"""CPU cost of each resource policy on Gaia (first + EASY), on three windows.

    python benchmarks/policy_cost.py                     # HEAD
    PYTHONPATH=/path/to/other/checkout python benchmarks/policy_cost.py   # another commit, same loop

Prints CPU seconds (best of --repeat) per window and policy. The shared traces are read from
../shared/workloads next to the repository; windows whose trace is missing are skipped.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

POLICIES = ["high_gflops", "random", "high_cores", "high_mem", "high_mem_bw"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from paretosched.config import config_from_dict
    from paretosched.sim.run import prepare, simulate

    shared = Path(__file__).resolve().parents[2] / "shared" / "workloads"
    windows = [("builtin:hpc2n-3k.swf.gz", 0, 3000),
               (str(shared / "HPC2N-2002-2.2-cln.swf.gz"), 0, 10000),
               (str(shared / "SDSC-BLUE-2000-4.2-cln.swf.gz"), 20000, 3000)]
    for trace, first, n in windows:
        if not trace.startswith("builtin:") and not Path(trace).exists():
            print(f"{trace}: missing, skipped")
            continue
        prep, row = None, []
        for policy in POLICIES:
            cfg = config_from_dict({"platform": "gaia", "workload": {"path": trace, "first_job": first, "n_jobs": n},
                                    "scheduler": {"job_policy": "first", "resource_policy": policy,
                                                  "backfilling": "easy"}})
            prep = prep or prepare(cfg)
            best = float("inf")
            for _ in range(args.repeat):
                t0 = time.process_time()
                simulate(cfg, prepared=prep)
                best = min(best, time.process_time() - t0)
            row.append(f"{policy} {best:.3f}")
        print(f"{Path(trace).name} lines {first}-{first + n - 1}: " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
