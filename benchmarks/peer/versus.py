#!/usr/bin/env python3
"""Whole-process cost of paretosched next to the plain-heapq textbook scheduler, same window.

    python benchmarks/peer/versus.py                          # Lublin-style 10,000 jobs, homogeneous-256
    python benchmarks/peer/versus.py --trace T.swf.gz --procs 240 --n-jobs 20000
    python benchmarks/peer/versus.py --cachegrind             # instruction counts instead (slow)
    python benchmarks/peer/versus.py --breakdown              # where ours goes, next to the reference

Runs, as separate processes and interleaved repeat after repeat, `paretosched simulate --json`
(job policy `first`, `high_gflops`, trace mode, no interference) and the standard-library
reference of `reference.py` (`textbook`: count-based FCFS / EASY with a heapq), for FCFS and EASY.
Prints the best CPU seconds (user + system of the child: this machine is shared, wall time drifts)
or, with --cachegrind, instruction counts; the ratio ours / reference; and whether the two give
the same start time to every job (they should: the peer cross-check's claim).

--breakdown splits a whole FCFS process of ours (CPU seconds, best of --repeat, each a separate
process): the bare interpreter, the interpreter importing numpy alone (what a `trace` run no longer
imports: sim/seeds.py), the imports of the simulate path (`paretosched.config` and
`paretosched.sim.run`: pydantic, yaml, simpy), parsing the window (`prepare`), then `simulate` (job
enrichment and the event loop); next to the command's own whole process (`paretosched simulate
--json`, which also skips freeing its last run and the interpreter's teardown) and the
reference's. It shows what the ours / reference target leaves for the event loop.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from backfill_cost import lublin_swf  # noqa: E402  (benchmarks/backfill_cost.py)

REF = """import sys; sys.path.insert(0, {here!r}); import reference
jobs = reference.load({trace!r}, 0, {n})
res = reference.textbook(jobs, {procs}, {easy})
if {dump!r}:
    import json; json.dump({{str(k): v[1] - jobs[0][0] for k, v in res.items()}}, open({dump!r}, 'w'))
"""


def run(cmd: list[str], cachegrind: bool) -> float:
    """CPU seconds (or instructions, with cachegrind) of one child process."""
    if cachegrind:
        out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                              "--cachegrind-out-file=/dev/null", *cmd], capture_output=True, text=True, check=True)
        return float(re.search(r"I\s+refs:\s+([\d,]+)", out.stderr).group(1).replace(",", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


PHASES = """import time, json
t0 = time.process_time()
from paretosched.config import config_from_dict
from paretosched.sim.run import prepare, simulate
t1 = time.process_time()
cfg = config_from_dict(json.load(open({cfg!r})))
prep = prepare(cfg)
t2 = time.process_time()
simulate(cfg, prepared=prep)
t3 = time.process_time()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def breakdown(cfg: Path, ours: list[str], ref: list[str], repeat: int) -> None:
    """Print where a whole FCFS process of ours goes, next to the reference's whole process."""
    best: dict[str, float] = {}

    def keep(name: str, v: float) -> None:
        best[name] = min(best.get(name, float("inf")), v)

    for _ in range(repeat):
        keep("interpreter alone (python -c pass)", run([sys.executable, "-c", "pass"], False))
        keep("interpreter + import numpy", run([sys.executable, "-c", "import numpy"], False))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", PHASES.format(cfg=str(cfg))], check=True,
                             capture_output=True, text=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        imports, parse, sim = json.loads(out)
        whole = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        keep("ours: whole process (this script's child)", whole)
        keep("ours: imports of the simulate path", imports)
        keep("ours: parse the window (prepare)", parse)
        keep("ours: simulate (enrichment + event loop)", sim)
        keep("ours: the command's whole process (simulate --json)", run(ours, False))
        keep("reference: whole process", run(ref, False))
    for name, v in best.items():
        print(f"{name}: {v:.3f} CPU s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", help="SWF trace (default: a Lublin-style synthetic window)")
    ap.add_argument("--procs", type=int, default=256)
    ap.add_argument("--n-jobs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1, help="seed of the synthetic window")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cachegrind", action="store_true", help="count instructions (valgrind) instead of CPU time")
    ap.add_argument("--breakdown", action="store_true", help="where a whole FCFS process of ours goes")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        trace = args.trace
        if trace is None:
            trace = os.path.join(tmp, "lublin.swf")
            lublin_swf(Path(trace), args.n_jobs, args.procs, args.seed)
        cmds = {}
        for mode in ("none", "easy"):
            cfg = Path(tmp) / f"{mode}.yaml"
            cfg.write_text(json.dumps({
                "platform": f"homogeneous-{args.procs}", "seed": 0,
                "workload": {"path": str(Path(trace).resolve()), "mode": "trace", "n_jobs": args.n_jobs},
                "model": {"interference": "none"},
                "scheduler": {"job_policy": "first", "resource_policy": "high_gflops", "backfilling": mode}}))
            ours = [sys.executable, "-m", "paretosched.cli", "simulate", str(cfg), "--json"]
            ref = [sys.executable, "-c", REF.format(here=str(HERE), trace=trace, n=args.n_jobs, procs=args.procs,
                                                  easy=mode == "easy", dump="")]
            cmds[mode] = (ours, ref)
        if args.breakdown:
            breakdown(Path(tmp) / "none.yaml", *cmds["none"], args.repeat)
            return
        best: dict[tuple[str, str], float] = {}
        for _ in range(1 if args.cachegrind else args.repeat):
            for mode, (ours, ref) in cmds.items():  # interleaved: drift hits both sides alike
                for side, cmd in (("ours", ours), ("reference", ref)):
                    v = run(cmd, args.cachegrind)
                    best[mode, side] = min(best.get((mode, side), float("inf")), v)
        unit = "instructions" if args.cachegrind else "CPU s"
        for mode in cmds:
            o, r = best[mode, "ours"], best[mode, "reference"]
            fmt = (lambda v: f"{v / 1e6:,.0f} M") if args.cachegrind else (lambda v: f"{v:.2f}")
            print(f"{'FCFS' if mode == 'none' else 'EASY'}: ours {fmt(o)} | reference {fmt(r)} {unit} | "
                  f"ours / reference {o / r:.2f}", flush=True)
        # the same schedule? (start times relative to the window's first submission)
        for mode in cmds:
            out = Path(tmp) / f"{mode}-jobs"
            subprocess.run([*cmds[mode][0][:-1], "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
            dump = str(Path(tmp) / f"{mode}-ref.json")
            subprocess.run([sys.executable, "-c", REF.format(here=str(HERE), trace=trace, n=args.n_jobs,
                                                             procs=args.procs, easy=mode == "easy", dump=dump)],
                           check=True)
            ref_start = json.load(open(dump))
            import csv
            rows = list(csv.DictReader(open(out / "jobs.csv")))
            same = sum(abs(float(r["start_s"]) - ref_start[r["job_id"]]) < 1e-6 for r in rows if r["job_id"] in ref_start)
            print(f"{'FCFS' if mode == 'none' else 'EASY'}: {same} of {len(rows)} start times equal the reference's")


if __name__ == "__main__":
    main()
