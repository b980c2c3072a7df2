#!/usr/bin/env python3
"""Thesis section 5.3: consolidation (shortest-high_gflops) vs spreading (shortest-high_mem_bw).

Runs studies/thesis/5.3-consolidation.yaml and 5.3-spreading.yaml (first 100 jobs, hdeeprm
mode, gaia) and prints energy, makespan and turnaround of both with the thesis's ratios, plus
what explains them: processors ever used, processor-hours of bandwidth over-use (P1), core-hours
per idle state (P2: idle core of a busy processor, 25% power; P3: idle processor, 5%). Ratios over
several seeds follow. With --plots DIR it writes, per config, the Gantt chart and the over-use
spans as PNG (needs the optional `kaleido`; `paretosched simulate CONFIG --plots DIR` writes the
same charts as one HTML page without it).

    python scripts/validation/thesis_5_3.py --plots docs/figures/thesis-5.3
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from pathlib import Path

from thesis_common import REPO, configs, print_ratios, seed_ratios, with_progress

from paretosched.sim.readers.platform import load_platform
from paretosched.sim.run import prepare, simulate

CONFIGS = {"consolidation": REPO / "studies/thesis/5.3-consolidation.yaml",
           "spreading": REPO / "studies/thesis/5.3-spreading.yaml"}


SLOW_GFLOPS = 12.0  # Gaia's three slowest types (E7-4850 8, L5640 9.04, X5670 11.72 GFLOP/s per core)


def explain(res, platform) -> dict[str, float]:
    tl, spans = res.timeline["timeline"], res.timeline["overuse"]
    dur = (tl["t_end_s"] - tl["t_start_s"]).to_numpy()
    core_of = {}
    for k, p in enumerate(platform.procs):
        for c in range(p.first_core, p.first_core + p.cores):
            core_of[c] = k
    procs_used = set()
    per_job = []
    slowest = []
    for j in res.jobs:
        ps = {core_of[int(c)] for c in str(j["core_ids"]).split()}
        procs_used |= ps
        per_job.append(len(ps))
        slowest.append(min(platform.procs[k].gflops_per_core for k in ps))
    span_h = float((spans["end_s"] - spans["start_s"]).sum() / 3600) if len(spans) else 0.0
    return {"procs_used": len(procs_used), "procs_per_job_mean": statistics.mean(per_job),
            "jobs_slowest_core_below_12": sum(v < SLOW_GFLOPS for v in slowest),
            "slowest_core_gflops_median": statistics.median(slowest),
            "overuse_proc_h": span_h,
            "p1_core_h": float((tl["cores_p1"].to_numpy() * dur).sum() / 3600),
            "p2_core_h": float((tl["cores_p2"].to_numpy() * dur).sum() / 3600),
            "p3_core_h": float((tl["cores_p3"].to_numpy() * dur).sum() / 3600)}


def by_size(res: dict) -> dict[str, tuple[int, float, float]]:
    """Per job-size class: jobs, summed turnaround under consolidation and under spreading (s)."""
    out = {}
    turn = {n: {j["job_id"]: j["end_s"] - j["submit_s"] for j in r.jobs} for n, r in res.items()}
    for label, test in (("1 core", lambda c: c == 1), ("2-8 cores", lambda c: 2 <= c <= 8),
                        ("> 8 cores", lambda c: c > 8)):
        ids = [j["job_id"] for j in res["consolidation"].jobs if test(j["cores"])]
        out[label] = (len(ids), sum(turn["consolidation"][i] for i in ids), sum(turn["spreading"][i] for i in ids))
    return out


def write_pngs(out: Path, platform, name: str, res) -> list[Path]:
    from paretosched.analysis import runplots

    out.mkdir(parents=True, exist_ok=True)
    g, _ = runplots.gantt(platform, res.jobs)
    g.update_layout(title=f"{name}: jobs on cores (Gantt)", margin={"l": 120, "r": 20, "t": 50, "b": 40})
    o = runplots.overuse(res.timeline["overuse"])
    o.update_layout(title=f"{name}: bandwidth over-use spans per processor (P1)",
                    yaxis={"range": [-0.5, len(platform.procs) - 0.5]}, margin={"t": 50, "b": 40})
    paths = [out / f"{name}-gantt.png", out / f"{name}-overuse.png"]
    g.write_image(paths[0], width=900, height=520)
    o.write_image(paths[1], width=900, height=420)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", help="SWF trace replacing the configs' (path from the current folder)")
    ap.add_argument("--first-job", type=int, help="job lines to skip (default: the configs')")
    ap.add_argument("--n-jobs", type=int, help="job lines to read (default: the configs', 100)")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 for the ratio spread")
    ap.add_argument("--plots", metavar="DIR", help="write Gantt and over-use PNGs here (needs kaleido)")
    ap.add_argument("--cap-cores", type=int, metavar="N",
                    help="what-if: every job asks for at most N cores (shows what the direction depends on)")
    ap.add_argument("--progress", choices=["lockstep", "independent"],
                    help="model.progress override (default: the configs', i.e. lockstep as Batsim)")
    a = ap.parse_args(argv)
    cfgs = configs(CONFIGS, a.trace, a.first_job, a.n_jobs)
    cfgs = with_progress(cfgs, a.progress)
    platform = load_platform(cfgs["consolidation"].platform)
    prep = {n: prepare(cfg) for n, cfg in cfgs.items()}
    if a.cap_cores:
        for n, pr in prep.items():
            raw = dataclasses.replace(pr.raw, req_procs=[min(c, a.cap_cores) for c in pr.raw.req_procs],
                                      alloc=[min(c, a.cap_cores) for c in pr.raw.alloc])
            prep[n] = dataclasses.replace(pr, raw=raw)
    res = {n: simulate(cfg, seed=0, record_jobs=True, timeline=True, prepared=prep[n]) for n, cfg in cfgs.items()}
    wl = cfgs["consolidation"].workload
    load = res["consolidation"].load
    print(f"platform gaia ({platform.n_cores} cores, {len(platform.procs)} processors); trace "
          f"{Path(wl.path).name}, job lines {wl.first_job}..{wl.first_job + (wl.n_jobs or 0) - 1}, mode "
          f"{wl.mode}: {load['loaded']} jobs loaded; shortest job first, no backfilling; progress "
          f"{cfgs['consolidation'].model.progress}; seed 0"
          + (f"; what-if: every job capped at {a.cap_cores} cores" if a.cap_cores else "") + "\n")
    thesis = {"energy_kwh": "0.57 (43% less)", "makespan_s": "about 1.2 (20% worse)",
              "mean_turnaround_s": "about 1.2 (20% worse)", "mean_wait_s": "no waits"}
    ex = {n: explain(r, platform) for n, r in res.items()}
    print("| metric | consolidation (high_gflops) | spreading (high_mem_bw) | consolidation / spreading "
          "| thesis consolidation / spreading |")
    print("|---|---:|---:|---:|---|")
    rows = [(k, res["consolidation"].metrics[k], res["spreading"].metrics[k], f)
            for k, f in (("energy_kwh", "{:.1f}"), ("makespan_s", "{:.0f}"), ("mean_turnaround_s", "{:.0f}"),
                         ("mean_wait_s", "{:.0f}"), ("mean_slowdown", "{:.3f}"), ("mean_slowdown_observed", "{:.3f}"),
                         ("mean_stretch", "{:.3f}"), ("utilisation", "{:.4f}"), ("utilisation_observed", "{:.4f}"))]
    rows += [(k, ex["consolidation"][k], ex["spreading"][k], f)
             for k, f in (("procs_used", "{:.0f}"), ("procs_per_job_mean", "{:.2f}"),
                          ("jobs_slowest_core_below_12", "{:.0f}"), ("slowest_core_gflops_median", "{:.2f}"),
                          ("overuse_proc_h", "{:.0f}"),
                          ("p1_core_h", "{:.0f}"), ("p2_core_h", "{:.0f}"), ("p3_core_h", "{:.0f}"))]
    for k, c, s, fmt in rows:
        ratio = f"{c / s:.3f}" if s else "-"
        print(f"| {k} | {fmt.format(c)} | {fmt.format(s)} | {ratio} | {thesis.get(k, '-')} |")

    print("\nturnaround by job size (seed 0)")
    print("| job size | jobs | consolidation / spreading (summed turnaround) |")
    print("|---|---:|---:|")
    for label, (n, c, sp) in by_size(res).items():
        print(f"| {label} | {n} | {c / sp:.3f} |" if sp else f"| {label} | {n} | - |")

    if a.seeds > 1:
        ratios = seed_ratios(cfgs, "consolidation", "spreading", ("energy_kwh", "makespan_s", "mean_turnaround_s"),
                             a.seeds, prep)
        print(f"\nratios consolidation / spreading over seeds 0..{a.seeds - 1}: median [min, max]")
        print_ratios(ratios)
    if a.plots:
        for n, r in res.items():
            for p in write_pngs(Path(a.plots), platform, n, r):
                print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
