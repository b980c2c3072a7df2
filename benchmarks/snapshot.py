"""Bit-identity snapshot of the twin's schedules: a digest of every job's start and end per config.

    python benchmarks/snapshot.py > before.txt     # on one commit
    python benchmarks/snapshot.py > after.txt      # on another; `diff before.txt after.txt` must be empty

36 EASY configurations (6 policy pairs x 3 traces x energy levers off/on, on `gaia`), 12 on
homogeneous platforms (3 pairs x 2 traces x levers), and the same 48 without backfilling (unless
--no-fcfs); --conservative adds the same pairs with
conservative backfilling. Each line: config name, jobs, a SHA-256 of (job id, start, end, cores)
in arrival order with floats as exact hex, and the energy in J (hex). Traces other than the
bundled fragment are read from ../shared/workloads next to the repository; missing ones are
skipped (and said so). Compare start/end digests, not metrics: metric definitions change.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

PAIRS = [("first", "high_gflops"), ("shortest", "high_mem"), ("low_mem", "high_cores"),
         ("smallest", "random"), ("low_mem_bw", "high_mem_bw"), ("random", "low_power")]
LEVERS = {"power_off_idle_s": 600.0, "boot_s": 120.0, "freq": 0.8, "bw_cap": 1.0}


def shared_workloads() -> Path:
    """../shared/workloads next to the repository (a worktree sits one level deeper)."""
    here = Path(__file__).resolve()
    for up in here.parents[1:4]:
        if (up / "shared" / "workloads").is_dir():
            return up / "shared" / "workloads"
    return here.parents[2] / "shared" / "workloads"


def windows() -> list[tuple[str, str, str, int, int]]:
    """(name, platform, trace, first job, jobs): the 3 gaia windows, then homogeneous ones (3 pairs)."""
    shared = shared_workloads()
    return [("hpc2n-3k", "gaia", "builtin:hpc2n-3k.swf.gz", 0, 1500),
            ("HPC2N", "gaia", str(shared / "HPC2N-2002-2.2-cln.swf.gz"), 5000, 1500),
            ("SDSC-BLUE", "gaia", str(shared / "SDSC-BLUE-2000-4.2-cln.swf.gz"), 20000, 1500),
            ("HPC2N-h240", "homogeneous-240", str(shared / "HPC2N-2002-2.2-cln.swf.gz"), 0, 2000),
            ("SDSC-h1152", "homogeneous-1152", str(shared / "SDSC-BLUE-2000-4.2-cln.swf.gz"), 0, 2000)]


def digest(res) -> str:
    h = hashlib.sha256()
    for j in res.jobs:
        h.update(f"{j['job_id']} {float(j['start_s']).hex()} {float(j['end_s']).hex()} {j['core_ids']};".encode())
    return h.hexdigest()[:20]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-fcfs", action="store_true", help="EASY configurations only")
    ap.add_argument("--conservative", action="store_true", help="add conservative backfilling")
    args = ap.parse_args()

    from paretosched.config import config_from_dict
    from paretosched.sim.run import prepare, simulate

    modes = ["easy"] + ([] if args.no_fcfs else ["none"]) + (["conservative"] if args.conservative else [])
    for name, platform, trace, first, n in windows():
        if not trace.startswith("builtin:") and not Path(trace).exists():
            print(f"{name}: trace missing, skipped", flush=True)
            continue
        prep = None
        for mode in modes:
            for jp, rp in PAIRS if platform == "gaia" else PAIRS[:1] + PAIRS[3:4] + PAIRS[5:]:
                for levers in (False, True):
                    sched = {"job_policy": jp, "resource_policy": rp, "backfilling": mode,
                             **(LEVERS if levers else {})}
                    cfg = config_from_dict({"platform": platform, "seed": 3,
                                            "workload": {"path": trace, "first_job": first, "n_jobs": n},
                                            "scheduler": sched})
                    prep = prep or prepare(cfg)
                    res = simulate(cfg, prepared=prep, record_jobs=True)
                    tag = f"{name} {mode} {jp}-{rp} levers={'on' if levers else 'off'}"
                    print(f"{tag}: {len(res.jobs)} jobs {digest(res)} energy {res.metrics['energy_j'].hex()}",
                          flush=True)


if __name__ == "__main__":
    main()
