#!/usr/bin/env python3
"""Thesis section 5.2 (primer): first-arrived vs shortest job selection, both on high_gflops.

Runs studies/thesis/5.2-first-high_gflops.yaml and 5.2-shortest-high_gflops.yaml (1,000 jobs,
hdeeprm mode, no backfilling, gaia) and prints the thesis's comparison: mean and max slowdown of
first-arrived over shortest, energy and makespan of both; then the same ratios over several seeds
(the seed draws the hdeeprm actual times and bandwidths). Also prints the window's statistics that
explain the numbers: job sizes, offered load and how long the cluster is full.

    python scripts/validation/thesis_5_2.py
    python scripts/validation/thesis_5_2.py --trace ../shared/workloads/RICC-2010-2.swf.gz
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from thesis_common import REPO, configs, print_ratios, seed_ratios, with_progress

from paretosched.sim.run import simulate

CONFIGS = {"first": REPO / "studies/thesis/5.2-first-high_gflops.yaml",
           "shortest": REPO / "studies/thesis/5.2-shortest-high_gflops.yaml"}
THESIS = {"mean_slowdown_ratio": 33.5, "max_slowdown_ratio": 93.0}


def window_stats(res) -> dict[str, float]:
    """Job sizes and memory of the loaded jobs; time with all cores busy and with a queue."""
    cores = np.array([j["cores"] for j in res.jobs])
    mem = np.array([j["mem_mb_per_core"] * j["cores"] for j in res.jobs])
    tl = res.timeline["timeline"]
    dur = (tl["t_end_s"] - tl["t_start_s"]).to_numpy()
    busy = (tl["cores_p0"] + tl["cores_p1"]).to_numpy()
    total = dur.sum()
    return {"size_median": float(np.median(cores)), "size_p95": float(np.percentile(cores, 95)),
            "size_p99": float(np.percentile(cores, 99)), "size_max": float(cores.max()),
            "mem_job_p95_mb": float(np.percentile(mem, 95)),
            "frac_time_full": float(dur[busy >= 0.99 * busy.max()].sum() / total) if total else 0.0,
            "frac_time_queue": float(dur[tl["queue_len"].to_numpy() > 0].sum() / total) if total else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", help="SWF trace replacing the configs' (path from the current folder)")
    ap.add_argument("--first-job", type=int, help="job lines to skip (default: the configs')")
    ap.add_argument("--n-jobs", type=int, help="job lines to read (default: the configs', 1000)")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 for the ratio spread")
    ap.add_argument("--progress", choices=["lockstep", "independent"],
                    help="model.progress override (default: the configs', i.e. lockstep as Batsim)")
    a = ap.parse_args(argv)
    cfgs = with_progress(configs(CONFIGS, a.trace, a.first_job, a.n_jobs), a.progress)
    wl = cfgs["first"].workload
    res = {name: simulate(cfg, seed=0, record_jobs=True, timeline=True) for name, cfg in cfgs.items()}
    load = res["first"].load
    print(f"platform gaia (2,280 cores); trace {Path(wl.path).name}, job lines {wl.first_job}.."
          f"{wl.first_job + (wl.n_jobs or 0) - 1}, mode {wl.mode}: {load['loaded']} jobs loaded, "
          f"skipped {load['skipped']}; no backfilling; seed 0\n")
    st = window_stats(res["first"])
    st_s = window_stats(res["shortest"])
    print(f"window: cores per job median {st['size_median']:.0f}, p95 {st['size_p95']:.0f}, "
          f"p99 {st['size_p99']:.0f}, max {st['size_max']:.0f}; memory per job p95 {st['mem_job_p95_mb']:.0f} MB")
    print(f"time with every usable core busy: first {100 * st['frac_time_full']:.0f}%, shortest "
          f"{100 * st_s['frac_time_full']:.0f}%; time with a non-empty queue: first "
          f"{100 * st['frac_time_queue']:.0f}%, shortest {100 * st_s['frac_time_queue']:.0f}%\n")

    # the thesis divided by the observed run time (`*_observed`); the default divides by the reference run
    keys = [("energy_kwh", "{:.1f}"), ("makespan_s", "{:.0f}"), ("mean_slowdown", "{:.2f}"),
            ("max_slowdown", "{:.1f}"), ("mean_slowdown_observed", "{:.2f}"), ("max_slowdown_observed", "{:.1f}"),
            ("mean_stretch", "{:.3f}"), ("mean_wait_s", "{:.0f}"), ("mean_turnaround_s", "{:.0f}"),
            ("utilisation", "{:.3f}"), ("utilisation_observed", "{:.3f}")]
    print("| metric | first-high_gflops | shortest-high_gflops | first / shortest | thesis first / shortest |")
    print("|---|---:|---:|---:|---|")
    thesis = {"energy_kwh": "about 1 (\"practically the same\")", "makespan_s": "about 1 (\"practically the same\")",
              "mean_slowdown_observed": "33.5", "max_slowdown_observed": "about 93"}
    for k, fmt in keys:
        f, s = res["first"].metrics[k], res["shortest"].metrics[k]
        ratio = f / s if s else float("nan")
        print(f"| {k} | {fmt.format(f)} | {fmt.format(s)} | {ratio:.3f} | {thesis.get(k, '-')} |")

    if a.seeds > 1:
        rows = seed_ratios(cfgs, "first", "shortest", ("mean_slowdown", "max_slowdown", "mean_slowdown_observed",
                                                        "max_slowdown_observed", "energy_kwh", "makespan_s"),
                           a.seeds)
        print(f"\nratios first / shortest over seeds 0..{a.seeds - 1} (hdeeprm draws): median [min, max]")
        print_ratios(rows)
    return 0


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
