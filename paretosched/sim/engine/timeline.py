"""Timelines of one run, on request: power, cores per state, queue length, bandwidth over-use.

The twin calls these hooks only when a timeline was asked for, so the hot path pays one
`is not None` test per change otherwise. Frames are built with pandas, imported lazily.
"""

from __future__ import annotations

from collections.abc import Sequence, Sized
from typing import Any, Protocol

from paretosched.sim.engine.state import NodeState, ProcState

STATES = ("p0", "p1", "p2", "p3", "off", "booting")


def _contribution(p: ProcState) -> tuple[int, int, int, int, int, int]:
    ps = p.node.power_state
    if ps == NodeState.OFF:
        return (0, 0, 0, 0, p.ncores, 0)
    if ps == NodeState.BOOTING:
        return (0, 0, 0, 0, 0, p.ncores)
    if p.busy:
        idle = p.ncores - p.busy
        return (p.busy, 0, idle, 0, 0, 0) if p.factor == 1.0 else (0, p.busy, idle, 0, 0, 0)
    return (0, 0, 0, p.ncores, 0, 0)


class Observed(Protocol):
    """What a timeline reads of the twin (typed here so this module need not import the twin)."""

    @property
    def env(self) -> Any: ...  # simpy.Environment: its `now`

    @property
    def procs(self) -> Sequence[ProcState]: ...

    @property
    def power(self) -> float: ...

    @property
    def queue(self) -> Sized: ...

    @property
    def running(self) -> Sized: ...


class Timeline:
    def __init__(self, twin: Observed) -> None:
        self.twin = twin
        self.counts = [0] * 6
        for p in twin.procs:
            for i, c in enumerate(_contribution(p)):
                self.counts[i] += c
        self.rows: list[tuple[Any, ...]] = []
        self.spans: list[tuple[int, str, float, float]] = []
        self._before: dict[int, tuple[int, ...]] = {}

    def segment(self, t0: float, t1: float) -> None:
        """The state held constant over [t0, t1)."""
        tw = self.twin
        self.rows.append((t0, t1, tw.power, *self.counts, len(tw.queue), len(tw.running)))

    def before(self, p: ProcState) -> None:
        self._before[p.idx] = _contribution(p)

    def after(self, p: ProcState) -> None:
        old = self._before.pop(p.idx)
        new = _contribution(p)
        c = self.counts
        for i in range(6):
            c[i] += new[i] - old[i]

    def factor_change(self, p: ProcState, old: float, new: float) -> None:
        now = self.twin.env.now
        if p.node.power_state == NodeState.ON and p.busy:
            if old == 1.0 and new != 1.0:
                self.counts[0] -= p.busy
                self.counts[1] += p.busy
            elif old != 1.0 and new == 1.0:
                self.counts[1] -= p.busy
                self.counts[0] += p.busy
        if old == 1.0 and new != 1.0:
            p.over_since = now
        elif old != 1.0 and new == 1.0:
            self.spans.append((p.idx, p.ptype, p.over_since, now))

    def frames(self) -> dict[str, Any]:
        """Tidy pandas frames: `timeline` (one row per constant-state interval) and `overuse` spans."""
        import pandas as pd

        cols = ["t_start_s", "t_end_s", "power_w"] + [f"cores_{s}" for s in STATES] + ["queue_len", "running_jobs"]
        tl = pd.DataFrame(self.rows, columns=cols)
        tl["energy_j"] = tl["power_w"] * (tl["t_end_s"] - tl["t_start_s"])
        spans = pd.DataFrame(self.spans, columns=["processor", "processor_type", "start_s", "end_s"])
        return {"timeline": tl, "overuse": spans}
