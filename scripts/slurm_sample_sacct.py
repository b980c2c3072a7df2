"""Write the synthetic sacct dump bundled for the slurm quickstart (paretosched/data/slurm/sacct-sample.txt).

Synthetic: seeded random jobs shaped for the sample slurm.conf (636 cores), plus records of every
kind a real dump holds (steps, arrays, a pending array, a heterogeneous job, pending and running
jobs, every time-limit and ReqMem form, every state). Run: python scripts/slurm_sample_sacct.py
"""

from __future__ import annotations

import argparse
import random
from datetime import datetime, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "paretosched" / "data" / "slurm" / "sacct-sample.txt"
HEADER = "JobIDRaw|JobID|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqMem|State|Partition|User"
T0 = datetime(2024, 3, 4, 8, 0, 0)


def fmt_limit(s: int, style: int) -> str:
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    if style == 0 and d == 0 and h == 0:
        return f"{m:02d}:{sec:02d}"
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{sec:02d}"


def fmt_el(s: int) -> str:
    return fmt_limit(s, 1)


def main() -> None:
    rng = random.Random(20240304)
    rows = []
    t = 0.0
    jid = 1000
    users = [f"user{k:02d}" for k in range(1, 13)]
    sizes = [1, 1, 2, 4, 4, 8, 8, 16, 20, 32, 40, 64, 128]
    # running and queued state of a crude FCFS replay keeps the waits plausible
    for i in range(360):
        t += rng.expovariate(1 / 240.0)
        cores = rng.choice(sizes)
        run = int(min(max(rng.lognormvariate(7.3, 1.3), 30), 11 * 3600))
        limit = int(min(run * rng.choice([1.1, 1.5, 2, 3, 5]) + 60, 2 * 86400))
        wait = int(rng.expovariate(1 / (60 + 6 * cores)))
        state = rng.choices(["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED by 1234", "OUT_OF_MEMORY",
                             "NODE_FAIL", "PREEMPTED", "REQUEUED"], [80, 6, 4, 4, 2, 1, 2, 1])[0]
        if state == "TIMEOUT":
            run = limit
        nodes = max(1, -(-cores // 40))
        mem_style = i % 4
        mem = rng.choice([1000, 2000, 4000])
        reqmem = [f"{mem}Mc", f"{mem * min(cores, 40)}Mn", f"{mem * min(cores, 40) // 1000}G", f"{mem}M"][mem_style]
        limit_text = fmt_limit(limit, i % 2) if i % 37 else ("UNLIMITED" if i % 2 else "Partition_Limit")
        submit = T0 + timedelta(seconds=int(t))
        start = submit + timedelta(seconds=wait)
        end = start + timedelta(seconds=run)
        jid += 1
        ident = str(jid)
        user = rng.choice(users)
        rows.append([str(jid), ident, submit, start, end, fmt_el(run), limit_text, cores, nodes, reqmem, state,
                     "batch", user])
        if i % 50 == 7:  # the steps of this job, as sacct prints them without -X
            for step in ("batch", "extern", "0"):
                rows.append([f"{jid}.{step}", f"{jid}.{step}", submit, start, end, fmt_el(run), "", cores, nodes,
                             "", "COMPLETED", "", ""])
    # an array of 6 tasks, and a pending array not yet split
    base = T0 + timedelta(hours=5)
    for k in range(1, 7):
        jid += 1
        s = base + timedelta(seconds=30 * k)
        rows.append([str(jid), f"5000_{k}", base, s, s + timedelta(seconds=600 + 60 * k), fmt_el(600 + 60 * k),
                     "00:30:00", 4, 1, "2G", "COMPLETED", "batch", "user03"])
    rows.append(["5100", "5100_[1-5]", base, "Unknown", "Unknown", "00:00:00", "01:00:00", 8, 1, "4000Mn", "PENDING",
                 "batch", "user04"])
    # a heterogeneous job: two components started together
    het = T0 + timedelta(hours=9)
    for k, (c, m) in enumerate(((40, "3000Mc"), (8, "16000Mn"))):
        jid += 1
        rows.append([str(jid), f"6000+{k}", het, het + timedelta(seconds=120), het + timedelta(seconds=3720),
                     "01:00:00", "1-00:00:00", c, 1, m, "COMPLETED", "batch", "user05"])
    # pending, running, and cancelled before start
    late = T0 + timedelta(hours=30)
    rows.append(["7001", "7001", late, "Unknown", "Unknown", "00:00:00", "02:00:00", 16, 1, "4G", "PENDING", "batch",
                 "user06"])
    rows.append(["7002", "7002", late, late + timedelta(seconds=60), "Unknown", "00:10:00", "04:00:00", 8, 1, "4G",
                 "RUNNING", "batch", "user07"])
    rows.append(["7003", "7003", late, "None", late + timedelta(seconds=300), "00:00:00", "01:00:00", 4, 1, "1G",
                 "CANCELLED by 0", "batch", "user08"])
    rows.sort(key=lambda r: (r[2], r[0]))
    lines = [HEADER]
    for r in rows:
        lines.append("|".join(x.isoformat() if isinstance(x, datetime) else str(x) for x in r))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(rows)} records")


if __name__ == "__main__":
    from paretosched.errors import run_script

    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    raise SystemExit(run_script(main, Path(__file__).name))
