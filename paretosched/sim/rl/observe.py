"""RL observations (thesis 3.2.3): the vector the agent sees at each decision, built in place.

Observations are fractions in [0, 1]. Requested quantities are scaled by trace limits (the 99th
percentile over the episode's jobs, as HDeepRM). `minimal`: 5 statistics (min, Q1, median, Q3, max)
of requested time, cores, memory and bandwidth over the queue + the queue-change ratio; `small`:
+ free-memory fraction per node and free-bandwidth fraction per processor; `normal`: + per core
speed, power and remaining-time fractions. Per-decision cost is numpy work on cached arrays, with
Python loops only over nodes/processors (small) or running jobs (normal), never over cores.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from paretosched.sim.engine.state import NodeState

_QUANTILES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
N_QUEUE_FEATURES = 4 * len(_QUANTILES) + 1


def observation_size(kind: str, agent: str, n_nodes: int, n_procs: int, n_cores: int) -> int:
    if agent == "tabular":
        return 2
    size = N_QUEUE_FEATURES
    if kind in ("small", "normal"):
        size += n_nodes + n_procs
    if kind == "normal":
        size += 3 * n_cores
    return size


def trace_limits(jobs: list[Any]) -> np.ndarray:
    """99th percentile of requested time, cores, memory and bandwidth per core (1 where all are 0)."""
    if not jobs:
        return np.ones(4)
    a = np.array([(j.req_time, j.size, j.mem, j.bw) for j in jobs], dtype=float)
    lim = np.percentile(a, 99, axis=0)
    return np.where(lim > 0, lim, 1.0)


def _quantile_weights(q: int) -> tuple[np.ndarray, ...]:
    """Rows and weights of numpy's linear quantiles (_QUANTILES) of `q` sorted values."""
    pos = _QUANTILES * (q - 1)
    lo = pos.astype(int)
    hi = np.minimum(lo + 1, q - 1)
    frac = (pos - lo)[:, None]
    return lo, hi, 1.0 - frac, frac


class Observer:
    """Builds observation vectors for one twin (per-platform constants cached at construction)."""

    def __init__(self, twin: Any, kind: str, sensitivity: float, tabular: bool) -> None:
        self.kind = kind
        self.tabular = tabular
        self.sensitivity = sensitivity
        jobs = twin.jobs
        feats = np.array([(j.req_time, j.size, j.mem, j.bw) for j in jobs], dtype=float).reshape(-1, 4)
        self.feats = np.clip(feats / trace_limits(jobs), 0.0, 1.0)  # row = job.seq
        self.prev_q = 0
        self._weights: dict[int, tuple[np.ndarray, ...]] = {}  # short queue length -> quantile rows, weights
        self.nodes = twin.nodes
        self.procs = twin.procs
        self.n_cores = twin.platform.n_cores
        self.inv_mem = np.array([1.0 / n.mem_cap if math.isfinite(n.mem_cap) and n.mem_cap > 0 else 0.0
                                 for n in self.nodes])
        self.finite_mem = self.inv_mem > 0
        self.bw_cap = np.array([p.bw_cap if math.isfinite(p.bw_cap) else 0.0 for p in self.procs])
        self.inv_bw = np.where(self.bw_cap > 0, 1.0 / np.where(self.bw_cap > 0, self.bw_cap, 1.0), 0.0)
        self.inv_mem_l, self.inv_bw_l = self.inv_mem.tolist(), self.inv_bw.tolist()  # fast scalar reads
        # `small`: free memory per node and bandwidth per processor, updated only for the processors
        # and nodes the twin marked changed since the last observation (`NodeState.watchers`)
        # one observation buffer, written in place: the queue statistics and change ratio, then
        # views for the per-node and per-processor fractions (and, `normal`, the per-core block)
        size = observation_size(kind, "mlp", len(self.nodes), len(self.procs), self.n_cores)
        self.buf = np.empty(size if not tabular else N_QUEUE_FEATURES)
        self.stats = self.buf[:N_QUEUE_FEATURES - 1]
        # a one-job queue's statistics are its features repeated (every quantile of one value);
        # the tabular agent sees only the queue length and occupancy
        self.feats5 = np.repeat(self.feats, len(_QUANTILES), axis=1) if not tabular else self.feats
        end = N_QUEUE_FEATURES
        if kind != "minimal" and not tabular:
            self.mem_frac = self.buf[end:end + len(self.nodes)]
            end += len(self.nodes)
            self.bw_frac = self.buf[end:end + len(self.procs)]
            end += len(self.procs)
        else:
            self.mem_frac, self.bw_frac = np.ones(len(self.nodes)), np.ones(len(self.procs))
        self.cores_part = self.buf[end:]
        self.dirty: dict[Any, None] = {}
        if kind != "minimal" and not tabular:
            for node in self.nodes:
                node.watchers.append(self.dirty)
        self._refresh_all()
        if kind == "normal":
            self.core_proc = np.repeat(np.arange(len(self.procs)), [p.ncores for p in self.procs])
            self.first_core = np.array([p.first_core for p in self.procs])
            self.busy_frac = np.array([p.busy_w / p.core_w if p.core_w > 0 else 0.0 for p in self.procs])
            self.p2_frac = np.array([p.p2_w / p.core_w if p.core_w > 0 else 0.0 for p in self.procs])
            self.p3_frac = np.array([p.p3_w / p.core_w if p.core_w > 0 else 0.0 for p in self.procs])

    def __call__(self, twin: Any) -> np.ndarray:
        queue = twin.queue
        q = len(queue)
        if self.tabular:
            return np.array([float(q), 1.0 - twin.free_total / self.n_cores])
        buf = self.buf
        if q == 1:  # the common case: every quantile of one value is that value (same bits)
            self.stats[:] = self.feats5[queue[0].seq]
        else:
            x = self.feats[[j.seq for j in queue]]
            w = self._weights.get(q)
            if w is None:
                w = _quantile_weights(q)
                if q <= 64:  # short queues are the common case; long ones cost their partition anyway
                    self._weights[q] = w
            lo, hi, w_lo, w_hi = w
            if q > 64:
                x = np.partition(x, np.union1d(lo, hi), axis=0)  # only the order statistics we read
            else:
                x.sort(axis=0)
            self.stats[:] = (x[lo] * w_lo + x[hi] * w_hi).ravel(order="F")  # numpy's linear quantiles, 5 x 4
        change = (q - self.prev_q) / max(self.prev_q, 1)
        self.prev_q = q
        buf[N_QUEUE_FEATURES - 1] = min(1.0, max(0.0, 0.5 + change / (2.0 * self.sensitivity)))
        if self.dirty:  # the fractions are views of `buf`
            self._refresh_changed()
        if self.kind == "normal":
            self._cores(twin)
        return buf

    def _refresh_all(self) -> None:
        with np.errstate(invalid="ignore"):  # inf x 0 on nodes without a memory limit, masked just below
            mem = np.array([n.mem_free for n in self.nodes]) * self.inv_mem
        self.mem_frac[:] = np.where(self.finite_mem, np.clip(mem, 0.0, 1.0), 1.0)
        bw = (self.bw_cap - np.array([p.bw_used for p in self.procs])) * self.inv_bw
        self.bw_frac[:] = np.where(self.bw_cap > 0, np.clip(bw, 0.0, 1.0), 1.0)

    def _refresh_changed(self) -> None:
        # gathered in lists and written with one fancy assignment each: numpy scalar writes and
        # min/max calls per processor cost more than the arithmetic
        inv_mem, inv_bw = self.inv_mem_l, self.inv_bw_l
        ni: list[int] = []
        nv: list[float] = []
        pi: list[int] = []
        pv: list[float] = []
        for x in self.dirty:  # processors (bandwidth) and nodes (memory) changed since last time
            if x.__class__ is NodeState:
                inv = inv_mem[x.idx]
                if inv > 0:
                    v = x.mem_free * inv
                    ni.append(x.idx)
                    nv.append(0.0 if v <= 0.0 else 1.0 if v > 1.0 else v)
            else:
                inv = inv_bw[x.idx]
                if inv > 0:
                    v = (x.bw_cap - x.bw_used) * inv
                    pi.append(x.idx)
                    pv.append(0.0 if v <= 0.0 else 1.0 if v > 1.0 else v)
        self.dirty.clear()
        if ni:
            self.mem_frac[ni] = nv
        if pi:
            self.bw_frac[pi] = pv

    def _cores(self, twin: Any) -> None:
        """Per core, into the buffer: speed fraction of peak, power fraction of full, remaining
        fraction of the request."""
        n = self.n_cores
        idx: list[int] = []
        speed: list[float] = []
        rem: list[float] = []
        now = twin.now
        for job in twin.running:
            r = max(0.0, 1.0 - (now - job.start) / job.req_time) if job.req_time > 0 else 0.0
            for g in job.groups:
                k = len(g.cores)
                idx.extend(g.cores)
                speed.extend([g.proc.speed * g.proc.factor / g.proc.gflops] * k)  # the core's own P-state, as HDeepRM
                rem.extend([r] * k)
        procs = self.procs
        busy = np.array([p.busy > 0 for p in procs])
        on = np.array([p.node.power_state == NodeState.ON for p in procs])
        idle_power = np.where(busy, self.p2_frac, self.p3_frac) * on
        power = idle_power[self.core_proc]
        s = np.zeros(n)
        rm = np.zeros(n)
        if idx:
            ii = np.array(idx)
            s[ii] = speed
            rm[ii] = rem
            power[ii] = self.busy_frac[self.core_proc[ii]]
        out = self.cores_part
        np.clip(s, 0.0, 1.0, out=out[:n])
        np.clip(power, 0.0, 1.0, out=out[n:2 * n])
        out[2 * n:] = rm
