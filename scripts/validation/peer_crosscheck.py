#!/usr/bin/env python3
"""Peer cross-check (issue 7, part 5): FCFS and EASY on homogeneous-N in paretosched and in AccaSim.

Runs, on the same window of an SWF trace and N single-core nodes:
- paretosched: platform `homogeneous-N`, `model: {interference: none}`, trace mode, job policy
  `first`, resource policy `high_gflops`, backfilling `none` (FCFS) and `easy`;
- AccaSim 1.1.3 (PyPI `accasim`, an independent open-source HPC scheduling simulator), FCFS and
  EASY, through `benchmarks/peer/run_peer.py` in AccaSim's own virtualenv (`--peer-python`);
- two small reference schedulers from `benchmarks/peer/reference.py`: a textbook FCFS/EASY and a
  mimic of AccaSim's EASY (its quirks included).

Prints a side-by-side table (makespan, mean wait, mean slowdown, wall time) and the per-job
agreement: the fraction of jobs whose start time (as wait = start - submit, because paretosched
shifts submit times to the window's first job) is identical (|diff| <= --tol seconds). Writes
per-job CSVs (job_id, submit_s, and each simulator's start) and the list of disagreeing jobs to
--out. Jobs with run time < 0 are skipped by every side (paretosched's loader rule).

    python scripts/validation/peer_crosscheck.py --trace ../shared/workloads/HPC2N-2002-2.2-cln.swf.gz \
        --n-jobs 10000 --procs 240 --out out/peer-hpc2n
"""

from __future__ import annotations

import argparse
import csv
import math
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "peer"))

import reference  # noqa: E402  (benchmarks/peer/reference.py: standalone, standard library only)

from paretosched.config import config_from_dict  # noqa: E402
from paretosched.sim.run import simulate  # noqa: E402

PEER_HELP = ("AccaSim is not installed at {py}. Create its own virtualenv (it needs an older stack and "
             "must not go into paretosched's):\n  python3 -m venv /tmp/peervenv && "
             "/tmp/peervenv/bin/pip install accasim==1.1.3\nthen pass --peer-python /tmp/peervenv/bin/python "
             "(the default), or --no-peer to run paretosched and the references only.")


def run_paretosched(trace: str, first_job: int, n_jobs: int, procs: int, backfilling: str):
    cfg = config_from_dict({
        "platform": f"homogeneous-{procs}",
        "workload": {"path": trace, "mode": "trace", "first_job": first_job, "n_jobs": n_jobs},
        "model": {"interference": "none"},
        "scheduler": {"kind": "classic", "job_policy": "first", "resource_policy": "high_gflops",
                      "backfilling": backfilling},
        "seed": 0,
    })
    t0 = time.perf_counter()
    res = simulate(cfg, record_jobs=True)
    wall = time.perf_counter() - t0
    # {job_id: (submit, start, end)} with submit times relative to the window's first job
    return {r["job_id"]: (r["submit_s"], r["start_s"], r["end_s"]) for r in res.jobs}, wall, res.load


def run_accasim(peer_python: str, trace: str, first_job: int, n_jobs: int, procs: int, out: Path,
                reuse: str | None = None):
    if reuse:  # a saved run_peer.py output (same window and procs)
        return parse_accasim(Path(reuse))
    if not Path(peer_python).exists():
        raise SystemExit(PEER_HELP.format(py=peer_python))
    check = subprocess.run([peer_python, "-c", "import accasim"], capture_output=True, text=True)
    if check.returncode != 0:
        raise SystemExit(PEER_HELP.format(py=peer_python) + "\n(import accasim failed: "
                         + check.stderr.strip().splitlines()[-1] + ")")
    csv_path = out / "accasim_raw.csv"
    cmd = [peer_python, str(REPO / "benchmarks" / "peer" / "run_peer.py"), "--swf", trace,
           "--first-job", str(first_job), "--jobs", str(n_jobs), "--procs", str(procs),
           "--policy", "both", "--nonpos-runtime", "skip-negative"]
    with open(csv_path, "w") as fh:
        p = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"AccaSim run failed (rc={p.returncode}):\n{p.stderr}")
    return parse_accasim(csv_path)


def parse_accasim(csv_path: Path):
    runs: dict[str, dict[int, tuple[float, float, float]]] = {"fcfs": {}, "easy": {}}
    walls: dict[str, float] = {}
    with open(csv_path) as fh:
        for line in fh:
            if line.startswith("#"):
                kv = dict(x.split("=", 1) for x in line[1:].split() if "=" in x)
                if "wall_time_s" in kv:
                    walls[kv["policy"]] = float(kv["wall_time_s"])
                continue
            if line.startswith("policy"):
                continue
            pol, jid, sub, st, en = line.strip().split(",")
            runs[pol][int(jid)] = (float(sub), float(st), float(en))
    return runs, walls


def metrics(run: dict[int, tuple[float, float, float]]) -> dict[str, float]:
    """Makespan (last end - first submit), mean wait, mean slowdown (turnaround / max(run, 1 s))."""
    subs = [s for s, _, _ in run.values()]
    ends = [e for _, _, e in run.values()]
    waits = [st - s for s, st, _ in run.values()]
    sld = [(e - s) / max(e - st, 1.0) for s, st, e in run.values()]
    n = len(run)
    return {"n_jobs": n, "makespan_s": max(ends) - min(subs), "mean_wait_s": sum(waits) / n,
            "mean_slowdown": sum(sld) / n}


def agreement(a: dict, b: dict, tol: float) -> tuple[int, int, list[int]]:
    """(jobs compared, identical waits, ids that differ) over the jobs both ran."""
    common = sorted(set(a) & set(b))
    diff = [j for j in common if abs((a[j][1] - a[j][0]) - (b[j][1] - b[j][0])) > tol]
    return len(common), len(common) - len(diff), diff


def _wait(run: dict, jid: int) -> float:
    return run[jid][1] - run[jid][0]


def attribute(ps: dict, acc: dict, ref: dict, jobs: list, tol: float, out: Path) -> None:
    """Pin each paretosched-vs-AccaSim disagreement on a step of a chain of exact reproductions.

    FCFS: paretosched = textbook FCFS; AccaSim = textbook FCFS + AccaSim's handling of zero-run
    jobs (quirks c, d). EASY: paretosched = textbook (count-based) EASY; step 1 adds AccaSim's
    quirk (b) (backfill whatever fits now; with c, d), step 2 adds quirk (a) (the head's
    reservation time fixed once) = AccaSim. A job is listed under every step that moves its start.
    """
    zero = sorted(jid for _, jid, run, _, _ in jobs if run == 0)
    print(f"\njobs with run time 0 in the window: {len(zero)} ({' '.join(map(str, zero)) or '-'})")
    with open(out / "fcfs_attribution.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["job_id", "wait_s_paretosched", "wait_s_accasim", "paretosched_eq_textbook",
                    "accasim_eq_mimic_zero_run_quirk"])
        diff = [j for j in sorted(ps["fcfs"]) if abs(_wait(ps["fcfs"], j) - _wait(acc["fcfs"], j)) > tol]
        pinned = 0
        for j in diff:
            a_ok = abs(_wait(acc["fcfs"], j) - _wait(ref["mimic_fcfs"], j)) <= tol
            p_ok = abs(_wait(ps["fcfs"], j) - _wait(ref["fcfs"], j)) <= tol
            pinned += a_ok and p_ok
            w.writerow([j, f"{_wait(ps['fcfs'], j):.6g}", f"{_wait(acc['fcfs'], j):.6g}", p_ok, a_ok])
    print(f"FCFS: {len(diff)} jobs differ ({' '.join(map(str, diff)) or '-'}); {pinned} of them are "
          f"reproduced exactly by adding AccaSim's zero-run-job handling to the textbook FCFS")
    chain = [("paretosched", ps["easy"]), ("textbook_count", ref["easy"]),
             ("quirk_b", ref["mimic_b"]), ("quirk_a_accasim_mimic", ref["mimic"]), ("accasim", acc["easy"])]
    steps = [("accasim_quirk_b", 1, 2), ("accasim_quirk_a", 2, 3)]
    diff = [j for j in sorted(ps["easy"]) if abs(_wait(ps["easy"], j) - _wait(acc["easy"], j)) > tol]
    counts = {name: 0 for name, _, _ in steps}
    unexplained = []
    with open(out / "easy_attribution.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["job_id"] + [f"wait_s_{n}" for n, _ in chain] + [n for n, _, _ in steps])
        for j in diff:
            moved = [abs(_wait(chain[x][1], j) - _wait(chain[y][1], j)) > tol for _, x, y in steps]
            ends_ok = (abs(_wait(chain[0][1], j) - _wait(chain[1][1], j)) <= tol
                       and abs(_wait(chain[3][1], j) - _wait(chain[4][1], j)) <= tol)
            if not any(moved) or not ends_ok:
                unexplained.append(j)
            for (name, _, _), m in zip(steps, moved):
                counts[name] += m
            w.writerow([j] + [f"{_wait(r, j):.6g}" for _, r in chain] + [int(m) for m in moved])
    print(f"EASY: {len(diff)} jobs differ; moved by step 1 (AccaSim quirk b): {counts['accasim_quirk_b']}, "
          f"step 2 (AccaSim quirk a): {counts['accasim_quirk_a']}; not pinned: {len(unexplained)}"
          + (f" ({' '.join(map(str, unexplained[:20]))})" if unexplained else ""))
    print(f"per-job attribution: {out / 'fcfs_attribution.csv'}, {out / 'easy_attribution.csv'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default="../shared/workloads/HPC2N-2002-2.2-cln.swf.gz",
                    help="SWF trace (relative paths from the current folder)")
    ap.add_argument("--first-job", type=int, default=0, help="job lines to skip")
    ap.add_argument("--n-jobs", type=int, default=10000, help="job lines to read")
    ap.add_argument("--procs", type=int, default=240, help="N of homogeneous-N (single-core nodes)")
    ap.add_argument("--peer-python", default="/tmp/peervenv/bin/python", help="python of AccaSim's venv")
    ap.add_argument("--no-peer", action="store_true", help="skip AccaSim (paretosched vs references only)")
    ap.add_argument("--peer-csv", help="reuse a saved AccaSim output (OUT/accasim_raw.csv of an earlier run)")
    ap.add_argument("--tol", type=float, default=1e-6, help="start times within this many seconds agree")
    ap.add_argument("--out", default="out/peer", help="folder for per-job CSVs")
    a = ap.parse_args(argv)
    trace = str(Path(a.trace).resolve())
    if not Path(trace).is_file():
        raise SystemExit(f"--trace {a.trace}: no such file")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    ps, ps_wall = {}, {}
    for pol, bf in (("fcfs", "none"), ("easy", "easy")):
        ps[pol], ps_wall[pol], load = run_paretosched(trace, a.first_job, a.n_jobs, a.procs, bf)
    jobs = reference.load(trace, a.first_job, a.n_jobs, negative="skip")
    ref, ref_wall = {}, {}
    variants = (
        ("fcfs", lambda: reference.textbook(jobs, a.procs, False)),
        ("easy", lambda: reference.textbook(jobs, a.procs, True)),
        ("mimic_fcfs", lambda: reference.accasim_fcfs(jobs, a.procs)),
        ("mimic_b", lambda: reference.accasim_easy(jobs, a.procs, reservation_once=False)),
        ("mimic", lambda: reference.accasim_easy(jobs, a.procs)),
    )
    for name, fn in variants:
        t0 = time.perf_counter()
        ref[name] = fn()
        ref_wall[name] = time.perf_counter() - t0
    acc, acc_wall = ({}, {}) if a.no_peer else run_accasim(a.peer_python, trace, a.first_job, a.n_jobs,
                                                           a.procs, out, a.peer_csv)

    print(f"trace {Path(trace).name}, job lines {a.first_job}..{a.first_job + a.n_jobs - 1}, "
          f"homogeneous-{a.procs}; paretosched loaded {load['loaded']} of {load['lines']} "
          f"(skipped {load['skipped']})\n")
    print("| policy | simulator | jobs | makespan_s | mean_wait_s | mean_slowdown | wall_s (simulation) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    rows = [("FCFS", "paretosched", ps["fcfs"], ps_wall["fcfs"]),
            ("FCFS", "AccaSim 1.1.3", acc.get("fcfs"), acc_wall.get("fcfs")),
            ("FCFS", "textbook reference", ref["fcfs"], ref_wall["fcfs"]),
            ("EASY", "paretosched", ps["easy"], ps_wall["easy"]),
            ("EASY", "AccaSim 1.1.3", acc.get("easy"), acc_wall.get("easy")),
            ("EASY", "textbook reference", ref["easy"], ref_wall["easy"]),
            ("EASY", "AccaSim mimic", ref["mimic"], ref_wall["mimic"])]
    for pol, sim, run, wall in rows:
        if not run:
            continue
        m = metrics(run)
        print(f"| {pol} | {sim} | {m['n_jobs']} | {m['makespan_s']:.0f} | {m['mean_wait_s']:.1f} | "
              f"{m['mean_slowdown']:.3f} | {wall:.2f} |")
    if acc_wall:
        print(f"\nwall time AccaSim / paretosched: FCFS {acc_wall['fcfs'] / ps_wall['fcfs']:.1f}x, "
              f"EASY {acc_wall['easy'] / ps_wall['easy']:.1f}x")

    pairs = [("FCFS", "paretosched vs textbook", ps["fcfs"], ref["fcfs"]),
             ("EASY", "paretosched vs textbook", ps["easy"], ref["easy"])]
    if acc:
        pairs = [("FCFS", "paretosched vs AccaSim", ps["fcfs"], acc["fcfs"]), pairs[0],
                 ("FCFS", "AccaSim vs textbook", acc["fcfs"], ref["fcfs"]),
                 ("FCFS", "AccaSim vs AccaSim-FCFS mimic", acc["fcfs"], ref["mimic_fcfs"]),
                 ("EASY", "paretosched vs AccaSim", ps["easy"], acc["easy"]), pairs[1],
                 ("EASY", "AccaSim vs AccaSim mimic", acc["easy"], ref["mimic"])]
    print("\n| policy | comparison | jobs compared | identical starts | agreement | first differing job ids |")
    print("|---|---|---:|---:|---:|---|")
    diffs: dict[str, list[int]] = {}
    for pol, name, x, y in pairs:
        n, same, diff = agreement(x, y, a.tol)
        diffs[f"{pol} {name}"] = diff
        ids = " ".join(str(j) for j in diff[:8]) + (" ..." if len(diff) > 8 else "")
        print(f"| {pol} | {name} | {n} | {same} | {100.0 * same / n:.3f}% | {ids or '-'} |")

    if acc:
        attribute(ps, acc, ref, jobs, a.tol, out)

    # per-job CSVs: waits make the shift of submit times irrelevant
    for pol in ("fcfs", "easy"):
        cols = [("paretosched", ps[pol]), ("textbook", ref[pol])]
        if acc:
            cols.insert(1, ("accasim", acc[pol]))
        if pol == "easy":
            cols.append(("accasim_mimic", ref["mimic"]))
        with open(out / f"jobs_{pol}.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["job_id", "cores", "run_s", "req_s"] + [f"wait_s_{n}" for n, _ in cols])
            meta = {jid: (p, run, req) for _, jid, run, p, req in jobs}
            for jid in sorted(ps[pol]):
                p, run, req = meta.get(jid, (math.nan, math.nan, math.nan))
                w.writerow([jid, p, run, req] + [
                    f"{r[jid][1] - r[jid][0]:.6g}" if jid in r else "" for _, r in cols])
    with open(out / "disagreements.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["comparison", "job_id"])
        for name, ids in diffs.items():
            for j in ids:
                w.writerow([name, j])
    print(f"\nper-job CSVs: {out / 'jobs_fcfs.csv'}, {out / 'jobs_easy.csv'}, {out / 'disagreements.csv'}")
    return 0


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
