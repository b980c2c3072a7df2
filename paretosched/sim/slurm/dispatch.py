"""When the `slurm` kind's main scheduler and backfill cycles run: slurmctld's dispatch latency.

slurmctld does not schedule at the instant a job is submitted or ends. Its background loop
(src/slurmctld/controller.c, `_slurmctld_background`) wakes every second and runs the main
scheduler (`schedule()`, src/slurmctld/job_scheduler.c) when an event asked for one (a submission
or a completion: `queue_job_scheduler`) and at least batch_sched_delay seconds (default 3) have
passed since it last ran. The backfill thread (backfill.c, `backfill_agent`) sleeps bf_interval
after a cycle, then polls every second and runs a cycle at the first poll that finds something
changed since (`_more_work`).

The twin keeps that timing on a tick of `sched_tick_s` seconds of its own clock: after an event at
t, the main scheduler runs at the first tick after t that is batch_sched_delay or more after its
last run, and a backfill cycle at the first tick after t that is bf_interval or more after the
last cycle. At a tick where only the backfill cycle is due, the cycle walks the queue from its
highest-priority job, as Slurm's does. A decision asked for at another instant does nothing but
ask for one at the next due tick. `sched_tick_s: 0` turns this off: both run at the event itself
(the twin before version 10).
"""

from __future__ import annotations

import math
from typing import Any


class Dispatch:
    def __init__(self, spec: Any, backfill: bool) -> None:
        self.tick = spec.sched_tick_s
        self.delay = spec.batch_sched_delay_s
        self.interval = spec.bf_interval_s
        self.backfill = backfill
        self.last_main = -math.inf
        # the backfill thread's cycles keep their phase from the controller's start while there is work:
        # bf_last_cycle_s (the twin's clock, before its 0) is the last cycle before the trace begins
        self.last_bf = -math.inf if spec.bf_last_cycle_s is None else spec.bf_last_cycle_s
        self.main_at: float | None = None  # when the main scheduler is due (an event asked), else None
        self.bf_at: float | None = None
        self.woken = -1.0  # the instant of the last wake this object asked for
        self.wakes: set[float] = set()
        self.seen: tuple[int, int] = (-1, -1)

    @property
    def on(self) -> bool:
        return self.tick > 0

    def due(self, twin: Any, booting: int) -> tuple[bool, bool]:
        """(main scheduler, backfill cycle) to run at this decision; asks for the next due tick."""
        now = twin.now
        # an event: a submission or a completion changes these counts; any decision that is not one
        # of our own wakes (power saving asks for decisions too) counts as one
        seen = (len(twin.done), len(twin.done) + len(twin.running) + len(twin.queue) + booting)
        if seen != self.seen or now != self.woken:
            tick = (math.floor(now / self.tick) + 1) * self.tick  # the first tick after the event
            if self.main_at is None:
                self.main_at = max(tick, self.last_main + self.delay)
            if self.bf_at is None and self.backfill:
                self.bf_at = max(tick, self.last_bf + self.interval)
        self.seen = seen
        run_main = self.main_at is not None and now >= self.main_at
        run_bf = self.bf_at is not None and now >= self.bf_at
        if run_main:
            self.main_at, self.last_main = None, now
        if run_bf:
            self.bf_at, self.last_bf = None, now
        for t in (self.main_at, self.bf_at):
            if t is not None and t not in self.wakes:
                self.wakes.add(t)
                ev = twin.env.timeout(t - now)
                ev.callbacks.append(lambda _ev, t=t: self._wake(twin, t))
        return run_main, run_bf

    def _wake(self, twin: Any, t: float) -> None:
        self.wakes.discard(t)
        if not twin.queue:  # nothing pending: Slurm runs it and finds nothing to do
            if self.main_at is not None and t >= self.main_at:
                self.main_at, self.last_main = None, t
            if self.bf_at is not None and t >= self.bf_at:
                self.bf_at, self.last_bf = None, t
            return
        self.woken = t
        twin.request_decision()
