"""Run one configuration on the twin: `prepare` loads inputs once, `simulate` runs a seed."""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass, field
from typing import Any

from paretosched.config import SimConfig
from paretosched.errors import UserError
from paretosched.sim.engine.metrics import compute_metrics
from paretosched.sim.engine.twin import Twin, collector_paused, make_rng
from paretosched.sim.readers.inputs import trace_path
from paretosched.sim.readers.platform import Platform, fits_factory, load_platform
from paretosched.sim.readers.workload import (
    RawJobs,
    build_jobs,
    raw_from_inline,
    read_swf,
    require_jobs,
    require_runnable,
    short_window_note,
)
from paretosched.sim.schedulers import build_scheduler
from paretosched.sim.seeds import Pcg64, SeedSequence, numpy_generator


@dataclass
class Prepared:
    """Inputs parsed once and reused by every run of the same platform and workload window."""

    platform: Platform
    raw: RawJobs


@dataclass
class RunResult:
    metrics: dict[str, float]
    load: dict[str, Any]
    jobs: list[dict[str, Any]] = field(default_factory=list)
    reservations: dict[int, float] = field(default_factory=dict)
    decisions: int = 0
    energy_unattributed_j: float = 0.0   # idle processors, off and booting nodes (with record_jobs)
    timeline: dict[str, Any] | None = None  # pandas frames `timeline` and `overuse` (with timeline)
    # RL schedulers: per-episode curves (TrainingLog.as_dict(); None with loaded weights) and the
    # evaluation's action counts, under keys `curves` and `eval_action_counts`
    training: dict[str, Any] | None = None


def prepare(cfg: SimConfig) -> Prepared:
    platform = load_platform(cfg.platform)
    wl = cfg.workload
    if wl.jobs is not None:
        raw = raw_from_inline(wl.jobs)
    else:
        raw = require_jobs(read_swf(trace_path(wl.path or ""), wl.first_job, wl.n_jobs), wl.first_job)
    require_runnable(raw, fits_factory(platform))  # seed-independent: simulate and optimise both stop here
    return Prepared(platform, raw)


def window_note(cfg: SimConfig, prep: Prepared) -> str | None:
    """A note for the user when the trace ends before the configured window does."""
    wl = cfg.workload
    return None if wl.jobs is not None else short_window_note(prep.raw, wl.first_job, wl.n_jobs)


def freq_note(cfg: SimConfig, platform: Platform) -> str | None:
    """A note when `scheduler.freq` is below a processor type's lowest P-state (f_min): the twin runs
    that type at f_min, which the user should hear once rather than find in equal numbers."""
    sched = cfg.scheduler
    if sched.kind == "slurm":  # CpuFreqDef=PowerSave means "the lowest P-state": clamped by design
        return None
    low = {name: pt.f_min for name, pt in platform.spec.processor_types.items()
           if name not in sched.freq_by_type and sched.freq < pt.f_min}
    if not low:
        return None
    shown = ", ".join(f"{name} at {f:g}" for name, f in sorted(low.items()))
    return (f"scheduler.freq: {sched.freq:g} is below the lowest P-state (f_min) of platform {platform.spec.name}'s "
            f"processor type(s): clamped, they run at f_min ({shown})")


def require_finite(metrics: dict[str, float], platform: Platform) -> dict[str, float]:
    """`metrics`, or a UserError when one is not finite: a run's numbers are a result or an error,
    never inf or NaN in a result row (an input at the edge of its range can overflow a sum)."""
    bad = [k for k, v in metrics.items() if not math.isfinite(v)]
    if bad:
        raise UserError(f"platform {platform.spec.name}: the simulation gave {bad[0]} = {metrics[bad[0]]} (not finite; "
                        f"{len(bad)} metric(s)): an input of the platform, model or scheduler is outside the range "
                        "the twin computes in")
    return metrics


def simulate(cfg: SimConfig, seed: int | None = None, record_jobs: bool = False,
             prepared: Prepared | None = None, timeline: bool | None = None, process_ends: bool = False) -> RunResult:
    """Run `cfg` with `seed` (default cfg.seed); same inputs, same numbers, bit for bit.

    `process_ends`: the caller's process exits after this run (a `paretosched simulate` command), so
    the run's objects are frozen (gc.freeze) and left to the exit instead of freed: freeing 400,000
    parts one by one and a collector pass over the run cost ~25 ms of a 0.75 s process. Never pass
    it in a process that goes on: the run's memory would stay taken until the process ends."""
    prep = prepared if prepared is not None else prepare(cfg)
    run_seed = cfg.seed if seed is None else seed
    # numpy's SeedSequence and PCG64 in plain Python (sim/seeds.py): a `trace` run never imports numpy
    ss_workload, ss_sched = SeedSequence(run_seed).spawn(2)
    if cfg.workload.seed is not None:
        ss_workload = SeedSequence(cfg.workload.seed)
    platform = prep.platform
    mode = cfg.workload.mode
    rng = Pcg64(ss_workload) if mode == "trace" else numpy_generator(ss_workload)
    with collector_paused():  # (10,000 jobs: a full pass of the collector here cost 20 ms)
        jobs, report = build_jobs(prep.raw, mode, platform.ref_speed, rng, fits_factory(platform))
    want_timeline = cfg.timeline if timeline is None else timeline
    agent, curves = None, None
    if cfg.scheduler.kind == "rl":
        # train (or load) first, from children of the scheduler stream; evaluation keeps the stream itself
        from paretosched.sim.rl.training import agent_for

        agent, curves = agent_for(cfg, prep, ss_sched.numpy())
    # paused from the run until its parts are unlinked (below): re-enabled right after the run, the
    # collector's next pass scanned every part still alive (60 ms for 400,000 parts)
    with collector_paused():
        twin = Twin(platform, jobs, cfg.model, cfg.scheduler, record=record_jobs, timeline=want_timeline)
        sched = build_scheduler(twin, cfg.scheduler, make_rng(ss_sched), agent=agent)
        twin.decide = sched.decide
        twin.run()
        metrics = require_finite(compute_metrics(twin.done, twin.energy, platform.n_cores, twin.boots,
                                                 twin.boot_energy), platform)
        out = RunResult(metrics, report.as_dict(), decisions=twin.decisions)
        if agent is not None:
            out.training = {"curves": curves.as_dict() if curves is not None else None,
                            "eval_action_counts": dict(zip(sched.names, (int(c) for c in sched.counts)))}
        if record_jobs:
            out.jobs = job_records(twin.done)
            out.reservations = dict(twin.reservations)
            out.energy_unattributed_j = twin.unattr_energy
        if twin.timeline is not None:
            out.timeline = twin.timeline.frames()
        if process_ends:
            gc.freeze()  # the collector never scans them again, and nothing frees them before the exit
        else:
            for job in twin.done:  # a job and its parts point at each other: unlinked, they go at once
                job.groups = []     # instead of waiting for a pass of the cyclic collector over all of them
    return out


def job_records(jobs: list[Any]) -> list[dict[str, Any]]:
    """Per-job rows (job_id, submit_s, start_s, end_s, cores, node ids, energy_j), in arrival order."""
    rows = []
    for j in sorted(jobs, key=lambda j: j.seq):
        rows.append({
            "job_id": j.id, "submit_s": j.submit, "start_s": j.start, "end_s": j.end, "cores": j.size,
            "wait_s": j.start - j.submit, "run_s": j.end - j.start,
            "nodes": " ".join(str(n) for n in j.nodes),
            "core_ids": " ".join(str(c) for g in j.groups for c in g.cores),
            "mem_mb_per_core": j.mem, "bw_gbs_per_core": j.bw, "req_time_s": j.req_time,
            "energy_j": j.energy,
        })
    return rows
