"""Run a workload on a real, private Slurm cluster on this host and record what Slurm did.

One controller and N `slurmd -N nXX` daemons (SlurmdParameters=config_overrides, each node its own
port) under a private state directory, with their own munged: two clusters with different
--port values run side by side. Jobs are `sbatch --wrap "sleep N"`, submitted in real time. The
record directory gets the slurm.conf, the workload, per-job results (JSON and CSV), the
slurmctld log (gzip: it holds the DebugFlags=Backfill lines) and the machine load.

Only the daemons this script started are stopped (by pid). See README.md for the recipe.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGES = ["slurmctld", "slurmd", "munge", "slurm-client"]


def ensure_installed() -> None:
    """Debian's Slurm (not slurm-wlm-emulator: its front-end build does not start)."""
    if all(shutil.which(b) for b in ("slurmctld", "slurmd", "munged", "sbatch", "scontrol")):
        return
    if os.geteuid() != 0:
        sys.exit("harness: slurmctld/slurmd/munged missing; run as root to apt-get install " + " ".join(PACKAGES))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *PACKAGES], check=True, env=env)


# ---------------------------------------------------------------- workload

def generate_workload(seed: int, n_jobs: int, span_s: float, max_nodes: int, cpus_per_node: int,
                      mode: str) -> list[dict[str, Any]]:
    """Jobs submitted over span_s seconds (Poisson arrivals), limits 1-10 min favouring short
    ones, run 20-95% of the limit, sizes favouring small jobs. mode 'nodes': -N n (1..max_nodes);
    mode 'cpus': -n c (1..max_nodes*cpus_per_node, at most 128)."""
    rng = random.Random(seed)
    limits = list(range(1, 11))
    lim_w = [1.0 / k ** 2 for k in limits]
    jobs = []
    t = 0.0
    for i in range(n_jobs):
        limit = rng.choices(limits, lim_w)[0]
        job: dict[str, Any] = {"id": i + 1, "submit_s": round(t, 1), "limit_min": limit}
        if mode == "nodes":
            sizes = [1] * 8 + [2] * 4 + [3, 4, 4, 6, 8, max_nodes]
            job["nodes"] = min(rng.choice(sizes), max_nodes)
            # wide jobs are short, or the queue takes an hour to drain
            job["limit_min"] = min(limit, 10 if job["nodes"] <= 2 else 4 if job["nodes"] <= 4 else 2)
        else:
            top = min(128, max_nodes * cpus_per_node)
            sizes = [1] * 5 + [2] * 3 + [4, 4, 8, 8, 12, 16, 24, 32, 48, 64, 96, top]
            job["cpus"] = min(rng.choice(sizes), top)
            job["limit_min"] = min(limit, 10 if job["cpus"] <= 16 else 4 if job["cpus"] <= 32 else 2)
        frac = rng.uniform(0.20, 0.95)
        job["run_s"] = max(5, round(job["limit_min"] * 60 * frac))
        jobs.append(job)
        t += rng.expovariate(n_jobs / span_s)
    return jobs


def swf_window(path: Path, skip: int, n_jobs: int, max_nodes: int, cpus_per_node: int,
               time_scale: float) -> list[dict[str, Any]]:
    """A window of an SWF trace as a workload (the job lines after the first `skip`, as a config's
    first_job): sizes in nodes (ceil(procs / cpus_per_node), capped at max_nodes), submit gaps, run
    and requested times divided by time_scale (limits rounded up to minutes, 1-10)."""
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    seen = 0
    with opener(path, "rt") as fh:
        for line in fh:
            f = line.split()
            if not f or f[0].startswith(";") or len(f) < 9:
                continue
            seen += 1
            if seen <= skip:
                continue
            procs = int(f[7]) if int(f[7]) > 0 else int(f[4])
            run, req = float(f[3]), float(f[8]) if float(f[8]) > 0 else float(f[3])
            if procs <= 0 or run <= 0:
                continue
            rows.append((float(f[1]), run, req, procs))
            if len(rows) == n_jobs:
                break
    if not rows:
        sys.exit(f"harness: {path}: no job after the first {skip} job lines")
    t0 = rows[0][0]
    jobs = []
    for i, (sub, run, req, procs) in enumerate(rows):
        limit = max(1, min(10, -(-int(req / time_scale) // 60)))
        jobs.append({"id": i + 1, "submit_s": round((sub - t0) / time_scale, 1), "limit_min": limit,
                     "run_s": max(5, min(round(run / time_scale), limit * 60 - 5)),
                     "nodes": max(1, min(max_nodes, -(-procs // cpus_per_node)))})
    return jobs


# ---------------------------------------------------------------- slurm.conf

def partitions_lines(parts: str | None, n_nodes: int) -> list[str]:
    """'--partitions name:first-last:tier,...' (1-based node ranges) or one partition 'batch'."""
    if not parts:
        return ["PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP"]
    out = []
    for k, item in enumerate(parts.split(",")):
        name, rng, tier = item.split(":")
        a, b = (int(x) for x in rng.split("-"))
        out.append(f"PartitionName={name} Nodes=n[{a:02d}-{b:02d}] PriorityTier={tier} "
                   f"{'Default=YES ' if k == 0 else ''}MaxTime=INFINITE State=UP")
    return out


def write_conf(a: argparse.Namespace, state: Path) -> str:
    host = socket.gethostname()
    select = {"linear": ["SelectType=select/linear"],
              "cons_tres": ["SelectType=select/cons_tres", "SelectTypeParameters=CR_Core"]}[a.select]
    lines = [
        f"ClusterName={a.name.replace('-', '_').replace('.', '_')[:30].lower()}",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={a.port}",
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={state}/munge/munge.socket",
        f"StateSaveLocation={state}/ctld", f"SlurmdSpoolDir={state}/spool/%n",
        f"SlurmctldPidFile={state}/slurmctld.pid", f"SlurmdPidFile={state}/slurmd.%n.pid",
        f"SlurmctldLogFile={state}/slurmctld.log", f"SlurmdLogFile={state}/slurmd.%n.log",
        "SlurmctldDebug=info", "SlurmdDebug=info", "DebugFlags=Backfill",
        "SlurmdParameters=config_overrides",
        "ProctrackType=proctrack/pgid", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
        "MpiDefault=none", "SwitchType=switch/none", "LaunchType=launch/slurm",
        "ReturnToService=2", "SlurmdTimeout=600", "SlurmctldTimeout=120", "InactiveLimit=0",
        "KillWait=5", "MinJobAge=86400", "MaxJobCount=100000", "Waittime=0",
        "SchedulerType=sched/backfill",
        *select,
        "PriorityType=priority/multifactor",
        f"PriorityWeightJobSize={a.weight_job_size}", f"PriorityFavorSmall={'YES' if a.favor_small else 'NO'}",
        *a.extra,
    ]
    if a.sched_params:
        lines.append(f"SchedulerParameters={a.sched_params}")
    for i in range(1, a.nodes + 1):
        lines.append(f"NodeName=n{i:02d} NodeAddr=127.0.0.1 NodeHostname=localhost Port={a.port + i} "
                     f"CPUs={a.cpus} RealMemory=1000 State=UNKNOWN")
    lines += partitions_lines(a.partitions, a.nodes)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- daemons

class Cluster:
    def __init__(self, state: Path, conf: Path, nodes: int) -> None:
        self.state, self.conf, self.nodes = state, conf, nodes
        self.procs: list[subprocess.Popen] = []
        self.munged_pid: int | None = None
        self.env = dict(os.environ, SLURM_CONF=str(conf))

    def start(self) -> None:
        md = self.state / "munge"
        md.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = md / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        subprocess.run(["munged", "--force", f"--socket={md}/munge.socket", f"--key-file={key}",
                        f"--pid-file={md}/munged.pid", f"--log-file={md}/munged.log",
                        f"--seed-file={md}/munged.seed"], check=True)
        self.munged_pid = int((md / "munged.pid").read_text().split()[0])
        for d in ("ctld", "spool"):
            (self.state / d).mkdir(exist_ok=True)
        for i in range(1, self.nodes + 1):
            (self.state / "spool" / f"n{i:02d}").mkdir(exist_ok=True)
        log = open(self.state / "daemons.out", "ab")
        self.procs.append(subprocess.Popen(["slurmctld", "-D", "-c", "-i", "-f", str(self.conf)],
                                           env=self.env, stdout=log, stderr=log))
        time.sleep(2)
        for i in range(1, self.nodes + 1):
            self.procs.append(subprocess.Popen(["slurmd", "-D", "-N", f"n{i:02d}", "-f", str(self.conf)],
                                               env=self.env, stdout=log, stderr=log))
        for _ in range(120):
            out = self.cmd(["sinfo", "-h", "-N", "-o", "%N %t"], check=False)
            idle = [ln for ln in out.splitlines() if ln.split()[1:] and ln.split()[1].startswith("idle")]
            if len(set(idle)) >= self.nodes:
                return
            time.sleep(1)
        raise RuntimeError(f"nodes not idle after 120 s:\n{out}")

    def cmd(self, argv: list[str], check: bool = True) -> str:
        r = subprocess.run(argv, env=self.env, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")
        return r.stdout

    def stop(self) -> None:
        """Stop only what this run started, by pid. Jobs still queued or running (an interrupted
        run) are cancelled first: their slurmstepd would outlive slurmd."""
        if self.procs and self.procs[0].poll() is None and self.cmd(["squeue", "-h", "-o", "%i"], check=False).split():
            self.cmd(["scancel", "--full", "-u", str(os.getuid())], check=False)
            for _ in range(30):
                time.sleep(1)
                if not self.cmd(["squeue", "-h", "-o", "%i"], check=False).split():
                    break
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.munged_pid:
            try:
                os.kill(self.munged_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


# ---------------------------------------------------------------- run and collect

def parse_show(text: str) -> list[dict[str, str]]:
    """`scontrol show job -o -d` lines as dicts (values up to the next ' Key=')."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        rec: dict[str, str] = {}
        for tok in line.split(" "):
            if "=" in tok and tok.split("=", 1)[0].replace("_", "").replace(":", "").isalnum():
                k, v = tok.split("=", 1)
                if k in rec:  # detail lines repeat Nodes=/CPU_IDs= per node group
                    rec[k] += ";" + v
                else:
                    rec[k] = v
            elif rec:
                last = list(rec)[-1]
                rec[last] += " " + tok
        out.append(rec)
    return out


def submit_all(cl: Cluster, jobs: list[dict[str, Any]], mode: str, t0: float) -> None:
    for job in jobs:
        delay = t0 + job["submit_s"] - time.time()
        if delay > 0:
            time.sleep(delay)
        size = ["-N", str(job["nodes"])] if mode == "nodes" else ["-n", str(job["cpus"])]
        part = ["-p", job["partition"]] if job.get("partition") else []
        out = cl.cmd(["sbatch", "--parsable", "-J", f"w{job['id']}", "-t", str(job["limit_min"]), *size, *part,
                      "-o", "/dev/null", "-e", "/dev/null", "--wrap", f"sleep {job['run_s']}"])
        job["slurm_id"] = int(out.strip().split(";")[0])
        job["submitted_at"] = round(time.time() - t0, 2)


def how_started(log: str) -> dict[int, str]:
    """JobId -> 'backfill' or 'main' from slurmctld's log lines."""
    res: dict[int, str] = {}
    for line in log.splitlines():
        if "Started JobId=" in line and "backfill" in line:
            jid = int(line.split("Started JobId=")[1].split()[0])
            res[jid] = "backfill"
        elif "sched: Allocate JobId=" in line:
            jid = int(line.split("Allocate JobId=")[1].split()[0])
            res.setdefault(jid, "main")
    return res


def collect(cl: Cluster, jobs: list[dict[str, Any]], t0_epoch: int) -> list[dict[str, Any]]:
    recs = {int(r["JobId"]): r for r in parse_show(cl.cmd(["scontrol", "show", "job", "-o", "-d"]))}
    log = (cl.state / "slurmctld.log").read_text(errors="replace")
    started = how_started(log)
    out = []
    for job in jobs:
        r = recs[job["slurm_id"]]
        ts = {k: _epoch(r[k]) - t0_epoch for k in ("SubmitTime", "StartTime", "EndTime")}
        out.append({"id": job["id"], "slurm_id": job["slurm_id"], "submit": ts["SubmitTime"],
                    "start": ts["StartTime"], "end": ts["EndTime"], "state": r.get("JobState"),
                    "nodes": int(r["NumNodes"].split("-")[0]), "cpus": int(r["NumCPUs"]),
                    "nodelist": r.get("NodeList"), "cpu_ids": _cpu_detail(r),
                    "partition": r.get("Partition"), "priority": int(r.get("Priority", 0)),
                    "limit_min": job["limit_min"], "run_s": job["run_s"],
                    "started_by": (r.get("Scheduler") or started.get(job["slurm_id"], "unknown")).lower()})
    return out


def _cpu_detail(r: dict[str, str]) -> str:
    """'n01:0-7 n[02-03]:0-3' from the -d detail lines (Nodes= and CPU_IDs= repeated per group)."""
    nodes = r.get("Nodes", "").split(";")
    ids = r.get("CPU_IDs", "").split(";")
    return " ".join(f"{n}:{c}" for n, c in zip(nodes, ids))


def _epoch(s: str) -> int:
    return int(time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%S")))


def run(a: argparse.Namespace) -> None:
    ensure_installed()
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    state = Path(a.state or f"/tmp/slurm_real_{a.name}_{os.getpid()}")
    if state.exists():
        shutil.rmtree(state)
    state.mkdir(parents=True)
    conf_text = write_conf(a, state)
    conf = state / "slurm.conf"
    conf.write_text(conf_text)
    mode = "cpus" if a.select == "cons_tres" else "nodes"
    if a.swf:
        jobs = swf_window(Path(a.swf), a.swf_skip, a.jobs, a.nodes, a.cpus, a.swf_scale)
    else:
        jobs = generate_workload(a.seed, a.jobs, a.span, a.nodes, a.cpus, mode)
    if a.partitions:
        names = [p.split(":")[0] for p in a.partitions.split(",")]
        rng = random.Random(a.seed + 1000)
        for job in jobs:
            job["partition"] = rng.choice(names)
            lo, hi = (int(x) for x in [p for p in a.partitions.split(",") if p.startswith(job["partition"] + ":")][0]
                      .split(":")[1].split("-"))
            if mode == "nodes":
                job["nodes"] = min(job["nodes"], hi - lo + 1)
    cl = Cluster(state, conf, a.nodes)
    # a SIGTERM (timeout, kill PID) unwinds through `finally` too, so the daemons never outlive the run
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("harness: terminated; stopping the daemons it started"))
    load_before = os.getloadavg()
    try:
        cl.start()
        t0_epoch = int(time.time()) + 1
        while time.time() < t0_epoch:
            time.sleep(0.01)
        print(f"{a.name}: submitting {len(jobs)} jobs over {jobs[-1]['submit_s']:.0f} s", flush=True)
        submit_all(cl, jobs, mode, float(t0_epoch))
        loads = [os.getloadavg()]
        deadline = time.time() + a.max_wait
        while time.time() < deadline:
            q = cl.cmd(["squeue", "-h", "-o", "%i"], check=False).split()
            if not q:
                break
            loads.append(os.getloadavg())
            time.sleep(10)
        results = collect(cl, jobs, t0_epoch)
    finally:
        cl.stop()
    (out / "slurm.conf").write_text(conf_text.replace(str(state), "/STATE"))
    (out / "workload.json").write_text(json.dumps({"seed": a.seed, "mode": mode, "jobs": jobs}, indent=0) + "\n")
    (out / "results.json").write_text(json.dumps(results, indent=0) + "\n")
    with open(out / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    with open(state / "slurmctld.log", "rb") as src, gzip.open(out / "slurmctld.log.gz", "wb", 9) as dst:
        dst.write(src.read())
    meta = {"name": a.name, "argv": sys.argv[1:], "t0_epoch": t0_epoch,
            "t0_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0_epoch)),
            "slurm": cl.cmd(["scontrol", "--version"], check=False).strip() or "see slurm.conf",
            "uptime_before": load_before, "load_max": max(ld[0] for ld in loads),
            "load_mean": sum(ld[0] for ld in loads) / len(loads), "nproc": os.cpu_count()}
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{a.name}: {len(results)} jobs recorded in {out}", flush=True)
    if not a.keep_state:
        shutil.rmtree(state, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--name", required=True)
    p.add_argument("--out", required=True, help="record directory")
    p.add_argument("--state", help="private state dir (default /tmp/slurm_real_NAME_PID)")
    p.add_argument("--port", type=int, required=True, help="SlurmctldPort; node i listens on port+i")
    p.add_argument("--nodes", type=int, default=16)
    p.add_argument("--cpus", type=int, default=8, help="CPUs per node")
    p.add_argument("--select", choices=["linear", "cons_tres"], default="linear")
    p.add_argument("--favor-small", action="store_true")
    p.add_argument("--weight-job-size", type=int, default=1000)
    p.add_argument("--sched-params", default="", help="SchedulerParameters value")
    p.add_argument("--partitions", help="name:first-last:tier,... (1-based node ranges)")
    p.add_argument("--extra", action="append", default=[], help="another slurm.conf line")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=90)
    p.add_argument("--span", type=float, default=450, help="submission window (s)")
    p.add_argument("--swf", help="take the workload from this SWF trace instead")
    p.add_argument("--swf-skip", type=int, default=0, help="job lines of the trace to skip")
    p.add_argument("--swf-scale", type=float, default=1.0, help="divide the trace's times by this")
    p.add_argument("--max-wait", type=float, default=3600, help="give up waiting for the queue after (s)")
    p.add_argument("--keep-state", action="store_true")
    p.add_argument("--dry", action="store_true", help="print slurm.conf and the workload; run nothing")
    a = p.parse_args(argv)
    if a.dry:
        mode = "cpus" if a.select == "cons_tres" else "nodes"
        print(write_conf(a, Path("/STATE")))
        jobs = generate_workload(a.seed, a.jobs, a.span, a.nodes, a.cpus, mode)
        work = sum(j["run_s"] * (j.get("nodes") or j["cpus"] / a.cpus) for j in jobs)
        print(f"{len(jobs)} jobs, node-seconds {work:.0f}, offered load over the span "
              f"{work / (a.nodes * a.span):.2f}, drain lower bound {work / a.nodes:.0f} s")
        return
    run(a)


if __name__ == "__main__":
    main()
