"""The `slurm` kind's partitions: the nodes each job may run on and the PriorityTier of its queue.

A job's partition is SWF field 16: the partition of that name when the trace's header names it
(`; Partitions: 1=low 2=high`, as `trace import` writes), else the 1-based position of a partition
in `scheduler.partitions` (-1 or 0: the Default partition, else the first). What Slurm does with them (22.05):
- the queue is sorted by the partition's PriorityTier first (higher first), then by job priority,
  then by submission (job_scheduler.c `sort_job_queue2`, used by the main scheduler and by
  backfill.c `_attempt_backfill` alike);
- the main scheduler (job_scheduler.c `_schedule`), at a job that does not fit, stops scheduling
  that partition and takes its nodes out of `avail_node_bitmap` for the rest of the pass ("do not
  schedule more jobs in this partition or on nodes in this partition"), then goes on with the
  jobs of other partitions;
- backfill plans each job on its partition's nodes (`_attempt_backfill` ANDs the partition's
  node_bitmap into the job's available nodes); reservations are node-wide, so a node shared by
  two partitions is held for both.
With no partitions, or partitions that all hold every node at one tier, this is one queue over all
nodes, and `Partitions.of` returns None: the kind then schedules exactly as without partitions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from paretosched.errors import UserError
from paretosched.sim.readers.slurm.hostlist import expand
from paretosched.sim.readers.slurm.platform_import import node_names


class Partitions:
    def __init__(self, specs: list[Any], twin: Any) -> None:
        n_nodes = len(twin.nodes)
        self.names = [p.name for p in specs]
        self.tiers = [p.priority_tier for p in specs]
        # priority_multifactor.c: the partition factor is PriorityJobFactor / the largest of all partitions
        top = max(p.priority_job_factor for p in specs)
        self.norm = [p.priority_job_factor / top if top > 0 else 0.0 for p in specs]
        defaults = [k for k, p in enumerate(specs) if p.default]
        if len(defaults) > 1:
            raise UserError(f"scheduler.partitions: {len(defaults)} partitions are default "
                            f"({', '.join(self.names[k] for k in defaults)}); Slurm takes one")
        self.default = defaults[0] if defaults else 0
        names = node_names(twin.platform.spec)
        index = {n: i for i, n in enumerate(names or [])}
        self.masks: list[np.ndarray] = []
        for k, p in enumerate(specs):
            mask = np.zeros(n_nodes, dtype=bool)
            if p.nodes.strip().upper() == "ALL":
                mask[:] = True
            else:
                where = f"scheduler.partitions[{k}] ({p.name}).nodes"
                if names is None:
                    raise UserError(f"{where}: platform {twin.platform.spec.name} names no nodes (clusters named "
                                    "by hostlists, as `platform import` writes them); use ALL")
                try:
                    listed = expand(p.nodes)
                except ValueError as exc:
                    raise UserError(f"{where}: {exc}") from None
                unknown = [n for n in listed if n not in index]
                if unknown:
                    raise UserError(f"{where}: node {unknown[0]} is not a node of platform {twin.platform.spec.name}")
                mask[[index[n] for n in listed]] = True
            self.masks.append(mask)
        self.nodes = twin.nodes
        self.cores = [sum(n.ncores for n in twin.nodes if m[n.idx]) for m in self.masks]
        # one factor for all adds the same integer to every priority: the order stays
        self.trivial = all(m.all() for m in self.masks) and len(set(self.tiers)) <= 1 and len(set(self.norm)) <= 1

    def index(self, job: Any) -> int:
        """The job's partition (0-based); UserError for a number `scheduler.partitions` has no entry for."""
        k = job.partition
        if k <= 0:
            return self.default
        if job.partition_name:  # named by the trace: matched by name, whatever order numbered it
            if job.partition_name not in self.names:
                raise UserError(f"workload job {job.id}: partition {job.partition_name!r} (SWF field 16 = {k}, "
                                f"named by the trace's '; Partitions:' header) is not in scheduler.partitions "
                                f"({', '.join(self.names)})")
            return self.names.index(job.partition_name)
        if k > len(self.names):
            raise UserError(f"workload job {job.id}: SWF field 16 (partition) is {k}, but scheduler.partitions "
                            f"has {len(self.names)} ({', '.join(self.names)})")
        return k - 1

    def check(self, jobs: list[Any]) -> list[int]:
        """Every job's partition, checking that the job fits in it (else it would wait for ever)."""
        out = []
        for job in jobs:
            k = self.index(job)
            room = self.cores[k]
            if job.mem > 0:  # cores whose memory a node of the partition can give the job
                room = sum(n.ncores if math.isinf(n.mem_cap) else min(n.ncores, int(n.mem_cap // job.mem))
                           for n in self.nodes if self.masks[k][n.idx])
            if job.size > room:
                raise UserError(f"workload job {job.id}: {job.size} cores ({job.mem:g} MB each), but partition "
                                f"{self.names[k]} (scheduler.partitions[{k}]) holds {room} such cores")
            out.append(k)
        return out

    @staticmethod
    def of(specs: list[Any], twin: Any) -> tuple[Partitions | None, dict[Any, int]]:
        """The partitions and each job's partition; (None, {}) when they change nothing."""
        if not specs:
            return None, {}
        parts = Partitions(specs, twin)
        of_job = dict(zip(twin.jobs, parts.check(twin.jobs)))
        return (None, {}) if parts.trivial else (parts, of_job)
