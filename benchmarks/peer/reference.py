#!/usr/bin/env python3
"""Two small, independent reference schedulers for the peer cross-check (standard library only).

- `textbook(jobs, procs, easy)`: textbook FCFS and EASY backfilling on `procs` identical
  single-core nodes. At each distinct event time: release every job ending then, enqueue every job
  submitted then, start queue heads while they fit; with EASY, compute the head's reservation
  (shadow time and extra processors) from the running jobs' requested end times (clamped to now
  for jobs that overran) and start, in arrival order, every later job that fits now and either
  ends (by its request) by the shadow time or uses only extra processors. Recomputed every pass.
  With reserve='nodes' the reservation is the head's set of nodes instead of a count (see below).
  A job runs at least MIN_RUN_S = 1 s, as in paretosched since twin 10 (SWF's run time 0 is a job
  that ran under a second; `paretosched/sim/readers/workload.py`, MIN_RUN_S), and a job without a request
  is estimated at that run.
- `accasim_easy(jobs, procs)`: AccaSim 1.1.3's EASY as it actually behaves (see README.md):
  (a) the blocked head's reservation time is computed once, and the head is not retried before
  the first event at or after that time, even when processors free up earlier; (b) backfilling
  starts any later job that fits now, whatever the shadow time; (c) a job of run time 0 frees its
  processors only at the next event after its start (`zero_run_next_event`); (d) when no event is
  left but jobs wait, the clock steps by 1 s (a blocked head then starts at its reservation time).

Jobs are tuples (submit, job_id, run_s, procs, req_s) with integer seconds; ties keep file order.
Run as a script: reference.py TRACE.swf[.gz] PROCS [--first-job K] [--n-jobs N] prints CSV
(policy,job_id,submit,start,end) for textbook FCFS, textbook EASY and the AccaSim-EASY mimic.
"""
from __future__ import annotations

import argparse
import gzip
import heapq
import sys

# The shortest run of a job in `textbook` (s): paretosched's MIN_RUN_S (twin 10), repeated here because
# this file imports nothing from paretosched. The AccaSim mimic keeps AccaSim's own 0 s jobs (quirk c).
MIN_RUN_S = 1

def load(path, first_job=0, n_jobs=None, negative="skip"):
    """Job lines [first_job, first_job + n_jobs) of an SWF trace.

    Size: requested procs (field 8), else allocated procs (field 5); requested time (field 9),
    else the run time. negative='skip' drops run time < 0 (as paretosched does); 'zero' clamps it.
    """
    opener = gzip.open if str(path).endswith(".gz") else open
    jobs, seen = [], 0
    with opener(path, "rt") as fh:
        for line in fh:
            f = line.split()
            if not f or f[0].startswith(";"):
                continue
            seen += 1
            if seen <= first_job:
                continue
            if n_jobs is not None and seen > first_job + n_jobs:
                break
            jid, sub, run = int(f[0]), int(float(f[1])), int(float(f[3]))
            procs, req = int(float(f[7])), int(float(f[8]))
            if procs <= 0:
                procs = int(float(f[4]))
            if run < 0:
                if negative == "skip":
                    continue
                run = 0
            if procs <= 0:
                continue
            jobs.append((sub, jid, run, procs, req if req > 0 else run))
    jobs.sort(key=lambda j: j[0])  # stable: file order on ties
    return jobs


def textbook(jobs, procs, easy, reserve="count"):
    """{job_id: (submit, start, end)} under textbook FCFS (easy=False) or EASY (easy=True).

    reserve='count': the head's reservation is a number of processors (the classic EASY of
    Mu'alem and Feitelson: a later job may run past the shadow time if it needs no more than the
    `extra` processors left over at that time). reserve='nodes': the reservation is a set of
    nodes, the head's lowest-numbered nodes among those free at the shadow time (what a scheduler
    that places the head at its reservation does, and what paretosched does on a homogeneous
    platform); a job running past the shadow time may only use free nodes outside that set. Jobs
    always take the lowest-numbered free nodes.
    """
    i = 0
    free = set(range(procs))
    queue, running, res = [], [], {}   # running: heap (end, arrival, jid, nodes, start, req)
    arrival = {j[1]: k for k, j in enumerate(jobs)}   # ties of estimated ends: by arrival

    def start(k, now, avoid=frozenset()):
        s, jid, run, p, req = queue.pop(k)
        run = max(run, MIN_RUN_S)
        nodes = sorted(free - avoid)[:p]
        free.difference_update(nodes)
        res[jid] = (s, now, now + run)
        heapq.heappush(running, (now + run, arrival[jid], jid, nodes, now, max(req, MIN_RUN_S)))

    while i < len(jobs) or queue or running:
        cands = []
        if i < len(jobs):
            cands.append(jobs[i][0])
        if running:
            cands.append(running[0][0])
        now = min(cands)
        while running and running[0][0] == now:
            free.update(heapq.heappop(running)[3])
        while i < len(jobs) and jobs[i][0] == now:
            queue.append(jobs[i])
            i += 1
        while queue and queue[0][3] <= len(free):
            start(0, now)
        if easy and queue:
            need = queue[0][3]
            at_shadow, shadow = set(free), None
            for t, _, nodes in sorted((max(r[4] + r[5], now), r[1], r[3]) for r in running):
                at_shadow.update(nodes)
                if len(at_shadow) >= need:
                    shadow = t
                    break
            extra = len(at_shadow) - need
            reserved = frozenset(sorted(at_shadow)[:need])
            k = 1
            while k < len(queue):
                _, _, _, p, req = queue[k]
                if p <= len(free) and now + max(req, MIN_RUN_S) <= shadow:
                    start(k, now)
                elif reserve == "count" and p <= len(free) and p <= extra:
                    extra -= p
                    start(k, now)
                elif reserve == "nodes" and p <= len(free - reserved):
                    start(k, now, avoid=reserved)
                else:
                    k += 1
    return res


def accasim_easy(jobs, procs, reservation_once=True, zero_run_next_event=True, backfill=True):
    """{job_id: (submit, start, end)} under AccaSim 1.1.3's EASY backfilling, quirks included.

    reservation_once=False drops quirk (a): the head is retried at every event (what remains is
    quirk (b): first-fit in arrival order with the head served first). backfill=False (with
    reservation_once=False) is AccaSim's FCFS: only (c) and (d) remain.
    """
    i, free = 0, procs
    queue, running, res = [], [], {}
    blocked, rtime = False, None

    def start(k, now):
        nonlocal free
        s, jid, run, p, req = queue.pop(k)
        free -= p
        res[jid] = (s, now, now + run)
        heapq.heappush(running, (now + run, jid, p, now, req))

    now = None
    while i < len(jobs) or queue or running:
        cands = []
        if i < len(jobs):
            cands.append(jobs[i][0])
        if running:
            if zero_run_next_event and now is not None:
                # a job that ended at the current instant (run time 0) is noticed at the next event
                cands += [r[0] for r in running if r[0] > now]
            else:
                cands.append(running[0][0])
        if cands:
            now = min(cands)
        else:
            # no time point left (AccaSim then steps its clock by 1 s): release zero-run jobs one
            # second later, or reach the blocked head's reservation time
            now = now + 1 if running else max(now + 1, rtime)
        while running and running[0][0] <= now:
            free += heapq.heappop(running)[2]
        while i < len(jobs) and jobs[i][0] == now:
            queue.append(jobs[i])
            i += 1
        if not queue:
            continue
        if blocked and (rtime <= now or not reservation_once) and queue[0][3] <= free:
            start(0, now)
            blocked, rtime = False, None
        if not blocked:
            while queue and queue[0][3] <= free:
                start(0, now)
            if queue:
                blocked = True
                avail = free
                for t, p in sorted((st + rq, p) for (_, _, p, st, rq) in running):
                    avail += p
                    if avail >= queue[0][3]:
                        rtime = t
                        break
        k = 1
        while backfill and k < len(queue):
            if queue[k][3] <= free:
                start(k, now)
            else:
                k += 1
    return res


def accasim_fcfs(jobs, procs):
    """{job_id: (submit, start, end)} under AccaSim 1.1.3's FCFS (quirks (c) and (d) only)."""
    return accasim_easy(jobs, procs, reservation_once=False, backfill=False)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("procs", type=int)
    ap.add_argument("--first-job", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=None)
    a = ap.parse_args(argv)
    jobs = load(a.trace, a.first_job, a.n_jobs)
    out = sys.stdout
    out.write("policy,job_id,submit,start,end\n")
    for name, r in (("fcfs", textbook(jobs, a.procs, False)), ("easy", textbook(jobs, a.procs, True)),
                    ("easy_node_reservation", textbook(jobs, a.procs, True, reserve="nodes")),
                    ("accasim_easy_mimic", accasim_easy(jobs, a.procs)),
                    ("accasim_fcfs_mimic", accasim_fcfs(jobs, a.procs))):
        for jid in sorted(r):
            out.write(f"{name},{jid},{r[jid][0]},{r[jid][1]},{r[jid][2]}\n")


if __name__ == "__main__":
    main()
