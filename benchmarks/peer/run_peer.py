#!/usr/bin/env python3
"""Peer cross-check: run AccaSim (PyPI `accasim`, MIT) FCFS and EASY backfilling
on the first N jobs of an SWF trace on a homogeneous machine of P single-core nodes,
and print per-job (policy, job_id, submit, start, end) CSV to stdout.
Wall time per run goes to stderr (and as '# ...' comment lines at the end of stdout).

Usage (AccaSim in its own venv: python3 -m venv /tmp/peervenv && /tmp/peervenv/bin/pip install accasim==1.1.3):
  /tmp/peervenv/bin/python benchmarks/peer/run_peer.py --swf F.swf(.gz) [--first-job 0] [--jobs 2000]
         [--procs 240] [--policy fcfs|easy|both] [--nonpos-runtime keep|skip-negative|zero|drop] > out.csv
Each policy runs in its own subprocess, because AccaSim keeps global state
(CONSTANT singleton, 'accasim' logger handlers). Standalone: needs only accasim.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time



def make_fragment(swf, n_jobs, out_path, nonpos="keep", first_job=0):
    """Write job lines [first_job, first_job + n_jobs) of the SWF (gz or plain) to out_path.
    AccaSim uses field 4 (run time) verbatim. Run time -1 gives end = start - 1 and the
    simulation clock steps BACK one second (later jobs start 1 s early); run time 0 frees
    its processors only at the NEXT event time (no re-dispatch at the same instant).
    nonpos: 'keep' (as in trace), 'skip-negative' (skip run < 0, as paretosched does),
    'zero' (clamp <0 to 0), 'drop' (skip jobs with run <= 0). Skipped jobs still count towards
    n_jobs, i.e. the fragment = n_jobs trace lines."""
    opener = gzip.open if swf.endswith(".gz") else open
    n = 0
    skipped_lines = 0
    with opener(swf, "rt") as src, open(out_path, "w") as dst:
        for line in src:
            s = line.strip()
            if not s or s.startswith(";"):
                continue
            if skipped_lines < first_job:
                skipped_lines += 1
                continue
            f = s.split()
            if int(float(f[3])) <= 0 and nonpos != "keep" and not (nonpos == "skip-negative" and int(float(f[3])) == 0):
                if nonpos in ("drop", "skip-negative"):
                    n += 1
                    if n >= n_jobs:
                        break
                    continue
                if int(float(f[3])) < 0:
                    f[3] = "0"
                    s = " ".join(f)
            dst.write(s + "\n")  # AccaSim's reader drops the last char of each line
            n += 1
            if n >= n_jobs:
                break
    return n


def run_one(policy, swf_plain, procs, workdir):
    # Imports here so the parent process never touches AccaSim's global state.
    # accasim 1.1.3 does `from collections import Mapping` (removed in Python 3.10):
    # shim it before importing accasim.
    import collections
    import collections.abc
    if not hasattr(collections, "Mapping"):
        collections.Mapping = collections.abc.Mapping
    from accasim.base.simulator_class import Simulator
    from accasim.base.scheduler_class import FirstInFirstOut, EASYBackfilling
    from accasim.base.allocator_class import FirstFit
    from accasim.base.additional_data import AdditionalData
    from accasim.utils.reader_class import DefaultTweaker

    # Homogeneous system: `procs` nodes with 1 core each; 1 SWF processor = 1 core
    # = 1 node (DefaultTweaker sets requested_nodes = #processors, 1 core per node).
    sys_cfg = os.path.join(workdir, "sys_config.json")
    with open(sys_cfg, "w") as f:
        json.dump({"groups": {"g0": {"core": 1}},
                   "resources": {"g0": procs},
                   "equivalence": {"processor": {"core": 1}},
                   "start_time": 0}, f)

    records = []

    class Collector(AdditionalData):
        """Hook called by the EventManager with every batch of completed jobs.
        All hooks are abstract in accasim 1.1.3, so each must be defined."""
        def exec_after_completion(self, removed_jobs):
            for j in removed_jobs:
                records.append((int(j.id), j.queued_time, j.start_time, j.end_time))

        def exec_before_dispatching(self, job_dict, queued_jobs): pass
        def exec_after_dispatching(self, job_dict, to_dispatch, rejected): pass
        def exec_before_submission(self, *a, **k): pass
        def exec_after_submission(self, *a, **k): pass
        def exec_before_completion(self, *a, **k): pass
        def stop(self): pass

    class CoreOnlyTweaker(DefaultTweaker):
        """The SWF parser turns a requested/used memory field != -1 into a per-node 'mem'
        request; our system has cores only, and accasim 1.1.3 crashes (KeyError 'mem')
        when a later job carries 'mem' but the first one did not. Drop memory."""
        def tweak_function(self, d):
            d.pop("mem", None)
            return DefaultTweaker.tweak_function(self, d)

    alloc = FirstFit()
    if policy == "fcfs":
        disp = FirstInFirstOut(alloc)      # strict: allocation stops at first job that does not fit
    elif policy == "easy":
        disp = EASYBackfilling(alloc)
    else:
        raise SystemExit("unknown policy " + policy)

    sim = Simulator(swf_plain, sys_cfg, disp,
                    additional_data=[Collector],
                    tweak_function=CoreOnlyTweaker(0, None, {"processor": {"core": 1}}),
                    RESULTS_FOLDER_PATH=os.path.join(workdir, "results_" + policy),
                    scheduling_output=False, statistics_output=False,
                    pprint_output=False, benchmark_output=False,
                    show_statistics=False, LOG_LEVEL="ERROR")
    t0 = time.perf_counter()
    sim.start_simulation()
    wall = time.perf_counter() - t0
    records.sort()
    return records, wall, sim.loaded_jobs, sim.rejected_jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--swf", required=True, help="SWF trace (.swf or .swf.gz)")
    ap.add_argument("--first-job", type=int, default=0, help="job lines to skip")
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--procs", type=int, default=240)
    ap.add_argument("--policy", default="both", choices=["fcfs", "easy", "both"])
    ap.add_argument("--nonpos-runtime", default="keep", choices=["keep", "skip-negative", "zero", "drop"],
                    help="jobs with SWF run time <= 0: keep as-is, skip run < 0, clamp -1 to 0, or drop run <= 0")
    ap.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_workdir", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a._child:  # child process: run one policy on an already-prepared plain SWF
        recs, wall, loaded, rejected = run_one(a._child, a.swf, a.procs, a._workdir)
        for jid, sub, st, en in recs:
            print(f"{a._child},{jid},{sub},{st},{en}")
        msg = (f"# policy={a._child} jobs_loaded={loaded} jobs_finished={len(recs)} "
               f"rejected={rejected} wall_time_s={wall:.3f}")
        print(msg)
        print(msg, file=sys.stderr)
        return

    workdir = tempfile.mkdtemp(prefix="accasim_peer_", dir="/tmp")
    plain = os.path.join(workdir, f"fragment_{a.jobs}.swf")
    make_fragment(a.swf, a.jobs, plain, nonpos=a.nonpos_runtime, first_job=a.first_job)
    print("policy,job_id,submit,start,end")
    sys.stdout.flush()
    for pol in (["fcfs", "easy"] if a.policy == "both" else [a.policy]):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--_child", pol,
                              "--swf", plain, "--procs", str(a.procs), "--_workdir", workdir],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            raise SystemExit(f"{pol} run failed (rc={out.returncode})")
        sys.stdout.write(out.stdout)
        sys.stderr.write(out.stderr)
        print(f"# policy={pol} process_wall_time_s={time.perf_counter() - t0:.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
