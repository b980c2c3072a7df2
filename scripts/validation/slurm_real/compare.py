"""Feed a real-Slurm record (harness.py) to the twin and say how far its starts are from Slurm's.

The twin gets the same jobs through the project's own import paths: the recorded slurm.conf
through `platform import` (platform and `--scheduler` section: scheduler_from_conf), the jobs as
an sacct -P dump through `trace import --slurm-conf` (read_sacct), and `interference: none`, so every job runs
exactly as long as it ran under Slurm (the nodes are all one processor type). Printed per record:
the share of jobs the twin starts within 5 s / 30 s / one bf_interval of Slurm, Kendall's tau of
the start order, mean wait twin / real, mean waits by job size, and the first job that parts by
more than 30 s.

    python scripts/validation/slurm_real/compare.py tests/data/slurm_real/*
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# 8-core nodes (CPUs=8 in the harness's slurm.conf); any 8-core library model gives equal run times
CPU_MODEL = "xeon_e5_4640"


@dataclass
class Agreement:
    name: str
    jobs: int
    within_5s: float
    within_30s: float
    within_bf: float
    bf_interval_s: int
    kendall_tau: float
    mean_wait_twin_s: float
    mean_wait_real_s: float
    waits_by_size: dict[str, tuple[float, float, int]] = field(default_factory=dict)  # size -> twin, real, n
    first_divergence: str = ""
    backfill_first_s: float | None = None  # Slurm's first backfill cycle (s from the record's t0)
    backfill_gap_s: float | None = None    # median time between Slurm's backfill cycles
    other: str = "twin"                    # what was compared with the record (compare_real: a record)
    notes: list[str] = field(default_factory=list)

    @property
    def wait_ratio(self) -> float:
        return self.mean_wait_twin_s / self.mean_wait_real_s if self.mean_wait_real_s else float("nan")


def load_record(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    p = Path(path)
    meta = json.loads((p / "meta.json").read_text())
    results = json.loads((p / "results.json").read_text())
    return meta, results


def sacct_dump(results: list[dict[str, Any]], t0_epoch: int, workload: dict[str, Any]) -> str:
    """The record as `sacct -a -X -P` would print it (what `trace import` reads). NCPUS/NNodes are
    what the job held (8 CPUs a node under select/linear), ReqCPUS/ReqNodes what it asked for
    (`-N n`: n CPUs on n nodes; `-n c`: c CPUs, one node at least), as sacct reports them: Slurm's
    job-size priority factor is computed from the request."""
    def ts(off: float) -> str:
        return datetime.fromtimestamp(t0_epoch + off, UTC).strftime("%Y-%m-%dT%H:%M:%S")

    asked = {j["slurm_id"]: j for j in workload["jobs"]}
    lines = ["JobIDRaw|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqCPUS|ReqNodes|ReqMem|State|Partition|User"]
    for r in sorted(results, key=lambda r: r["slurm_id"]):
        el = r["end"] - r["start"]
        job = asked[r["slurm_id"]]
        req_cpus, req_nodes = (job["nodes"], job["nodes"]) if "nodes" in job else (job["cpus"], 1)
        lines.append(f"{r['slurm_id']}|{ts(r['submit'])}|{ts(r['start'])}|{ts(r['end'])}|"
                     f"{el // 3600:02d}:{el % 3600 // 60:02d}:{el % 60:02d}|{r['limit_min']}|{r['cpus']}|"
                     f"{r['nodes']}|{req_cpus}|{req_nodes}|0|COMPLETED|{r['partition']}|root")
    return "\n".join(lines) + "\n"


def twin_inputs(record: str | Path, tmp: Path) -> tuple[dict[str, Any], list[str]]:
    """The config dict the twin runs (platform and scheduler from slurm.conf, workload from the dump)."""
    from paretosched.sim.readers.slurm.conf import CpuMap, load_library, read_slurm_conf
    from paretosched.sim.readers.slurm.platform_import import platform_from_conf
    from paretosched.sim.readers.slurm.sacct import read_sacct, write_swf
    from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf

    meta, results = load_record(record)
    conf = read_slurm_conf([str(Path(record) / "slurm.conf")])
    cmap = CpuMap(load_library(), {}, [(re.compile(r"n\d+"), CPU_MODEL)], None, "<compare.py>")
    platform, report = platform_from_conf(conf, cmap, meta["name"])
    notes = list(report.notes)
    sched = scheduler_from_conf(conf, platform, report.weights, notes)
    # when slurmctld's clocks tick is an input a trace cannot hold (the wall-clock phase of the
    # bf_resolution grid, when the controller started its backfill cycles), not an outcome of the
    # run: read both from the record, as an operator would from the controller's log
    first = min(r["submit"] for r in results)
    sched["clock_origin_s"] = float(meta["t0_epoch"] + first)
    cycles = backfill_cycles(record)
    if cycles:
        sched["bf_last_cycle_s"] = float(min(0.0, math.floor(cycles[0] - int(sched.get("bf_interval_s", 30)) - first)))
    dump = tmp / "sacct.txt"
    dump.write_text(sacct_dump(results, meta["t0_epoch"], json.loads((Path(record) / "workload.json").read_text())))
    swf = tmp / "jobs.swf"
    # SWF field 16 numbers partitions as the slurm.conf lists them (scheduler.partitions' order)
    write_swf(read_sacct(dump, conf.partition_names()), swf)
    cfg = {"platform": platform, "workload": {"path": str(swf)}, "model": {"interference": "none"},
           "scheduler": sched, "seed": 0}
    return cfg, notes


def twin_times(record: str | Path) -> tuple[dict[int, tuple[float, float]], dict[str, Any], list[str]]:
    """slurm_id -> the twin's (start, end) (s from the record's t0), the scheduler section, import notes."""
    from paretosched.api import simulate

    meta, results = load_record(record)
    with tempfile.TemporaryDirectory(prefix="slurm-real-") as tmp:
        cfg, notes = twin_inputs(record, Path(tmp))
        sim = simulate(cfg, seeds=[0], jobs=True)
    # trace import numbers jobs 1..N by (submit, dump line); the dump is in slurm_id order
    order = sorted(results, key=lambda r: (r["submit"], r["slurm_id"]))
    t_first = order[0]["submit"]
    by_swf = {k: r["slurm_id"] for k, r in enumerate(order, start=1)}
    times = {by_swf[int(row.job_id)]: (float(row.start_s) + t_first, float(row.end_s) + t_first)
             for row in sim.jobs.itertuples()}
    return times, cfg["scheduler"], notes


def _kendall(a: list[float], b: list[float]) -> float:
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic)


def size_class(r: dict[str, Any], mode: str) -> str:
    n = r["nodes"] if mode == "nodes" else r["cpus"]
    for lo, hi in ((1, 1), (2, 3), (4, 7), (8, 15), (16, 31), (32, 63), (64, 127)):
        if lo <= n <= hi:
            return f"{lo}" if lo == hi else f"{lo}-{hi}"
    return f"{n}+"


def compare(record: str | Path, twin: tuple[dict[int, tuple[float, float]], dict[str, Any], list[str]] | None = None
            ) -> Agreement:
    """The agreement of the twin with one record (`twin`: what twin_times(record) returned, if at hand)."""
    times, sched, notes = twin if twin is not None else twin_times(record)
    return agreement(record, {k: v[0] for k, v in times.items()}, int(sched.get("bf_interval_s", 30)), notes,
                     "the twin")


def compare_real(record: str | Path, other: str | Path) -> Agreement:
    """Real Slurm against itself: `other`, a second run of the same workload and slurm.conf, in
    the twin's place (what agreement the daemons' timing leaves room for). Jobs are matched by
    their workload id."""
    _, results = load_record(record)
    _, again = load_record(other)
    by_id = {r["id"]: r["start"] for r in again}
    if sorted(by_id) != sorted(r["id"] for r in results):
        raise SystemExit(f"compare.py: {other} is not a run of the workload of {record}")
    starts = {r["slurm_id"]: float(by_id[r["id"]]) for r in results}
    bf = int(_bf_interval(Path(record) / "slurm.conf"))
    return agreement(record, starts, bf, [f"in the twin's place: {Path(other).name}"], Path(other).name)


def _bf_interval(conf: Path) -> int:
    m = re.search(r"bf_interval=(\d+)", conf.read_text())
    return int(m.group(1)) if m else 30


def agreement(record: str | Path, starts: dict[int, float], bf: int, notes: list[str], who: str) -> Agreement:
    """The figures for starts (slurm_id -> s from the record's t0) against the record's real ones."""
    meta, results = load_record(record)
    mode = json.loads((Path(record) / "workload.json").read_text())["mode"]
    diffs = [abs(starts[r["slurm_id"]] - r["start"]) for r in results]
    n = len(results)
    waits_t = [starts[r["slurm_id"]] - r["submit"] for r in results]
    waits_r = [r["start"] - r["submit"] for r in results]
    by: dict[str, list[tuple[float, float]]] = {}
    for r, wt, wr in zip(results, waits_t, waits_r):
        by.setdefault(size_class(r, mode), []).append((wt, wr))
    sizes = {k: (sum(x for x, _ in v) / len(v), sum(y for _, y in v) / len(v), len(v))
             for k, v in sorted(by.items(), key=lambda kv: int(kv[0].split("-")[0].rstrip("+")))}
    cycles = backfill_cycles(record)
    first = ""
    for r in sorted(results, key=lambda r: (r["submit"], r["slurm_id"])):
        t = starts[r["slurm_id"]]
        if abs(t - r["start"]) > 30:
            first = (f"job {r['slurm_id']} ({r['nodes']} nodes, {r['cpus']} CPUs, limit {r['limit_min']} min) "
                     f"submitted at {r['submit']} s: Slurm started it at {r['start']} s ({r['started_by']}, "
                     f"on {r['nodelist']}), {who} at {t:.0f} s")
            break
    return Agreement(
        name=meta["name"], jobs=n,
        within_5s=sum(d <= 5 for d in diffs) / n, within_30s=sum(d <= 30 for d in diffs) / n,
        within_bf=sum(d <= bf for d in diffs) / n, bf_interval_s=bf,
        kendall_tau=_kendall([r["start"] for r in results], [starts[r["slurm_id"]] for r in results]),
        mean_wait_twin_s=sum(waits_t) / n, mean_wait_real_s=sum(waits_r) / n,
        waits_by_size=sizes, first_divergence=first, notes=notes,
        backfill_first_s=cycles[0] if cycles else None,
        backfill_gap_s=statistics.median(b - a for a, b in zip(cycles, cycles[1:])) if len(cycles) > 1 else None,
        other="twin" if who == "the twin" else who)


def report(a: Agreement) -> str:
    out = [f"{a.name}: {a.jobs} jobs",
           f"  starts within 5 s {a.within_5s:.0%}, within 30 s {a.within_30s:.0%}, "
           f"within one bf_interval ({a.bf_interval_s} s) {a.within_bf:.0%}",
           f"  Kendall tau of start order {a.kendall_tau:.3f}",
           f"  mean wait {a.other} / real {a.mean_wait_twin_s:.0f} / {a.mean_wait_real_s:.0f} s "
           f"(ratio {a.wait_ratio:.2f})",
           f"  mean wait by size ({a.other} / real s, jobs): "
           + ", ".join(f"{k}: {t:.0f}/{r:.0f} ({n})" for k, (t, r, n) in a.waits_by_size.items())]
    if a.first_divergence:
        out.append(f"  first start more than 30 s apart: {a.first_divergence}")
    if a.backfill_first_s is not None:
        out.append(f"  Slurm's backfill cycles: the first at {a.backfill_first_s:.2f} s of the record, then every "
                   f"{a.backfill_gap_s:.2f} s (median)")
    seen: dict[str, int] = {}
    for n in a.notes:  # one line per kind of note ("slurm.conf:41: ignored ..." per node line)
        key = re.sub(r"^\S+:\d+: ", "", n)
        seen[key] = seen.get(key, 0) + 1
    out += [f"  note: {k}" + (f" (x{c})" if c > 1 else "") for k, c in seen.items()]
    return "\n".join(out)


def table(rows: list[Agreement]) -> str:
    head = ("| record | jobs | within 5 s | within 30 s | within bf_interval | Kendall tau | mean wait twin / real |\n"
            "|---|---:|---:|---:|---:|---:|---:|")
    body = [f"| `{a.name}` | {a.jobs} | {a.within_5s:.0%} | {a.within_30s:.0%} | {a.within_bf:.0%} "
            f"({a.bf_interval_s} s) | {a.kendall_tau:.3f} | {a.mean_wait_twin_s:.0f} / {a.mean_wait_real_s:.0f} s |"
            for a in rows]
    return "\n".join([head, *body])


def _secs(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()


def backfill_cycles(record: str | Path) -> list[float]:
    """When slurmctld began each backfill cycle, in record seconds (its phase is set by when the
    controller started, not by the workload)."""
    import gzip

    meta, _ = load_record(record)
    out = []
    with gzip.open(Path(record) / "slurmctld.log.gz", "rt", errors="replace") as fh:
        for line in fh:
            if "_attempt_backfill: beginning" in line:
                at = datetime.strptime(line[1:24], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
                out.append(round(at - meta["t0_epoch"], 3))
    return out


def job_log(record: str | Path, slurm_id: int, limit: int = 40) -> list[str]:
    """slurmctld's log lines about one job, each prefixed by its second in the record (t0 = 0):
    its submission, every backfill plan for it (`to start at ...`), its start and end."""
    import gzip

    meta, _ = load_record(record)
    t0 = meta["t0_epoch"]
    pat = re.compile(rf"JobId={slurm_id}(\s|$)")
    out = []
    with gzip.open(Path(record) / "slurmctld.log.gz", "rt", errors="replace") as fh:
        for line in fh:
            if pat.search(line):
                stamp = line[1:line.index("]")]
                at = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
                text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", lambda m: f"{_secs(m.group(0)) - t0:.0f}s",
                              line[line.index("]") + 2:].rstrip())
                out.append(f"{at - t0:8.2f}  {text}")
                if len(out) >= limit:
                    break
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("records", nargs="+", help="record directories written by harness.py")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--table", action="store_true", help="print one markdown table (docs/slurm.md)")
    p.add_argument("--against", help="another record of the same workload and slurm.conf, in the twin's place")
    p.add_argument("--job", type=int, help="print slurmctld's log lines about this Slurm job id (one record)")
    a = p.parse_args(argv)
    if a.job is not None:
        print("\n".join(job_log(a.records[0], a.job)))
        return 0
    if a.against:
        rows = [compare_real(r, a.against) for r in a.records]
    else:
        rows = [compare(r) for r in a.records if (Path(r) / "results.json").exists()]
    if a.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    elif a.table:
        print(table(rows))
    else:
        print("\n".join(report(r) for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
