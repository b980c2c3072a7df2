"""Cost of backfilling next to FCFS on the four windows of issue 14, measured side by side.

    python benchmarks/backfill_cost.py                  # all windows, best of 3 CPU seconds
    python benchmarks/backfill_cost.py --windows lublin --repeat 5

For each window: CPU seconds of one `simulate` (the trace parsed once beforehand, as a study does)
with backfilling none (FCFS), easy and conservative, and the ratios EASY / FCFS and conservative /
FCFS. The three modes run interleaved, repeat after repeat, and the best of each is kept: this
machine is shared and its speed drifts by up to 2x within minutes, so compare within a row.
Job policy `first`, resource policy `high_gflops`, workload mode `trace` (actual run times from the
trace), no interference on the homogeneous platforms (as the peer cross-check).

The `lublin` window is a Lublin-style synthetic workload (Lublin & Feitelson 2003, simplified: a
quarter serial jobs, parallel sizes log-uniform with most rounded to powers of two, log-normal run
times correlated with size, user estimates a run-time multiple, Poisson arrivals at ~90% load),
10,000 jobs on homogeneous-256, generated from --seed into a temporary SWF file. The shared traces
are read from ../shared/workloads; missing ones are skipped.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from snapshot import shared_workloads  # benchmarks/ is on the path when run as a script

MODES = ("none", "easy", "conservative")


def lublin_swf(path: Path, n_jobs: int, procs: int, seed: int) -> None:
    """Write a Lublin-style synthetic SWF trace of `n_jobs` jobs for `procs` processors."""
    rng = np.random.default_rng(seed)
    serial = rng.random(n_jobs) < 0.25
    log_size = rng.uniform(1.0, np.log2(procs), n_jobs)
    size = np.where(rng.random(n_jobs) < 0.75, 2 ** np.round(log_size), np.round(2 ** log_size))
    size = np.where(serial, 1, np.clip(size, 2, procs)).astype(int)
    run = np.exp(rng.normal(6.5 + 0.35 * np.log2(size), 1.6)).clip(1, 36 * 3600).round()
    req = np.minimum((run * rng.choice([1.0, 1.5, 2.0, 3.0, 5.0], n_jobs)).round(), 48 * 3600)
    mean_gap = float((size * run).mean()) / (0.9 * procs)
    submit = np.cumsum(rng.exponential(mean_gap, n_jobs)).round()
    submit -= submit[0]
    with open(path, "w") as fh:
        fh.write(f"; Lublin-style synthetic workload, seed {seed}, {procs} processors\n")
        for i in range(n_jobs):
            fh.write(f"{i + 1} {int(submit[i])} -1 {int(run[i])} {size[i]} -1 -1 {size[i]} {int(req[i])} "
                     "-1 1 1 1 -1 1 -1 -1 -1\n")


def windows(tmp: Path, seed: int) -> dict[str, tuple[str, str, int, bool]]:
    """name -> (platform, trace, jobs, homogeneous)."""
    shared = shared_workloads()
    lublin = tmp / "lublin.swf"
    lublin_swf(lublin, 10_000, 256, seed)
    return {
        "lublin": ("homogeneous-256", str(lublin), 10_000, True),
        "sdsc-1152": ("homogeneous-1152", str(shared / "SDSC-BLUE-2000-4.2-cln.swf.gz"), 20_000, True),
        "hpc2n-240": ("homogeneous-240", str(shared / "HPC2N-2002-2.2-cln.swf.gz"), 20_000, True),
        "sdsc-gaia": ("gaia", str(shared / "SDSC-BLUE-2000-4.2-cln.swf.gz"), 20_000, False),
    }


def config(platform: str, trace: str, n_jobs: int, homogeneous: bool, mode: str):
    from paretosched.config import config_from_dict

    return config_from_dict({
        "platform": platform, "seed": 0,
        "workload": {"path": trace, "mode": "trace", "n_jobs": n_jobs},
        "model": {"interference": "none" if homogeneous else "thesis"},
        "scheduler": {"job_policy": "first", "resource_policy": "high_gflops", "backfilling": mode}})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1, help="seed of the Lublin-style window")
    ap.add_argument("--windows", default="lublin,sdsc-1152,hpc2n-240,sdsc-gaia")
    ap.add_argument("--modes", default=",".join(MODES))
    args = ap.parse_args()

    from paretosched.sim.run import prepare, simulate

    modes = args.modes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        wins = windows(Path(tmp), args.seed)
        print("window | " + " | ".join(f"{m} CPU s" for m in modes) + " | EASY/FCFS | conservative/FCFS")
        for name in args.windows.split(","):
            platform, trace, n, homo = wins[name]
            if not Path(trace).exists():
                print(f"{name}: {trace} missing, skipped")
                continue
            cfgs = {m: config(platform, trace, n, homo, m) for m in modes}
            prep = prepare(cfgs[modes[0]])
            best = {m: float("inf") for m in modes}
            for _ in range(args.repeat):
                for m in modes:  # interleaved: drift hits every mode alike
                    t0 = time.process_time()
                    simulate(cfgs[m], prepared=prep)
                    best[m] = min(best[m], time.process_time() - t0)
            cells = [f"{best[m]:.2f}" for m in modes]
            ratios = [f"{best[m] / best['none']:.2f}" if "none" in best and m in best else "-"
                      for m in ("easy", "conservative")]
            print(f"{name} ({platform}, {n} jobs) | " + " | ".join(cells + ratios), flush=True)


if __name__ == "__main__":
    main()
